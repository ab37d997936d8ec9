"""What the asker receives follows the answer's mode (seed 000 §5.4), and a person may write
it instead (seed 002 §9.3): full as it is, hedged after a hedge sentence, partial cut to its
supported claims with the parts left unanswered, refusal with no text until an approver
writes the answer to deliver. The agent's answer stays stored as submitted (`answer`); what
is delivered is `delivered` (decisions/delivery.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.utils import translation

from coordinates.models import Role
from decisions.delivery import deliver
from decisions.events import text_hash
from tests.decisions.conftest import GOOD, ZONE, cite
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

HEDGE_EN = "Based on limited evidence; this answer may be incomplete."
HEDGE_JA = "限られた証拠に基づく回答のため、不完全な可能性があります。"
TWO_PARTS = (
    "Who approves travel expenses above 500,000 yen? "
    "How many days does reimbursement of approved expenses take?"
)
# GOOD's sufficiency is about 0.94 against the travel policy: tau 0.99 with delta 0.1 puts
# it in the hedged band [0.89, 0.99); delta 0.01 below tau - 2*delta = 0.97, a refusal.
HEDGED = {"tau": 0.99, "delta": 0.1, "refusal_floor": 0.05}
REFUSAL = {"tau": 0.99, "delta": 0.01, "refusal_floor": 0.05}
WRITTEN = "The division head approves expenses above 500,000 yen (section 2)."


@pytest.fixture
def ann(person: Callable[..., Any], client_for: Callable[[Any], Any]) -> Any:
    return client_for(person("ann", Role.REVIEWER, ZONE))


def approve(client: Any, decision_id: int, **body: Any) -> Any:
    return client.post(
        f"/api/v1/decisions/{decision_id}/approve/", {"reason": "ok", **body}, format="json"
    )


# --- the pure rules --------------------------------------------------------------------------


def test_a_full_answer_is_delivered_as_it_is() -> None:
    assert deliver(GOOD, "full", {}).answer == GOOD


def test_a_hedged_answer_opens_with_a_hedge_in_its_own_language() -> None:
    # whatever language the reader's request is in, the hedge is the answer's
    with translation.override("ja"):
        english = deliver(GOOD, "hedged", {}).answer
    japanese = "50万円を超える経費は部長の事前承認が必要です。"
    assert english == f"{HEDGE_EN} {GOOD}"
    assert deliver(japanese, "hedged", {}).answer == f"{HEDGE_JA}{japanese}"


def test_a_refusal_delivers_no_text_unless_a_person_wrote_one() -> None:
    assert deliver(GOOD, "refusal", {}).answer is None
    replaced = deliver(GOOD, "refusal", {}, replacement=WRITTEN)
    assert (replaced.answer, replaced.replaced) == (WRITTEN, True)


def test_a_partial_answer_of_claims_keeps_only_the_supported_ones() -> None:
    body = {
        "claims": [
            {"text": "The head approves.", "supported": True, "verdict": "verified"},
            {"text": "Refunds take 45 days.", "supported": False, "verdict": "unverified"},
        ],
        "addressing": {
            "parts": [
                {"asks": "who approves (a person or role)", "answered": True, "by": 0},
                {"asks": "days (a number of days)", "answered": True, "by": 1},
            ]
        },
    }
    found = deliver("The head approves. Refunds take 45 days.", "partial", body)
    # the unsupported claim is withheld, and the part it answered is said to be unanswered
    assert found.answer == "The head approves.\n\nNot answered: days (a number of days)"
    assert found.not_answered == ["days (a number of days)"]


# --- over the API ----------------------------------------------------------------------------


def test_a_two_part_question_answered_in_part_delivers_the_part_and_names_the_other(
    policy_doc: Any, submit: Callable[..., Any]
) -> None:
    found = submit([{"text": GOOD, "citations": [cite(policy_doc)]}], question=TWO_PARTS).json()
    assert (found["state"], found["mode"]) == ("completed", "partial")
    missing = found["addressing"]["missing"]
    assert len(missing) == 1
    assert "days" in missing[0]
    assert found["answer"] == GOOD  # as submitted, for audit
    assert found["delivered"] == {
        "answer": f"{GOOD}\n\nNot answered: {missing[0]}",
        "mode": "partial",
        "not_answered": missing,
        "replaced": False,
    }


def test_a_hedged_answer_is_delivered_after_the_hedge(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any], ann: Any
) -> None:
    set_policy(**HEDGED)
    found = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert (found["gate"], found["mode"]) == ("required", "hedged")
    assert approve(ann, found["id"]).status_code == 200
    after = ann.get(f"/api/v1/decisions/{found['id']}/").json()
    assert after["state"] == "completed"
    assert after["delivered"]["answer"] == f"{HEDGE_EN} {GOOD}"


def test_a_refusal_sent_to_a_person_is_released_only_with_the_answer_they_write(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any], ann: Any
) -> None:
    # given an answer whose sufficiency is below tau - 2*delta: a refusal, with a person
    set_policy(**REFUSAL)
    found = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert (found["gate"], found["mode"]) == ("required", "refusal")
    assert found["delivered"]["answer"] is None

    # an approval alone would release a refusal: refused, naming the field to fill
    plain = approve(ann, found["id"])
    assert plain.status_code == 400
    assert plain.json()["error"]["field"] == "replacement"
    assert ann.get(f"/api/v1/decisions/{found['id']}/").json()["state"] == "approval_required"

    # with the answer the reviewer writes, it is released, and that answer is delivered
    assert approve(ann, found["id"], replacement=WRITTEN).status_code == 200
    after = ann.get(f"/api/v1/decisions/{found['id']}/").json()
    assert after["state"] == "completed"
    assert after["answer"] == GOOD
    assert after["delivered"] == {
        "answer": WRITTEN,
        "mode": "refusal",
        "not_answered": [],
        "replaced": True,
    }
    assert after["approvals"][0]["replacement"] == WRITTEN
    # on the trail: the new answer's hash beside the one it replaces, by the reviewer
    replaced = TrailEvent.objects.get(decision_id=found["id"], kind="decision.answer_replaced")
    assert replaced.actor == "ann"
    assert (replaced.payload["replacement"], replaced.payload["replaces"]) == (
        text_hash(WRITTEN),
        text_hash(GOOD),
    )


def test_a_reviewer_who_vouches_for_every_claim_takes_the_refused_answer_over(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any], ann: Any
) -> None:
    set_policy(**REFUSAL)
    found = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    vouched = [{"index": 0, "supported": True, "note": "section 2 says so"}]
    assert approve(ann, found["id"], claims=vouched).status_code == 200
    after = ann.get(f"/api/v1/decisions/{found['id']}/").json()
    # the agent's text, now the reviewer's answer: delivered and sealed as a replacement
    assert (after["delivered"]["answer"], after["delivered"]["replaced"]) == (GOOD, True)
    replaced = TrailEvent.objects.get(decision_id=found["id"], kind="decision.answer_replaced")
    assert replaced.payload["replacement"] == replaced.payload["replaces"] == text_hash(GOOD)


def test_an_escalated_answer_can_be_replaced_by_its_authority(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any], ann: Any
) -> None:
    # any approver may write the answer to deliver, not only for a refusal
    set_policy(**HEDGED)
    found = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert approve(ann, found["id"], replacement=WRITTEN).status_code == 200
    delivered = ann.get(f"/api/v1/decisions/{found['id']}/").json()["delivered"]
    assert (delivered["answer"], delivered["replaced"]) == (WRITTEN, True)


# --- the decision page -----------------------------------------------------------------------


def test_the_decision_page_shows_what_the_asker_will_receive(
    policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any], person: Any
) -> None:
    set_policy(**REFUSAL)
    refusal = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["id"]
    set_policy(**HEDGED)
    hedged = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()["id"]
    browser = Client()
    browser.force_login(person("rita", Role.REVIEWER, ZONE))

    page = browser.get(f"/queue/decisions/{refusal}/").content.decode()
    assert "What the asker will receive" in page
    assert 'id="delivered-nothing"' in page
    assert "(a refusal)" in page
    assert 'name="replacement" id="replacement" rows="3"' in page
    assert "Answer to deliver (required: this answer is a refusal)" in page

    page = browser.get(f"/queue/decisions/{hedged}/").content.decode()
    assert f'<p class="untrusted" id="delivered-answer">{HEDGE_EN} {GOOD}</p>' in page

    # the reviewer writes the answer on the page: released, and the page says what went out
    rita_form = {"reason": "", "claims": "", "replacement": WRITTEN}
    browser.post(f"/queue/decisions/{refusal}/approve/", rita_form)
    page = browser.get(f"/queue/decisions/{refusal}/").content.decode()
    assert "Delivered to the asker" in page
    assert f'id="delivered-answer">{WRITTEN}</p>' in page
