"""Issue 29 (3, 4, 5, 6, 11): the reviewer's pages tell the truth and default to the safe
choice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from coordinates.models import Role
from decisions.models import Decision, State
from tests.decisions.conftest import GOOD, cite

pytestmark = pytest.mark.django_db


def login(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def held_by_source(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]
) -> Callable[..., int]:
    """Submit answers whose sufficiency passes τ but whose only source is a kind the zone does
    not let release an answer alone: they wait for a person for that reason alone."""
    set_policy(tau=0.05, delta=0.02, refusal_floor=0.0, release_kinds=["contract"])

    def run(claims: int = 1) -> int:
        # distinct claims (a repeated one is refused), each still resting on the policy alone
        texts = [GOOD + "." * k for k in range(claims)]
        body = submit([{"text": t, "citations": [cite(policy_doc)]} for t in texts]).json()
        assert body["state"] == "approval_required", body
        assert body["sufficiency"] >= 0.05
        return int(body["id"])

    return run


def test_the_queue_gives_the_real_reason_a_sufficient_answer_waits(
    held_by_source: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given an answer above τ that rests only on a policy, which the zone releases with a person
    decision_id = held_by_source()
    reviewer = login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    # when the reviewer opens the queue
    page = reviewer.get("/queue/").content.decode()
    # then its row names the source the zone does not release alone, not a contradiction
    assert f'data-id="{decision_id}"' in page
    assert "Travel policy is an approved policy: in this zone an answer resting on it" in page
    assert "contradicts itself" not in page


def test_the_why_banner_says_a_reason_found_for_every_claim_once(
    held_by_source: Callable[..., int], person: Callable[..., Any]
) -> None:
    # given a 41-claim answer, every claim resting on the same policy the zone holds back
    decision_id = held_by_source(claims=41)
    reviewer = login(person("fin", Role.REVIEWER, "G1.U1.P1"))
    # when the reviewer opens it
    page = reviewer.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then the banner names the source once, and stays a sentence, not a page
    why = page.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert why.count("Travel policy is an approved policy") == 1
    assert len(why) < 600


def test_the_why_banner_counts_unverified_claims_instead_of_quoting_each() -> None:
    from gates.presenters import explanation

    claims = [
        {"kind": "factual", "supported": True, "verdict": "unverified", "sufficiency": 0.9}
        for _ in range(3)
    ]
    reasons = [
        "not verified: the cited evidence does not say this in so many words, a person "
        f"decides: claim number {k}"
        for k in range(3)
    ]
    body = {"claims": claims, "contradictions": [], "at_least": {"reasons": reasons}}
    sentence = explanation("required", body, {"tau": 0.5})
    assert "claims 1, 2, 3 are not verified by their evidence" in sentence
    assert "claim number" not in sentence


def test_a_completed_decision_says_who_approved_it_and_counts_down_nothing(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # given a decision a person had to decide, approved by ann through the page
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    with django_capture_on_commit_callbacks(execute=True):
        ann.post(f"/queue/decisions/{decision_id}/claim/")
        ann.post(f"/queue/decisions/{decision_id}/approve/", {"reason": "checked"})
    assert Decision.objects.get(pk=decision_id).state == State.COMPLETED
    # when another reviewer opens it
    page = login(person("bo", Role.REVIEWER, "G1.U1.P1"))
    html = page.get(f"/queue/decisions/{decision_id}/").content.decode()
    # then it says who approved it, no longer that a person must decide, and has no due time
    why = html.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert "Approved by ann on " in why
    assert "A person must decide" not in html
    assert "data-due=" not in html


def test_a_rejected_decision_says_who_rejected_it(
    queue_one: Callable[..., int],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    decision_id = queue_one()
    ann = login(person("ann", Role.REVIEWER, "G1.U1.P1"))
    verdicts = '[{"index": 0, "supported": false, "note": "wrong"}]'
    with django_capture_on_commit_callbacks(execute=True):
        ann.post(f"/queue/decisions/{decision_id}/claim/")
        ann.post(f"/queue/decisions/{decision_id}/reject/", {"reason": "wrong", "claims": verdicts})
    assert Decision.objects.get(pk=decision_id).state == State.FAILED
    html = ann.get(f"/queue/decisions/{decision_id}/").content.decode()
    why = html.split('<p id="why"', 1)[1].split("</p>", 1)[0]
    assert "Rejected by ann on " in why
    assert "A person must decide" not in html
