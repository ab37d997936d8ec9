"""`maria_client.Maria` against the live test server (real HTTP): documents, submissions
with claims, waiting, reviewer actions with personal tokens, the trail, and every refusal
as a typed exception with the error shape's code and field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from maria_client import (
    ClaimVerdict,
    Conflict,
    Forbidden,
    Maria,
    MariaError,
    NotAuthenticated,
    NotFound,
    Unprocessable,
    ValidationError,
    WaitTimeout,
)
from tests.clients.conftest import AGENT, ZONE, Keys
from tests.decisions.conftest import GOOD
from tests.samples import POLICY_EN

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "Who approves travel expenses above 500,000 yen?"


def claims_of(paragraph: Any) -> list[dict[str, Any]]:
    return [
        {
            "text": GOOD,
            "citations": [
                {"document": paragraph.version.document_id, "paragraph": paragraph.number}
            ],
        }
    ]


def test_an_agent_uploads_a_document_and_the_same_text_again_is_kept_once(
    keys: Keys, connect: Callable[[str], Maria]
) -> None:
    agent = connect(keys.agent)

    first = agent.upload_document(POLICY_EN, zone=ZONE, title="Travel policy", key="travel")
    again = agent.upload_document(POLICY_EN, zone=ZONE, title="Travel policy", key="travel")

    assert (first.created, first.version) == (True, 1)
    assert first.paragraphs > 1
    assert (again.created, again.id, again.content_hash) == (False, first.id, first.content_hash)


def test_an_answer_that_passes_the_gate_is_waited_for_by_polling(
    keys: Keys,
    connect: Callable[[str], Maria],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a lenient zone
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    agent = connect(keys.agent)

    # when the agent submits claims with citations and waits
    made = agent.submit(
        question=QUESTION, answer=GOOD, zone=ZONE, agent=AGENT, claims=claims_of(policy_doc)
    )
    decision = agent.wait(made.id, timeout=60)

    # then it is released and completed, with its report and its trail
    assert (decision.state, decision.gate, decision.is_final, decision.approved) == (
        "completed",
        "auto",
        True,
        True,
    )
    assert decision.sufficiency is not None
    assert decision.sufficiency > 0.3
    assert decision.claims[0]["text"] == GOOD
    assert [event.kind for event in decision.events][:2] == [
        "decision.proposed",
        "decision.validated",
    ]
    assert all(event.hash and event.chain.startswith(ZONE) for event in decision.events)


def test_a_submission_carries_an_idempotency_key_so_a_replay_decides_nothing_new(
    keys: Keys, connect: Callable[[str], Maria], policy_doc: Any
) -> None:
    agent = connect(keys.agent)
    body: dict[str, Any] = {
        "question": QUESTION,
        "answer": GOOD,
        "zone": ZONE,
        "agent": AGENT,
        "claims": claims_of(policy_doc),
    }

    first = agent.submit(**body, idempotency_key="client-key-1")
    replayed = agent.submit(**body, idempotency_key="client-key-1")
    fresh = agent.submit(**body)  # a key of its own, made by the client

    assert replayed.id == first.id
    assert fresh.id != first.id
    with pytest.raises(Unprocessable) as mismatch:
        agent.submit(**{**body, "question": "Another question?"}, idempotency_key="client-key-1")
    assert (mismatch.value.code, mismatch.value.field, mismatch.value.status_code) == (
        "idempotency_mismatch",
        "Idempotency-Key",
        422,
    )


def test_refusals_are_typed_and_carry_the_error_shapes_code_and_field(
    keys: Keys, connect: Callable[[str], Maria], policy_doc: Any, live_server: Any
) -> None:
    agent = connect(keys.agent)

    with pytest.raises(NotFound) as missing:
        agent.decision(987654)
    assert (missing.value.code, missing.value.status_code) == ("not_found", 404)

    with pytest.raises(ValidationError) as malformed:
        agent.submit(question=QUESTION, answer=GOOD, zone="G1.U1", agent=AGENT, claims=[])
    assert malformed.value.field in ("zone", "claims")
    assert malformed.value.status_code == 400

    # Another zone's coordinate answers as a missing one does: no oracle across zones.
    with pytest.raises(NotFound) as elsewhere:
        agent.upload_document(POLICY_EN, zone="G1.U1.P1.Z2")
    assert (elsewhere.value.code, elsewhere.value.field) == ("unknown_zone", "zone")

    with pytest.raises(Forbidden):
        agent.claim(1)  # agents do not review

    with (
        Maria(live_server.url, "maria_not_a_real_token") as stranger,
        pytest.raises(MariaError) as who,
    ):
        stranger.decision(1)
    assert isinstance(who.value, NotAuthenticated | Forbidden)


def test_reviewers_claim_approve_and_reject_with_personal_tokens(
    keys: Keys,
    connect: Callable[[str], Maria],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    # given a zone where every answer waits for a reviewer
    set_policy(tau=0.99, refusal_floor=0.05)
    agent, reviewer = connect(keys.agent), connect(keys.reviewer)
    first, second = (
        agent.submit(
            question=question, answer=GOOD, zone=ZONE, agent=AGENT, claims=claims_of(policy_doc)
        )
        for question in (QUESTION, "And who approves them in advance?")
    )
    assert agent.graded(first.id).state == "approval_required"

    # when a reviewer claims and approves one, and rejects the other
    claimed = reviewer.claim(first.id)
    assert (claimed.state, claimed.claimed_by) == ("approval_required", "reviewer")
    with pytest.raises(Conflict) as held:
        connect(keys.reviewer2).claim(first.id)
    assert held.value.code == "conflict"
    approved = reviewer.approve(first.id, "section 2 says so")
    rejected = reviewer.reject(
        second.id, "the span is about another case", claims=[ClaimVerdict(0, False)]
    )

    # then the first is released, the second failed with the reason
    assert approved.state in ("executed", "completed")
    assert agent.wait(first.id, timeout=60).state == "completed"
    assert rejected.state == "failed"
    refused = agent.wait(second.id, timeout=60)
    assert (refused.state, refused.outcome_reason) == ("failed", "the span is about another case")
    # and a reason is not optional for a rejection
    with pytest.raises(MariaError) as no_reason:
        reviewer.reject(second.id, "   ", claims=[ClaimVerdict(0, False)])
    assert no_reason.value.status_code in (400, 409)


def test_waiting_for_an_answer_a_reviewer_holds_times_out_with_what_it_saw(
    keys: Keys,
    connect: Callable[[str], Maria],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    set_policy(tau=0.99, refusal_floor=0.05)
    agent = connect(keys.agent)
    made = agent.submit(
        question=QUESTION, answer=GOOD, zone=ZONE, agent=AGENT, claims=claims_of(policy_doc)
    )

    with pytest.raises(WaitTimeout) as waited:
        agent.wait(made.id, timeout=0.5, first_delay=0.1)

    assert waited.value.details["state"] == "approval_required"


def test_an_auditor_reads_the_trail_as_json_lines_and_an_agent_may_not(
    keys: Keys,
    connect: Callable[[str], Maria],
    policy_doc: Any,
    set_policy: Callable[..., Any],
) -> None:
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    agent = connect(keys.agent)
    made = agent.submit(
        question=QUESTION, answer=GOOD, zone=ZONE, agent=AGENT, claims=claims_of(policy_doc)
    )

    lines = list(connect(keys.auditor).trail(zone=ZONE, include_evidence=True))

    assert lines[0]["type"] == "trail.export"
    assert lines[-1]["type"] == "trail.end"
    events = [line for line in lines if line["type"] == "trail.event"]
    assert any(f'"decision":{made.id}' in line["canonical"].replace(" ", "") for line in events)
    assert lines[-1]["events"] == len(events)
    with pytest.raises(Forbidden):
        list(agent.trail(zone=ZONE))
