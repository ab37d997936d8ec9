"""Current and authoritative evidence (issue 17, point 4): a claim resting on a superseded
version is read against the current one, and an answer resting only on sources the zone
does not let release alone (by default drafts, memos, emails) waits for a person. Both
were released before (flagged and completed)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from decisions.models import Decision
from evidence.models import Paragraph
from tests.decisions.conftest import cite

pytestmark = pytest.mark.django_db

V1 = (
    "# Remote work\n\n"
    "Employees may request to work remotely up to 3 days per week.\n\n"
    "Requests for remote work are approved by the line manager."
)
V2 = V1.replace("3 days", "2 days")
DAYS = "Employees may request to work remotely up to 3 days per week."
MANAGER = "Requests for remote work are approved by the line manager."
ASKED_DAYS = "How many days per week may employees work remotely?"
ASKED_WHO = "Who approves requests for remote work?"
RELEASED = ("auto", "flagged")


@pytest.fixture
def superseded(ingest: Callable[..., Any]) -> dict[str, Paragraph]:
    """Version 1 of the policy, then version 2 (effective 2026-11-01) that halves the days."""
    ingest(V1, title="Remote Work Policy", key="remote", effective_date=date(2026, 1, 1))
    first = {
        "days": Paragraph.objects.get(text=DAYS),
        "manager": Paragraph.objects.get(text=MANAGER, version__version=1),
    }
    ingest(V2, title="Remote Work Policy", key="remote", effective_date=date(2026, 11, 1))
    return first


def _report(done: Any) -> Any:
    return Decision.objects.get(pk=done.json()["id"]).report


def _cite_v1(paragraph: Paragraph) -> dict[str, Any]:
    return cite(paragraph, version=1)


def test_an_outdated_answer_goes_to_a_person_with_both_versions_shown(
    superseded: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    done = submit(
        [{"text": DAYS, "citations": [_cite_v1(superseded["days"])]}], question=ASKED_DAYS
    )
    report = _report(done)
    assert report.gate == "required"
    assert done.json()["state"] == "approval_required"
    (item,) = report.body["claims"][0]["evidence"]
    assert item["version"] == 1
    assert item["superseded"] is True
    assert item["span"] == DAYS  # what version 1 says ...
    current = item["current"]  # ... and what version 2 says
    assert (current["version"], current["effective_date"]) == (2, "2026-11-01")
    assert current["span"] == DAYS.replace("3 days", "2 days")
    assert current["contradicts"] is True
    (reason,) = report.body["at_least"]["reasons"]
    assert reason.startswith("version 2 of Remote Work Policy, in force from 2026-11-01")
    assert "2 days per week" in reason
    assert reason in item["reasons"]


def test_an_unchanged_sentence_of_an_old_version_points_to_the_current_one(
    superseded: dict[str, Paragraph], submit: Callable[..., Any]
) -> None:
    report = _report(
        submit(
            [{"text": MANAGER, "citations": [_cite_v1(superseded["manager"])]}],
            question=ASKED_WHO,
        )
    )
    (item,) = report.body["claims"][0]["evidence"]
    assert item["current"]["agrees"] is True
    assert item["current"]["version"] == 2
    assert item["current"]["span"] == MANAGER
    assert "the current version 2 of Remote Work Policy says the same" in item["reasons"]
    assert report.body["at_least"]["gate"] == "auto"  # nothing held back for currency


def test_an_answer_resting_only_on_a_draft_memo_waits_for_a_person(
    ingest: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    ingest(
        "# Memo\n\nEmployees may request to work remotely up to 3 days per week.",
        title="Remote work memo",
        key="memo",
        kind="memo",
        status="draft",
    )
    memo = Paragraph.objects.get(text=DAYS)
    done = submit([{"text": DAYS, "citations": [cite(memo)]}], question=ASKED_DAYS)
    report = _report(done)
    assert report.gate == "required"
    (reason,) = report.body["at_least"]["reasons"]
    assert "Remote work memo" in reason
    assert "draft" in reason


def test_an_approved_policy_beside_the_memo_releases_it(
    ingest: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    ingest("# Memo\n\n" + DAYS, title="Remote work memo", key="memo", kind="memo")
    ingest("# Policy\n\n" + DAYS, title="Remote Work Policy", key="remote")
    cited = [cite(p) for p in Paragraph.objects.filter(text=DAYS)]
    report = _report(submit([{"text": DAYS, "citations": cited}], question=ASKED_DAYS))
    assert report.body["at_least"]["reasons"] == []
    assert report.gate in RELEASED


def test_a_zone_that_lets_memos_release_alone_releases_one(
    ingest: Callable[..., Any], submit: Callable[..., Any], set_policy: Callable[..., Any]
) -> None:
    set_policy(release_kinds=["policy", "memo"])
    ingest("# Memo\n\n" + DAYS, title="Remote work memo", key="memo", kind="memo")
    memo = Paragraph.objects.get(text=DAYS)
    report = _report(submit([{"text": DAYS, "citations": [cite(memo)]}], question=ASKED_DAYS))
    assert report.policy["release_kinds"] == ["memo", "policy"]
    assert report.body["at_least"]["reasons"] == []
    assert report.gate in RELEASED


def test_a_planet_policy_is_cited_from_a_zone_beneath_and_releases_the_answer(
    ingest: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    ingest(V1, zone="G1.U1.P1", title="Remote Work Policy", key="remote")
    planet = Paragraph.objects.get(text=DAYS)
    assert planet.zone == "G1.U1.P1"
    report = _report(submit([{"text": DAYS, "citations": [cite(planet)]}], question=ASKED_DAYS))
    (item,) = report.body["claims"][0]["evidence"]
    assert item["fabricated"] is False
    assert item["supported"] is True
    assert report.gate in RELEASED


def test_an_outdated_claim_beside_the_answer_holds_nothing_back(
    superseded: dict[str, Paragraph], ingest: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    ingest("# Travel\n\nTravel needs a manager's approval.", title="Travel policy", key="t")
    travel = Paragraph.objects.get(text="Travel needs a manager's approval.")
    report = _report(
        submit(
            [
                {"text": "Travel needs a manager's approval.", "citations": [cite(travel)]},
                {"text": DAYS, "citations": [_cite_v1(superseded["days"])]},
            ],
            question="Does travel need approval?",
            answer="Travel needs a manager's approval.",
        )
    )
    assert report.body["claims"][1]["in_answer"] is False
    assert report.body["at_least"]["reasons"] == []
