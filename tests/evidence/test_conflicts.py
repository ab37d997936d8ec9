"""Knowledge-base conflicts, the pure detector: which paragraph pairs disagree, and how."""

from __future__ import annotations

from time import monotonic

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence import conflicts
from evidence.conflicts import (
    Budget,
    Disagreement,
    Passage,
    all_disagreements,
    compare,
    disagreements,
    each_disagreement,
)
from tests.evidence.memo import memo_paragraphs

REMOTE_3 = "Employees may request to work remotely up to 3 days per week."
REMOTE_2 = "Remote work: employees may work remotely up to 2 days per week."


def _p(key: int, text: str, *, document: int | None = None, version: int = 1) -> Passage:
    return Passage(
        key=key, document=key if document is None else document, version=version, text=text
    )


@pytest.mark.parametrize(
    ("one", "two", "words"),
    [
        (REMOTE_3, REMOTE_2, ("3 days",)),
        (
            "Hotel costs are reimbursed up to $200 per night.",
            "The nightly hotel limit is $150 per night for reimbursed costs.",
            ("$200",),
        ),
        (
            "出張の宿泊費は1泊2万円まで精算できます。",
            "出張の宿泊費の精算は1泊1万5千円までです。",
            None,
        ),
    ],
)
def test_another_value_for_the_same_quantity_is_a_hard_conflict(
    one: str, two: str, words: tuple[str, ...] | None
) -> None:
    found = compare(_p(1, one), _p(2, two))
    assert found is not None
    assert found.kind == "hard"
    assert found.reason.startswith("the values disagree")
    if words:
        assert found.words[: len(words)] == words


@pytest.mark.parametrize(
    ("one", "two"),
    [
        (
            "Any excess hotel cost is paid by the employee.",
            "The company pays any excess hotel cost.",
        ),
        ("宿泊費の上限を超えた分は自己負担とします。", "宿泊費の超過分は会社が負担します。"),
        ("Employees may work remotely on Fridays.", "Employees may not work remotely on Fridays."),
    ],
)
def test_the_other_party_or_a_negation_is_a_hard_conflict(one: str, two: str) -> None:
    found = compare(_p(1, one), _p(2, two))
    assert found is not None
    assert found.kind == "hard"
    assert found.reason.startswith("they say the opposite")
    assert found.words


def test_another_force_on_the_same_subject_is_soft() -> None:
    found = compare(
        _p(1, "All employees must complete security training every year."),
        _p(2, "Employees may complete security training every year."),
    )
    assert found is not None
    assert found.kind == "soft"
    assert "obligation against permission" in found.reason


def test_a_later_version_that_changes_a_value_is_temporal_and_names_both_versions() -> None:
    old = _p(1, REMOTE_3 + " Requests are approved by the line manager.", document=7, version=1)
    new = _p(
        2,
        REMOTE_3.replace("3", "2") + " Requests are approved by the line manager.",
        document=7,
        version=2,
    )
    found = compare(old, new)
    assert found is not None
    assert (found.kind, found.first, found.second) == ("temporal", 1, 2)
    assert "version 2 changes what version 1 said" in found.reason


def test_a_later_version_that_only_rewords_is_no_conflict() -> None:
    old = _p(1, "All employees must complete security training every year.", document=7)
    new = _p(2, "Employees may complete security training every year.", document=7, version=2)
    assert compare(old, new) is None


@pytest.mark.parametrize(
    ("one", "two"),
    [
        (REMOTE_2, "Employees may request to work remotely up to 2 days per week."),  # agree
        (REMOTE_3, "Expense reports are due within 30 days of travel."),  # another subject
        ("The cafeteria opens at 8.", "Expense reports are due within 30 days."),
    ],
)
def test_agreeing_or_unrelated_paragraphs_are_no_conflict(one: str, two: str) -> None:
    assert compare(_p(1, one), _p(2, two)) is None


