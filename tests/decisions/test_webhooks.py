"""Webhooks to an agent's own endpoint: a local receiver on 127.0.0.1 checks each signature
(Standard Webhooks, by an independent computation: tests/decisions/standard_webhooks.py).
What each outcome tells is in test_webhook_outcomes.py, the signing alone in
test_webhook_signing.py.

Transactional tests: changes really commit, so the webhook goes out after commit exactly as
in production (tasks run eagerly, at the point they are sent).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from coordinates.models import ApiToken
from coordinates.services import token_issue
from decisions import services, tasks
from decisions.models import Decision, Outbox
from decisions.webhooks import DeliveryError, body_of, post, verify
from tests.decisions.conftest import AGENT, GOOD, ZONE, cite
from tests.decisions.helpers import WebhookReceiver, kinds, retry_inline, reviewer
from tests.decisions.standard_webhooks import header, standard_valid
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db(transaction=True)

RELEASED = ["decision.approved", "decision.executed"]


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[WebhookReceiver]:
    """The agent's endpoint; parametrize it indirectly with the statuses it answers in turn."""
    statuses = getattr(request, "param", (200,))
    with WebhookReceiver(statuses).running() as running:
        yield running


@pytest.fixture
def webhook_agent(org: Any, receiver: WebhookReceiver) -> tuple[ApiToken, APIClient]:
    """The compliance zone's agent, with a token that names the receiver as its webhook."""
    token, key = token_issue(agent=parse(AGENT), webhook_url=receiver.url)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return token, client


