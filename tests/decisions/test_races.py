"""Races: many people acting on one decision at the same moment, on both backends.

Each thread is a separate request with its own database connection, released together by a
barrier, and every transaction really commits (transactional tests), so the locks, the
compare-and-set save and the after-commit side effects are the real ones. On SQLite the
writers queue for the database's one write lock (IMMEDIATE transactions, a file database as
in `make run`), and the losers must still be told 409, never 500. The trail under concurrent
appends has its own test (test_trail_concurrency.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from decisions.models import Decision
from tests.decisions.conftest import AGENT, GOOD, ZONE, answer_body, cite
from tests.decisions.helpers import at_once, kinds, pushes, reviewer, second_session
from trail import verify
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db(transaction=True)

QUEUED_PATH = ["decision.proposed", "decision.validated", "decision.queued"]


@pytest.fixture
def queued(policy_doc: Any, set_policy: Callable[..., Any], submit: Callable[..., Any]) -> int:
    """A decision waiting for a reviewer in a strict zone (committed, validated)."""
    set_policy(tau=0.99, refusal_floor=0.05)
    response = submit([{"text": GOOD, "citations": [cite(policy_doc)]}])
    decision = Decision.objects.get(pk=response.response.json()["id"])
    assert decision.state == "approval_required"
    return decision.pk


def act(user: Any, decision_id: int, action: str, reason: str = "") -> Any:
    client = APIClient()
    client.force_authenticate(user=user)
    body: dict[str, Any] = {"reason": reason}
    if action == "reject":  # a rejection names the claim that is wrong
        body["claims"] = [{"index": 0, "supported": False}]
    return client.post(f"/api/v1/decisions/{decision_id}/{action}/", body, format="json")


def test_fifty_concurrent_approvals_have_one_winner(queued: int) -> None:
    # given fifty reviewers of the zone
    people = [reviewer(f"reviewer{i:02d}", ZONE) for i in range(50)]

    # when they all approve the decision at the same moment
    responses = at_once(50, lambda i: act(people[i], queued, "approve", f"fine by {i}"))

    # then exactly one succeeds and the other 49 are told it was too late
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 1, 409: 49}, statuses
    assert all(r.json()["error"]["code"] == "conflict" for r in responses if r.status_code == 409)
    winner = next(i for i, r in enumerate(responses) if r.status_code == 200)
    # and the decision was approved once, by the winner, and carried to its outcome
    decision = Decision.objects.get(pk=queued)
    assert decision.state == "completed"
    assert decision.approvals.get().reviewer == people[winner]
    approved = TrailEvent.objects.filter(decision_id=queued, kind="decision.approved")
    assert [(e.actor, e.reason) for e in approved] == [
        (f"reviewer{winner:02d}", f"fine by {winner}")
    ]
    assert kinds(queued) == [
        *QUEUED_PATH,
        "decision.approved",
        "decision.executed",
        "decision.completed",
    ]
    # and every queue was told once that it is resolved
    resolved = pushes(queued, "decision.resolved")
    assert len(resolved) == 1
    assert resolved[0].sent_at is not None
    assert verify.verify_database().intact


def test_approve_racing_reject_has_one_winner_and_the_trail_agrees(queued: int) -> None:
    # given ten reviewers who approve and ten who reject
    people = [reviewer(f"reviewer{i:02d}", ZONE) for i in range(20)]

    def decide(i: int) -> Any:
        if i % 2:
            return act(people[i], queued, "reject", f"wrong article, says {i}")
        return act(people[i], queued, "approve", f"fine by {i}")

    # when they all act at the same moment
    responses = at_once(20, decide)

    # then exactly one of them wins, whichever it was
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 1, 409: 19}, statuses
    winner = next(i for i, r in enumerate(responses) if r.status_code == 200)
    decision = Decision.objects.get(pk=queued)
    events = list(TrailEvent.objects.filter(decision_id=queued).order_by("pk"))
    # and the trail tells the same story as the final state
    if winner % 2:
        assert decision.state == "failed"
        assert decision.outcome_reason == f"wrong article, says {winner}"
        assert [e.kind for e in events] == [*QUEUED_PATH, "decision.failed"]
        assert (events[-1].actor, events[-1].reason) == (
            f"reviewer{winner:02d}",
            f"wrong article, says {winner}",
        )
        assert not decision.approvals.exists()
    else:
        assert decision.state == "completed"
        assert [e.kind for e in events] == [
            *QUEUED_PATH,
            "decision.approved",
            "decision.executed",
            "decision.completed",
        ]
        assert events[3].actor == f"reviewer{winner:02d}"
    assert events[-1].payload["state"] == decision.state
    assert len(pushes(queued, "decision.resolved")) == 1
    assert verify.verify_database().intact


def test_twenty_concurrent_submissions_with_one_key_make_one_decision(
    policy_doc: Any, set_policy: Callable[..., Any], agent_client: Callable[[str], APIClient]
) -> None:
    # given an agent that sends the same answer twenty times at once, with one key
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    clients = [agent_client(AGENT) for _ in range(20)]
    body = answer_body([{"text": GOOD, "citations": [cite(policy_doc)]}])

    # when the twenty requests race
    responses = at_once(
        20,
        lambda i: clients[i].post(
            "/api/v1/decisions/", body, format="json", HTTP_IDEMPOTENCY_KEY="travel-answer-7"
        ),
    )

    # then one decision exists; one request created it, the rest replayed it or were told
    # to come back (409 while the first is in flight), and none failed
    statuses = Counter(r.status_code for r in responses)
    assert statuses[201] == 1, statuses
    assert set(statuses) <= {200, 201, 409}, statuses
    decision = Decision.objects.get()
    for response in responses:
        if response.status_code == 200:
            assert response["Idempotent-Replayed"] == "true"
        if response.status_code in (200, 201):
            assert response.json()["id"] == decision.pk
    # and it was proposed and judged once
    assert kinds(decision.pk).count("decision.proposed") == 1
    assert kinds(decision.pk).count("decision.validated") == 1
    assert decision.state == "completed"


@pytest.mark.postgres
def test_a_key_whose_first_request_is_still_running_is_told_409_at_once(
    policy_doc: Any, set_policy: Callable[..., Any], agent_client: Callable[[str], APIClient]
) -> None:
    from django.db import connection

    from decisions.models import Decision as Made

    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    client = agent_client(AGENT)
    body = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": GOOD,
        "zone": ZONE,
        "agent": AGENT,
        "claims": [{"text": GOOD, "citations": [cite(policy_doc)]}],
    }
    user_id = client.post(
        "/api/v1/decisions/", body, format="json", HTTP_IDEMPOTENCY_KEY="warm-up"
    ).json()["id"]
    user_pk = Made.objects.get(pk=user_id).proposed_by_id
    # given a first request with the key, still in its transaction (another connection),
    # holding what such a request holds: the key and the zone's trail lock
    with second_session() as first:
        first.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"{user_pk}:answer-8"]
        )
        first.execute("SELECT 1 FROM decisions_trailhead WHERE chain = %s FOR UPDATE", [ZONE])
        with connection.cursor() as cursor:  # a request queued behind the zone lock fails
            cursor.execute("SET lock_timeout = '5s'")
        # when a second request with that key arrives
        second = client.post(
            "/api/v1/decisions/", body, format="json", HTTP_IDEMPOTENCY_KEY="answer-8"
        )
        # then it is told to come back, and nothing was written for it
        assert second.status_code == 409, second.json()
        assert "still being processed" in second.json()["error"]["message"]
        assert not Made.objects.filter(idempotency_key="answer-8").exists()
        first.rollback()
    # and once the first has ended, the key is free
    third = client.post("/api/v1/decisions/", body, format="json", HTTP_IDEMPOTENCY_KEY="answer-8")
    assert third.status_code == 201, third.json()