def test_a_new_paragraph_is_compared_with_the_existing_ones_and_the_other_new_ones() -> None:
    existing = [_p(1, REMOTE_3), _p(2, "Expense reports are due within 30 days of travel.")]
    new = [_p(3, REMOTE_2), _p(4, "Expense reports are due within 45 days of travel.")]
    found = {(d.first, d.second, d.kind) for d in disagreements(new, existing)}
    assert found == {(1, 3, "hard"), (2, 4, "hard")}
    # Two existing paragraphs are not compared with each other on ingest: the nightly scan does.
    assert disagreements([], existing) == []
    assert {(d.first, d.second) for d in all_disagreements(existing + new)} == {(1, 3), (2, 4)}


_SENTENCES = st.sampled_from(
    [
        REMOTE_3,
        REMOTE_2,
        "Any excess hotel cost is paid by the employee.",
        "The company pays any excess hotel cost.",
        "Expense reports are due within 30 days of travel.",
        "All employees must complete security training every year.",
        "宿泊費の超過分は会社が負担します。",
    ]
)


@settings(max_examples=60, deadline=None)
@given(one=_SENTENCES, two=_SENTENCES)
def test_between_documents_a_conflict_is_found_whichever_side_comes_first(
    one: str, two: str
) -> None:
    there = compare(_p(1, one), _p(2, two))
    back = compare(_p(2, two), _p(1, one))
    assert (there is None) == (back is None)
    if there and back:
        assert there.kind == back.kind
    if one == two:
        assert there is None


# --- bounded work: the 43,687-paragraph memo of issue 28 ---------------------------------------


def _version(texts: list[str], *, document: int, version: int, first_key: int) -> list[Passage]:
    return [
        Passage(key=first_key + n, document=document, version=version, text=text)
        for n, text in enumerate(texts)
    ]


def _counting_compare(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    judged: list[tuple[int, int]] = []
    real = conflicts.compare

    def counted(older: Passage, newer: Passage) -> Disagreement | None:
        judged.append((older.key, newer.key))
        return real(older, newer)

    monkeypatch.setattr(conflicts, "compare", counted)
    return judged


def test_the_paragraphs_of_one_version_are_not_judged_against_each_other(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a long memo whose paragraphs repeat their subjects with other numbers
    memo = _version(memo_paragraphs(3_000), document=1, version=1, first_key=0)
    judged = _counting_compare(monkeypatch)

    # when it is scanned on ingest into an empty zone, and as the whole zone at night
    # then no pair of its own paragraphs costs the rules anything
    assert disagreements(memo, []) == []
    assert all_disagreements(memo) == []
    assert judged == []


def test_a_new_version_of_a_long_memo_judges_a_few_candidates_per_paragraph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a memo and a new version of it that states the same subjects with other numbers
    old = _version(memo_paragraphs(2_000, seed=1), document=1, version=1, first_key=0)
    new = _version(memo_paragraphs(2_000, seed=2), document=1, version=2, first_key=10_000)
    judged = _counting_compare(monkeypatch)

    # when the new version is scanned
    found = disagreements(new, old)

    # then each new paragraph was judged against at most CANDIDATES old ones, each pair once,
    # and the changed values were found as temporal conflicts, old side first
    assert len(judged) <= conflicts.CANDIDATES * len(new)
    assert len(set(judged)) == len(judged)
    assert found
    assert {d.kind for d in found} == {"temporal"}
    assert all(d.first < 10_000 <= d.second for d in found)


def test_a_scan_stops_at_its_budget_of_pairs_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _version(memo_paragraphs(500, seed=1), document=1, version=1, first_key=0)
    new = _version(memo_paragraphs(500, seed=2), document=2, version=1, first_key=10_000)
    judged = _counting_compare(monkeypatch)

    budget = Budget(comparisons=100)
    list(each_disagreement(new, old, budget))

    assert len(judged) == 100
    assert budget.cut


def test_a_scan_stops_at_its_deadline_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _version(memo_paragraphs(500, seed=1), document=1, version=1, first_key=0)
    new = _version(memo_paragraphs(500, seed=2), document=2, version=1, first_key=10_000)
    judged = _counting_compare(monkeypatch)

    budget = Budget(deadline=monotonic() - 1)  # passed before the scan starts
    assert disagreements(new, old, budget) == []

    assert judged == []
    assert budget.cut