def post_answer(client: APIClient, paragraph: Any) -> int:
    response = client.post(
        "/api/v1/decisions/",
        {
            "question": "Who approves travel expenses above 500,000 yen?",
            "answer": GOOD,
            "zone": ZONE,
            "agent": AGENT,
            "claims": [{"text": GOOD, "citations": [cite(paragraph)]}],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def test_a_released_answer_is_posted_signed_to_the_agent_and_then_completed(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given a lenient zone and an agent with a webhook
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    token, client = webhook_agent

    # when its answer passes the gate
    decision_id = post_answer(client, policy_doc)

    # then the receiver got one POST, signed per Standard Webhooks with the token's secret
    # (as `whsec_<secret>`, or the secret alone, as the reference libraries take it)
    assert len(receiver.hooks) == 1
    hook = receiver.hooks[0]
    now = int(time.time())
    secret = token.webhook_secret
    assert standard_valid(f"whsec_{secret}", hook.headers, hook.body, now=now)
    assert standard_valid(secret, hook.headers, hook.body, now=now)
    assert not standard_valid("whsec_" + "A" * 64, hook.headers, hook.body, now=now)
    assert not standard_valid(f"whsec_{secret}", hook.headers, hook.body + b" ", now=now)
    assert not standard_valid(f"whsec_{secret}", hook.headers, hook.body, now=now + 301)
    assert header(hook.headers, "webhook-id").startswith("msg_")
    assert header(hook.headers, "Content-Type") == "application/json"
    # and, for this release, with the previous release's header too
    legacy = header(hook.headers, "X-Maria-Signature")
    assert verify(secret, legacy, hook.body, now=now)
    assert not verify("another-secret", legacy, hook.body, now=now)
    assert not verify(secret, legacy, hook.body + b" ", now=now)
    # carrying the released answer in the specification's envelope
    released = hook.json()
    assert set(released) == {"type", "timestamp", "data"}
    assert released["type"] == "decision.completed"
    assert released["data"]["id"] == decision_id
    assert released["data"]["url"] == f"http://127.0.0.1:8000/api/v1/decisions/{decision_id}/"
    assert released["data"]["answer"] == GOOD
    assert released["data"]["state"] == "completed"
    assert released["data"]["release"] == "auto"
    assert hook.body == body_of(released)
    # and the 2xx confirmed delivery: executed -> completed
    assert Decision.objects.get(pk=decision_id).state == "completed"
    assert kinds(decision_id)[-3:] == [*RELEASED, "decision.completed"]
    completed = TrailEvent.objects.get(decision_id=decision_id, kind="decision.completed")
    assert completed.payload["delivery"] == "webhook delivered"
    assert Outbox.objects.get(decision_id=decision_id, kind="webhook").sent_at is not None


@pytest.mark.parametrize("receiver", [(500,)], indirect=True)
def test_a_failing_receiver_is_retried_with_backoff_and_then_the_decision_fails(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a receiver that answers 500 every time, and two retries
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    monkeypatch.setattr(tasks.deliver_webhook, "max_retries", 2)
    waits = retry_inline(monkeypatch)
    _, client = webhook_agent

    # when an answer is released
    decision_id = post_answer(client, policy_doc)

    # then it was posted three times, backing off before each retry, as one message: the
    # same webhook-id and body each time, signed afresh for each attempt
    assert len(receiver.hooks) == 3
    assert waits == [0, 1]
    assert len({header(h.headers, "webhook-id") for h in receiver.hooks}) == 1
    assert len({h.body for h in receiver.hooks}) == 1
    token = webhook_agent[0]
    now = int(time.time())
    assert all(
        standard_valid(token.webhook_secret, h.headers, h.body, now=now) for h in receiver.hooks
    )
    # and the decision failed with the reason, on the trail too
    decision = Decision.objects.get(pk=decision_id)
    assert decision.state == "failed"
    assert decision.outcome_reason == "webhook: the receiver answered 500"
    assert kinds(decision_id)[-3:] == [*RELEASED, "decision.failed"]
    failed = TrailEvent.objects.get(decision_id=decision_id, kind="decision.failed")
    assert failed.reason == "webhook: the receiver answered 500"
    # and the outbox row is settled, not left for the sweep to send again, with the error
    # that ended it for the operator to read
    row = Outbox.objects.get(decision_id=decision_id, kind="webhook")
    assert (row.sent_at is not None, row.attempts) == (True, 3)
    assert row.last_error == "the receiver answered 500"


@pytest.mark.parametrize("receiver", [(503, 204)], indirect=True)
def test_a_receiver_that_recovers_gets_the_answer_on_a_retry(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    retry_inline(monkeypatch)
    _, client = webhook_agent

    decision_id = post_answer(client, policy_doc)

    assert len(receiver.hooks) == 2
    assert receiver.hooks[0].body == receiver.hooks[1].body
    first, second = (header(h.headers, "webhook-id") for h in receiver.hooks)
    assert first == second
    assert Decision.objects.get(pk=decision_id).state == "completed"
    assert "decision.failed" not in kinds(decision_id)


def test_a_rolled_back_approval_sends_no_webhook(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given an answer waiting for a reviewer in a strict zone
    set_policy(tau=0.99, refusal_floor=0.05)
    _, client = webhook_agent
    decision_id = post_answer(client, policy_doc)
    assert Decision.objects.get(pk=decision_id).state == "approval_required"
    rita = reviewer("rita", ZONE)

    # when an approval is rolled back after the release was queued
    def approve_then_fail() -> None:
        with transaction.atomic():
            services.decision_approve(decision_id=decision_id, user=rita, reason="fine")
            raise RuntimeError("the request failed after the approval")

    with pytest.raises(RuntimeError):
        approve_then_fail()

    # then nothing was posted, and nothing waits to be posted
    assert receiver.hooks == []
    assert not Outbox.objects.filter(decision_id=decision_id, kind="webhook").exists()
    assert Decision.objects.get(pk=decision_id).state == "approval_required"
    assert "decision.approved" not in kinds(decision_id)

    # when the approval is made again and commits, the agent hears of it once
    services.decision_approve(decision_id=decision_id, user=rita, reason="fine")
    assert len(receiver.hooks) == 1
    assert Decision.objects.get(pk=decision_id).state == "completed"


@pytest.mark.parametrize("url", ["ftp://agent.example/hook", "not a url", "http://", "/relative"])
def test_a_webhook_that_is_not_an_http_url_is_refused_at_issue(url: str, org: Any) -> None:
    from coordinates.coordinate import parse
    from coordinates.models import ApiToken
    from coordinates.services import token_issue
    from maria.errors import ApplicationError

    with pytest.raises(ApplicationError, match="http") as refused:
        token_issue(agent=parse("G1.U1.P1.Z1.A7"), webhook_url=url)
    assert refused.value.field == "webhook_url"
    assert not ApiToken.objects.filter(agent="G1.U1.P1.Z1.A7").exists()


def test_a_stored_bad_url_fails_the_delivery_not_the_worker() -> None:
    with pytest.raises(DeliveryError, match="not an http"):
        post("file:///etc/passwd", "c2VjcmV0", webhook_id="msg_1", body=b"{}")


@pytest.mark.parametrize("receiver", [(500, 204)], indirect=True)
def test_under_eager_celery_a_retry_waits_for_its_time_and_the_sweep_sends_it(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    """`make run` (eager Celery): the backoff is waited for, not run through in a second
    (issue 29, item 10); the scheduler's outbox sweep sends the retry once it is due."""
    from datetime import timedelta

    from django.utils import timezone

    # given an agent whose receiver fails once
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    _, client = webhook_agent

    # when its answer is released
    decision_id = post_answer(client, policy_doc)

    # then one attempt only, and the row waits for its next one, the decision still executed
    assert len(receiver.hooks) == 1
    row = Outbox.objects.get(decision_id=decision_id, kind="webhook")
    assert (row.sent_at, row.attempts, row.claimed_at) == (None, 1, None)
    assert row.next_attempt_at is not None
    assert row.next_attempt_at > row.created_at
    assert Decision.objects.get(pk=decision_id).state == "executed"
    tasks.sweep_outbox()  # not due yet: nothing is sent
    assert len(receiver.hooks) == 1

    # when its time has come, the sweep sends the same message again, and the 2xx completes it
    past = timezone.now() - timedelta(minutes=5)
    Outbox.objects.filter(pk=row.pk).update(created_at=past, next_attempt_at=past)
    tasks.sweep_outbox()
    assert len(receiver.hooks) == 2
    assert receiver.hooks[0].body == receiver.hooks[1].body
    row.refresh_from_db()
    assert (row.sent_at is not None, row.attempts) == (True, 2)
    assert Decision.objects.get(pk=decision_id).state == "completed"
