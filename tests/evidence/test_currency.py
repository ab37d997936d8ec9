"""Currency and authority: a claim from a superseded version is checked against the current
version (still says it, says otherwise, says nothing), and which kinds and statuses of source
may carry an answer out without a person."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from coordinates.policy import SYSTEM_DEFAULT, PolicyValues
from evidence import reasons as why
from evidence.currency import (
    SILENT,
    CurrentCheck,
    check_current,
    current_of,
    current_reason,
    may_release,
    release_reason,
)

V1 = (
    "Employees may request to work remotely up to 3 days per week. Requests must be approved "
    "by the line manager.\n\n"
    "Employees working from abroad must register with the HR department in advance."
)
V2 = (
    "Employees may request to work remotely up to 2 days per week. Requests must be approved "
    "by the line manager.\n\n"
    "The company provides a laptop and a headset."
)
THREE_DAYS = "Employees may request to work remotely up to 3 days per week."
UNCHANGED = "Requests must be approved by the line manager."
REMOVED = "Employees working from abroad must register with the HR department in advance."


def _paragraphs(text: str) -> list[str]:
    return text.split("\n\n")


def _stand_in(template: str) -> str:
    return "<" + template + ">"


# --- may the source carry an answer out without a person -----------------------------------


@pytest.mark.parametrize(
    ("kind", "status", "released"),
    [
        ("policy", "approved", True),
        ("contract", "approved", True),
        ("report", "approved", True),
        ("policy", "draft", False),
        ("policy", "archived", False),
        ("memo", "approved", False),
        ("email", "approved", False),
        ("minutes", "approved", False),
        ("email", "draft", False),
    ],
)
def test_by_default_only_approved_policies_contracts_and_reports_release(
    kind: str, status: str, released: bool
) -> None:
    assert may_release(kind, status, SYSTEM_DEFAULT) is released


def test_a_zone_that_lists_minutes_and_drafts_releases_on_them() -> None:
    values = PolicyValues(
        release_kinds=("policy", "minutes"), release_statuses=("approved", "draft")
    )
    assert may_release("minutes", "draft", values)
    assert not may_release("contract", "approved", values)  # the zone's list replaced the default


def test_the_reason_a_source_goes_to_a_person_is_made_from_a_template() -> None:
    assert release_reason("policy", "approved", "Remote Work Policy", SYSTEM_DEFAULT) is None
    draft = release_reason("policy", "draft", "Remote Work Policy", SYSTEM_DEFAULT)
    assert draft == why.say(why.DRAFT_MAY_NOT_RELEASE, title="Remote Work Policy", kind="policy")
    memo = release_reason("memo", "approved", "Office move", SYSTEM_DEFAULT)
    assert memo == why.say(why.APPROVED_MAY_NOT_RELEASE, title="Office move", kind="memo")
    archived = release_reason("report", "archived", "Q3", SYSTEM_DEFAULT)
    assert archived == why.say(why.ARCHIVED_MAY_NOT_RELEASE, title="Q3", kind="report")
    # a status the templates do not name still gets a sentence
    other = release_reason("policy", "pending", "X", SYSTEM_DEFAULT)
    assert other == why.say(why.SOURCE_MAY_NOT_RELEASE, title="X", kind="policy", status="pending")
    for text in (draft, memo, archived, other):
        assert text is not None
        assert why.localise(text, _stand_in) != text, text


# --- does the current version still say it --------------------------------------------------


def test_a_number_the_current_version_changed_contradicts_it() -> None:
    check = check_current(THREE_DAYS, _paragraphs(V2))
    assert check.contradicts
    assert check.agrees is False
    assert check.paragraph == 0
    assert check.span == "Employees may request to work remotely up to 2 days per week."
    assert check.start is not None
    assert check.end is not None
    assert _paragraphs(V2)[check.paragraph][check.start : check.end] == check.span


def test_a_sentence_both_versions_hold_agrees() -> None:
    check = check_current(UNCHANGED, _paragraphs(V2))
    assert check.agrees is True
    assert not check.contradicts
    assert check.span == UNCHANGED


def test_a_sentence_the_current_version_dropped_is_neither() -> None:
    check = check_current(REMOVED, _paragraphs(V2))
    assert check == SILENT
    assert check.agrees is None
    assert not check.contradicts
    assert check.paragraph is None


def test_a_reversal_in_the_current_version_contradicts_it() -> None:
    check = check_current("Employees may not request to work remotely.", _paragraphs(V2))
    assert check.contradicts


def test_an_unrelated_paragraph_with_another_number_is_no_contradiction() -> None:
    check = check_current(THREE_DAYS, ["The canteen opens at 2 pm on 5 days per week."])
    assert not check.contradicts
    assert check.agrees is None


def test_japanese_a_changed_number_contradicts_and_an_unchanged_sentence_agrees() -> None:
    current = ["在宅勤務は週2日まで申請できる。申請は上長の承認が必要である。"]
    changed = check_current("在宅勤務は週3日まで申請できる。", current)
    assert changed.contradicts
    assert changed.span == "在宅勤務は週2日まで申請できる。"
    same = check_current("申請は上長の承認が必要である。", current)
    assert same.agrees is True
    assert not same.contradicts
    gone = check_current("海外から勤務する者は事前に人事部へ届け出なければならない。", current)
    assert gone.agrees is None


def test_the_reasons_of_a_check_are_made_from_the_templates() -> None:
    contradicts = check_current(THREE_DAYS, _paragraphs(V2))
    dated = current_reason(
        contradicts, current=2, title="Remote Work Policy", effective=date(2026, 11, 1)
    )
    assert dated == (
        "version 2 of Remote Work Policy, in force from 2026-11-01, says otherwise: "
        "'Employees may request to work remotely up to 2 days per week.'"
    )
    undated = current_reason(contradicts, current=2, title="Remote Work Policy", effective=None)
    assert undated == why.say(
        why.CURRENT_CONTRADICTS_UNDATED,
        current=2,
        title="Remote Work Policy",
        span=contradicts.span,
    )
    agrees = current_reason(
        check_current(UNCHANGED, _paragraphs(V2)),
        current=2,
        title="Remote Work Policy",
        effective=None,
    )
    assert agrees == "the current version 2 of Remote Work Policy says the same"
    silent = current_reason(SILENT, current=2, title="Remote Work Policy", effective=None)
    assert silent == why.say(why.CURRENT_SILENT, current=2, title="Remote Work Policy")
    # each comes back from its template (the stand-in translation wraps the template)
    for text in (dated, undated, agrees, silent):
        assert why.localise(text, _stand_in) == f"<{text}>"


def test_a_check_is_a_plain_value() -> None:
    assert CurrentCheck(agrees=None, contradicts=False) == SILENT


# --- the current versions, read from the database --------------------------------------------


@pytest.mark.django_db
def test_the_current_version_of_a_superseded_one_comes_with_its_paragraphs(
    ingest: Callable[..., Any], django_assert_num_queries: Any
) -> None:
    # given version 1 of the Remote Work Policy, replaced by version 2 from 2026-11-01
    first = ingest(V1, title="Remote Work Policy", key="remote-work").version
    second = ingest(
        V2, title="Remote Work Policy", key="remote-work", effective_date=date(2026, 11, 1)
    ).version
    other = ingest("Trips over 500,000 yen require approval.", title="Travel", key="travel")
    first.refresh_from_db()
    assert first.is_superseded
    # when the current versions of the cited ones are read (one current version among them)
    with django_assert_num_queries(2):
        found = current_of([first, other.version])
    # then only the superseded one's document is there, with version 2 and its paragraphs
    assert set(found) == {first.document_id}
    version, paragraphs = found[first.document_id]
    assert version.pk == second.pk
    assert version.effective_date == date(2026, 11, 1)
    assert [p.number for p in paragraphs] == sorted(p.number for p in paragraphs)
    assert [p.text for p in paragraphs] == _paragraphs(V2)
    assert all("embedding" in p.get_deferred_fields() for p in paragraphs)
    # and the claim from version 1 contradicts it, the unchanged one agrees
    texts = [p.text for p in paragraphs]
    assert check_current(THREE_DAYS, texts).contradicts
    assert check_current(UNCHANGED, texts).agrees is True
    assert check_current(REMOVED, texts).agrees is None


@pytest.mark.django_db
def test_many_documents_are_read_in_two_queries(
    ingest: Callable[..., Any], django_assert_num_queries: Any
) -> None:
    old = []
    for k in range(3):
        old.append(ingest(V1, title=f"Policy {k}", key=f"p{k}").version)
        ingest(V2, title=f"Policy {k}", key=f"p{k}")
    for version in old:
        version.refresh_from_db()
    with django_assert_num_queries(2):
        found = current_of(old)
    assert sorted(found) == sorted(v.document_id for v in old)
    assert all(version.version == 2 for version, _ in found.values())
    with django_assert_num_queries(0):
        assert current_of([]) == {}
