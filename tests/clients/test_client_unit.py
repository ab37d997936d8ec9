"""The client's own behaviour, against an in-process transport (no server): retries keep
the Idempotency-Key, statuses map to their exception kinds, `wait` follows a webhook."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from maria_client import (
    Maria,
    MariaError,
    RateLimited,
    ServerError,
    TransportError,
    WebhookInbox,
    sign_webhook,
)

DECISION: dict[str, Any] = {
    "id": 7, "state": "completed", "gate": "auto", "mode": "direct", "zone": "G1.U1.P1.Z1",
    "agent": "G1.U1.P1.Z1.A1", "question": "q", "answer": "a", "sufficiency": 0.8,
    "completeness": 1.0, "cohesion": None, "policy_version": "G1.U1.P1.Z1@1", "claims": [],
    "contradictions": [], "refusal": None, "outcome_reason": None, "bundle_hash": "h",
    "events": [],
}  # fmt: skip
SUBMIT: dict[str, Any] = {
    "question": "q", "answer": "a [1]", "zone": "G1.U1.P1.Z1", "agent": "G1.U1.P1.Z1.A1",
    "sources": [{"document": 1, "paragraph": 2}],
}  # fmt: skip


Answer = Callable[[httpx.Request], httpx.Response]


def client_answering(*answers: Answer) -> tuple[Maria, list[httpx.Request]]:
    """A client whose n-th request gets the n-th answer (the last one repeats)."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answers[min(len(sent), len(answers)) - 1](request)

    http = httpx.Client(transport=httpx.MockTransport(answer))
    return Maria("http://engine.test", "key", http=http), sent


def status(code: int, body: Any = None, **headers: str) -> Answer:
    return lambda request: httpx.Response(code, json=body, headers=headers)


def test_a_rate_limited_submission_is_sent_again_with_the_same_idempotency_key() -> None:
    limited = {"error": {"code": "throttled", "message": "over 300/s", "field": None}}
    maria, sent = client_answering(
        status(429, limited, **{"Retry-After": "0"}), status(201, DECISION)
    )

    decision = maria.submit(**SUBMIT)

    assert decision.id == 7
    keys = [request.headers["Idempotency-Key"] for request in sent]
    assert len(keys) == 2
    assert keys[0] == keys[1]
    assert keys[0].startswith("maria-client-")
    # and a new submission gets a key of its own
    maria.submit(**SUBMIT)
    assert sent[-1].headers["Idempotency-Key"] != keys[0]


def test_when_the_retries_run_out_the_last_refusal_is_raised_with_its_code() -> None:
    limited = {"error": {"code": "throttled", "message": "over 300/s", "field": None}}
    maria, sent = client_answering(status(429, limited, **{"Retry-After": "0"}))

    with pytest.raises(RateLimited) as refused:
        maria.submit(**SUBMIT)

    assert len(sent) == 1 + maria.retries
    assert (refused.value.code, refused.value.retry_after) == ("throttled", 0.0)


def test_a_refusal_is_not_retried_and_an_answer_without_the_error_shape_still_maps() -> None:
    invalid = {"error": {"code": "invalid", "message": "unknown zone", "field": "zone"}}
    maria, sent = client_answering(status(400, invalid))
    with pytest.raises(MariaError) as refused:
        maria.submit(**SUBMIT)
    assert len(sent) == 1
    assert (type(refused.value).__name__, refused.value.field) == ("ValidationError", "zone")

    proxy, _ = client_answering(lambda request: httpx.Response(502, text="<html>bad gateway"))
    with pytest.raises(ServerError) as failed:
        proxy.decision(7)
    assert (failed.value.code, failed.value.status_code) == ("http_502", 502)


def test_a_request_that_gets_no_answer_is_a_transport_error() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    maria, sent = client_answering(down)
    maria.retries = 0
    with pytest.raises(TransportError):
        maria.decision(7)
    assert len(sent) == 1


def test_wait_with_an_inbox_looks_once_the_outcomes_webhook_came() -> None:
    # given an inbox, and a decision the engine would report open until the webhook
    secret = "whsec_c2VjcmV0LWtleS1vZi10d2VudHktZm91ci1ieXRlcw=="
    inbox = WebhookInbox(secret)
    arrived = threading.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        state = "completed" if arrived.is_set() else "approval_required"
        return httpx.Response(200, json={**DECISION, "state": state})

    maria, sent = client_answering(answer)
    body = '{"data":{"id":7,"state":"completed"},"type":"decision.completed"}'

    def deliver() -> None:
        stamp = int(time.time())
        headers = {
            "webhook-id": "msg_1",
            "webhook-timestamp": str(stamp),
            "webhook-signature": sign_webhook(secret, msg_id="msg_1", timestamp=stamp, body=body),
        }
        arrived.set()
        inbox.receive(headers, body)

    # when the webhook arrives while the agent waits
    timer = threading.Timer(0.2, deliver)
    timer.start()
    decision = maria.wait(7, timeout=60, webhook=inbox)
    timer.join()

    # then the wait ended on it, with one look at the decision
    assert decision.state == "completed"
    assert len(sent) == 1


def test_the_delivered_answer_and_its_missing_parts_are_read_apart_from_the_submitted_one() -> None:
    delivered = {
        "answer": "The head approves.\n\nNot answered: days (a number of days)",
        "mode": "partial",
        "not_answered": ["days (a number of days)"],
        "replaced": False,
    }
    client, _ = client_answering(status(200, {**DECISION, "delivered": delivered}))
    decision = client.decision(7)
    assert decision.answer == "a"  # as the agent submitted it
    assert decision.delivered_answer == delivered["answer"]
    assert decision.not_answered == ["days (a number of days)"]
    assert decision.replaced is False


def test_a_refusal_delivers_nothing_and_an_older_engine_reads_as_nothing_delivered() -> None:
    refusal: dict[str, Any] = {
        "answer": None,
        "mode": "refusal",
        "not_answered": [],
        "replaced": False,
    }
    client, _ = client_answering(status(200, {**DECISION, "delivered": refusal}))
    assert client.decision(7).delivered_answer is None
    client, _ = client_answering(status(200, DECISION))
    assert (client.decision(7).delivered_answer, client.decision(7).not_answered) == (None, [])


def test_approve_sends_the_answer_the_reviewer_wrote() -> None:
    row = {k: DECISION[k] for k in ("id", "state", "gate", "mode", "zone", "agent", "question")}
    client, sent = client_answering(status(200, {**row, "sufficiency": None}))
    client.approve(7, "see section 2", replacement="The division head approves.")
    assert json.loads(sent[0].content) == {
        "reason": "see section 2",
        "replacement": "The division head approves.",
    }
