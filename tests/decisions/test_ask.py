"""`POST /api/v1/ask/`: the engine answers from its own documents, citing them, or refuses
with what it found; a refusal is on the trail like an answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from decisions.models import Decision
from tests.decisions.conftest import AGENT, ZONE
from tests.samples import POLICY_EN
from trail.models import TrailEvent
from trail.verify import verify_database

pytestmark = pytest.mark.django_db


def ask(agent_client: Callable[[str], Any], question: str) -> Any:
    return agent_client(AGENT).post(
        "/api/v1/ask/", {"question": question, "zone": ZONE}, format="json"
    )


def test_a_question_the_documents_answer_is_submitted_with_its_citations(
    policy_doc: Any, agent_client: Callable[[str], Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = ask(agent_client, "Who approves expenses above 500,000 yen?")
    assert response.status_code == 201, response.json()
    decision = Decision.objects.get(pk=response.json()["id"])
    claims = decision.bundle.claims
    assert claims
    assert all(c["citations"] and c["citations"][0]["document"] for c in claims)
    assert decision.report is not None  # validated like any answer
    assert not TrailEvent.objects.filter(kind="ask.refused").exists()


def test_a_question_nothing_answers_is_refused_and_the_refusal_is_on_the_trail(
    policy_doc: Any, agent_client: Callable[[str], Any]
) -> None:
    question = "What colour is the cafeteria on Mars?"
    response = ask(agent_client, question)
    assert response.status_code == 200
    refusal = response.json()["refusal"]
    assert response.json()["decision"] is None
    assert refusal["try"]
    # the refusal is recorded where an auditor reads the zone's trail
    event = TrailEvent.objects.get(kind="ask.refused")
    assert refusal["trail_event"] == f"{event.chain}#{event.seq}"
    assert event.chain == ZONE
    assert event.actor == f"agent:{AGENT}"
    assert event.payload["threshold"] == refusal["threshold"]
    assert question not in str(event.payload)  # kept as its hash, not its text
    assert verify_database().intact


def test_an_idempotency_key_is_checked_as_a_submission_checks_it(
    policy_doc: Any, agent_client: Callable[[str], Any]
) -> None:
    # /ask/ passed the header on unchecked: 201 characters failed PostgreSQL's column (a 500).
    client = agent_client(AGENT)
    body = {"question": "Who approves expenses above 500,000 yen?", "zone": ZONE}
    for key in ("k" * 201, "with space"):
        response = client.post("/api/v1/ask/", body, format="json", HTTP_IDEMPOTENCY_KEY=key)
        assert response.status_code == 400
        assert response.json()["error"]["field"] == "Idempotency-Key"
    assert not Decision.objects.exists()


def test_the_same_idempotency_key_replays_the_first_answer_after_the_documents_changed(
    policy_doc: Any,
    ingest: Callable[..., Any],
    agent_client: Callable[[str], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Given an answered question under an Idempotency-Key
    client = agent_client(AGENT)
    body = {"question": "Who approves expenses above 500,000 yen?", "zone": ZONE}
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post("/api/v1/ask/", body, format="json", HTTP_IDEMPOTENCY_KEY="ask-1")
    assert first.status_code == 201, first.json()
    # And a new version of the policy, whose approval sentence the question now retrieves
    ingest(
        POLICY_EN.replace("by the division head", "by the chief financial officer"),
        title="Travel policy",
        key="travel",
    )
    # When the agent retries the same request (its connection dropped before the answer)
    again = client.post("/api/v1/ask/", body, format="json", HTTP_IDEMPOTENCY_KEY="ask-1")
    # Then it gets the first decision back, not a mismatch nor a second answer
    assert again.status_code == 200, again.json()
    assert again.json()["id"] == first.json()["id"]
    assert Decision.objects.count() == 1
    # And another question under that key is refused, naming the key
    other = client.post(
        "/api/v1/ask/",
        {**body, "question": "Within how many days are approved expenses reimbursed?"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="ask-1",
    )
    assert other.status_code == 422
    assert other.json()["error"]["field"] == "Idempotency-Key"
