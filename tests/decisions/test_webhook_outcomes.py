"""Every outcome of an agent's answer reaches its webhook (decisions/webhooks.py): blocked
(`decision.failed` with the refusal), rejected (`decision.rejected` with the reason and the
claims), approved (`decision.completed`) and escalated (`decision.escalated`), each once, after
commit, through the outbox, on a real pipeline run; a local receiver on 127.0.0.1 takes them
and checks each signature by an independent computation (tests/decisions/standard_webhooks.py).

Transactional tests: changes really commit, so webhooks go out after commit as in production
(tasks run eagerly, at the point they are sent).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from coordinates.models import ApiToken
from coordinates.services import token_issue
from decisions import services, tasks
from decisions.models import Decision, Outbox
from decisions.signals import webhook_due
from tests.decisions.conftest import AGENT, GOOD, WRONG_NUMBER, ZONE, cite
from tests.decisions.helpers import Hook, WebhookReceiver, retry_inline, reviewer
from tests.decisions.standard_webhooks import header, standard_valid

pytestmark = pytest.mark.django_db(transaction=True)

OTHER_AGENT = "G1.U1.P1.Z1.A2"
STRICT = {"tau": 0.99, "refusal_floor": 0.05}  # a supported answer waits for a reviewer


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[WebhookReceiver]:
    """The agent's endpoint; parametrize it indirectly with the statuses it answers in turn."""
    with WebhookReceiver(getattr(request, "param", (200,))).running() as running:
        yield running


def agent_with_webhook(agent: str, url: str) -> tuple[ApiToken, APIClient]:
    token, key = token_issue(agent=parse(agent), webhook_url=url)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return token, client


@pytest.fixture
def webhook_agent(org: Any, receiver: WebhookReceiver) -> tuple[ApiToken, APIClient]:
    return agent_with_webhook(AGENT, receiver.url)


def submit(client: APIClient, paragraph: Any, text: str, agent: str = AGENT) -> int:
    response = client.post(
        "/api/v1/decisions/",
        {
            "question": "Who approves travel expenses above 500,000 yen?",
            "answer": text,
            "zone": ZONE,
            "agent": agent,
            "claims": [{"text": text, "citations": [cite(paragraph)]}],
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def signed_by(token: ApiToken, hook: Hook) -> bool:
    return standard_valid(
        f"whsec_{token.webhook_secret}", hook.headers, hook.body, now=int(time.time())
    )


def check_common(message: dict[str, Any], decision_id: int, kind: str) -> dict[str, Any]:
    """The envelope and what every message's data carries; returns the data."""
    assert set(message) == {"type", "timestamp", "data"}
    assert message["type"] == kind
    assert message["timestamp"].endswith("Z")
    data: dict[str, Any] = message["data"]
    decision = Decision.objects.get(pk=decision_id)
    assert data["id"] == decision_id
    assert data["url"] == f"http://127.0.0.1:8000/api/v1/decisions/{decision_id}/"
    assert (data["zone"], data["agent"], data["gate"]) == (ZONE, AGENT, decision.gate)
    assert data["sufficiency"] == pytest.approx(decision.sufficiency)
    assert data["policy_version"] == decision.policy_label
    return data


def test_a_blocked_answer_is_told_as_failed_with_its_refusal_scores_and_thresholds(
    policy_doc: Any, webhook_agent: tuple[ApiToken, APIClient], receiver: WebhookReceiver
) -> None:
    # given an agent with a webhook, when its answer cites the wrong number
    token, client = webhook_agent
    decision_id = submit(client, policy_doc, WRONG_NUMBER)

    # then it was blocked, and the agent was told once, signed
    decision = Decision.objects.get(pk=decision_id)
    assert (decision.state, decision.gate) == ("failed", "blocked")
    assert len(receiver.hooks) == 1
    hook = receiver.hooks[0]
    assert signed_by(token, hook)
    data = check_common(hook.json(), decision_id, "decision.failed")
    assert (data["state"], data["gate"]) == ("failed", "blocked")
    assert data["reason"] == decision.outcome_reason
    # with the refusal as the decision resource shows it: what was found, the scores, what
    # to try, and the thresholds it fell short of
    refusal = data["refusal"]
    assert refusal == client.get(f"/api/v1/decisions/{decision_id}/").json()["refusal"]
    assert [found["claim"] for found in refusal["found"]] == [WRONG_NUMBER]
    assert refusal["found"][0]["supported"] is False
    assert refusal["try"]
    assert refusal["sufficiency"] == pytest.approx(decision.sufficiency)
    policy = decision.report.policy
    assert data["thresholds"] == {
        key: policy[key] for key in ("tau", "delta", "floor", "refusal_floor", "cohesion_tau")
    }
    assert data["sufficiency"] < data["thresholds"]["refusal_floor"]
    # and the delivery changed nothing: the decision stays failed, the row is sent
    assert Decision.objects.get(pk=decision_id).state == "failed"
    row = Outbox.objects.get(decision_id=decision_id, kind=Outbox.Kind.WEBHOOK)
    assert (row.sent_at is not None, row.last_error) == (True, "")


def test_a_rejected_answer_is_told_with_the_reviewers_reason_and_the_claims(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given an answer waiting for a reviewer: nothing is told while it waits
    set_policy(**STRICT)
    token, client = webhook_agent
    decision_id = submit(client, policy_doc, GOOD)
    assert Decision.objects.get(pk=decision_id).state == "approval_required"
    assert receiver.hooks == []

    # when a reviewer rejects it
    rita = reviewer("rita", ZONE)
    services.decision_claim(decision_id=decision_id, user=rita)
    services.decision_reject(
        decision_id=decision_id,
        user=rita,
        reason="section 2 names the line manager",
        claims=[{"index": 0, "supported": False}],
    )

    # then the agent is told, with the reason, the reviewer and each claim with its verdict
    assert len(receiver.hooks) == 1
    hook = receiver.hooks[0]
    assert signed_by(token, hook)
    data = check_common(hook.json(), decision_id, "decision.rejected")
    assert (data["state"], data["gate"]) == ("failed", "required")
    assert data["reason"] == "section 2 names the line manager"
    assert data["reviewer"] == "rita"
    report = Decision.objects.get(pk=decision_id).report
    assert data["claims"] == [
        {
            "index": 0,
            "text": GOOD,
            "supported": True,
            "reasons": report.body["claims"][0]["reasons"][:3],
        }
    ]


def test_an_approved_answer_is_told_as_completed_with_the_answer(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given an answer waiting for a reviewer, when a reviewer approves it
    set_policy(**STRICT)
    token, client = webhook_agent
    decision_id = submit(client, policy_doc, GOOD)
    rita = reviewer("rita", ZONE)
    services.decision_approve(decision_id=decision_id, user=rita, reason="as section 2 says")

    # then the release is told once, and its 2xx completed the decision
    assert len(receiver.hooks) == 1
    hook = receiver.hooks[0]
    assert signed_by(token, hook)
    data = check_common(hook.json(), decision_id, "decision.completed")
    assert data["state"] == "completed"
    assert (data["release"], data["reason"], data["submitted_answer"]) == (
        "approved",
        "as section 2 says",
        GOOD,
    )
    # tau 0.99 leaves its sufficiency in the hedged band: delivered after the hedge sentence
    assert data["mode"] == "hedged"
    assert data["answer"] == f"Based on limited evidence; this answer may be incomplete. {GOOD}"
    assert (data["not_answered"], data["replaced"]) == ([], False)
    assert Decision.objects.get(pk=decision_id).state == "completed"


def test_a_refusal_goes_out_as_the_answer_its_reviewer_wrote(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given an answer below tau - 2*delta (a refusal) waiting for a reviewer
    set_policy(tau=0.99, delta=0.01, refusal_floor=0.05)
    token, client = webhook_agent
    decision_id = submit(client, policy_doc, GOOD)
    assert Decision.objects.get(pk=decision_id).mode == "refusal"

    # when the reviewer approves it with the answer to deliver
    written = "The division head approves expenses above 500,000 yen."
    rita = reviewer("rita", ZONE)
    services.decision_approve(decision_id=decision_id, user=rita, replacement=written)

    # then the agent receives the reviewer's answer, told it was replaced, beside its own
    assert signed_by(token, receiver.hooks[0])
    data = check_common(receiver.hooks[0].json(), decision_id, "decision.completed")
    assert (data["answer"], data["replaced"], data["submitted_answer"]) == (written, True, GOOD)


def test_a_partial_answer_goes_out_with_the_parts_it_does_not_answer(
    policy_doc: Any, webhook_agent: tuple[ApiToken, APIClient], receiver: WebhookReceiver
) -> None:
    # given a two-part question whose answer gives only the approver
    token, client = webhook_agent
    response = client.post(
        "/api/v1/decisions/",
        {
            "question": "Who approves travel expenses above 500,000 yen? "
            "How many days does reimbursement of approved expenses take?",
            "answer": GOOD,
            "zone": ZONE,
            "agent": AGENT,
            "claims": [{"text": GOOD, "citations": [cite(policy_doc)]}],
        },
        format="json",
    )
    decision_id = int(response.json()["id"])

    # then it is released as partial, with the missing part named in a field and the text
    assert signed_by(token, receiver.hooks[0])
    data = check_common(receiver.hooks[0].json(), decision_id, "decision.completed")
    assert data["mode"] == "partial"
    assert len(data["not_answered"]) == 1
    assert "days" in data["not_answered"][0]
    assert data["answer"] == f"{GOOD}\n\nNot answered: {data['not_answered'][0]}"


def test_an_overdue_review_is_told_as_escalated_and_its_later_outcome_as_another_message(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given an answer whose review is past its due time
    set_policy(**STRICT)
    token, client = webhook_agent
    decision_id = submit(client, policy_doc, GOOD)
    Decision.objects.filter(pk=decision_id).update(due_at=timezone.now() - timedelta(minutes=1))

    # when the periodic escalation runs
    assert tasks.escalate_overdue() == 1

    # then the agent is told where its review went and when it is due now
    assert len(receiver.hooks) == 1
    escalated = receiver.hooks[0]
    assert signed_by(token, escalated)
    data = check_common(escalated.json(), decision_id, "decision.escalated")
    decision = Decision.objects.get(pk=decision_id)
    assert data["state"] == "approval_required"
    assert data["escalated_to"] == "G1.U1.P1" == decision.escalated_to
    assert decision.due_at is not None
    assert data["due_at"] == decision.due_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert data["reason"]

    # and when the authority above approves it, that outcome is a message of its own
    services.decision_approve(decision_id=decision_id, user=reviewer("uma", "G1.U1.P1"))
    assert [h.json()["type"] for h in receiver.hooks] == [
        "decision.escalated",
        "decision.completed",
    ]
    ids = [header(h.headers, "webhook-id") for h in receiver.hooks]
    assert len(set(ids)) == 2


@pytest.mark.parametrize("receiver", [(500, 503, 200)], indirect=True)
def test_retries_after_a_500_send_the_same_message_under_the_same_webhook_id(
    policy_doc: Any,
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a receiver that fails twice, then takes it
    waits = retry_inline(monkeypatch)
    token, client = webhook_agent

    # when an answer is blocked
    decision_id = submit(client, policy_doc, WRONG_NUMBER)

    # then the one message was posted three times, backing off before each retry, with one
    # webhook-id and one body, each attempt signed (for its own timestamp)
    assert len(receiver.hooks) == 3
    assert waits == [0, 1]
    assert len({header(h.headers, "webhook-id") for h in receiver.hooks}) == 1
    assert len({h.body for h in receiver.hooks}) == 1
    assert all(signed_by(token, hook) for hook in receiver.hooks)
    assert receiver.hooks[0].json()["type"] == "decision.failed"
    row = Outbox.objects.get(decision_id=decision_id, kind=Outbox.Kind.WEBHOOK)
    assert (row.sent_at is not None, row.attempts) == (True, 3)
    assert row.payload["webhook_id"] == header(receiver.hooks[0].headers, "webhook-id")
    # and the decision stayed as it was
    assert Decision.objects.get(pk=decision_id).state == "failed"


def closed_port_url() -> str:
    """A receiver that is down: a port on 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/hooks/down"


def _dispatch_webhooks() -> None:
    webhook_due.connect(tasks._deliver_later, dispatch_uid="decisions.deliver_webhook")


@pytest.fixture
def held_dispatch() -> Iterator[Callable[[], None]]:
    """Rows wait in the outbox, as when their tasks were lost, until the sweep sends them;
    call the fixture's value to send webhooks again."""
    assert webhook_due.disconnect(dispatch_uid="decisions.deliver_webhook")
    try:
        yield _dispatch_webhooks
    finally:
        _dispatch_webhooks()  # connecting twice under one dispatch_uid connects once


def test_a_receiver_that_is_down_does_not_keep_another_agents_webhooks_from_being_sent(
    org: Any,
    policy_doc: Any,
    receiver: WebhookReceiver,
    held_dispatch: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given two agents' blocked answers waiting in the outbox, the first one's receiver down
    down, down_client = agent_with_webhook(AGENT, closed_port_url())
    up, up_client = agent_with_webhook(OTHER_AGENT, receiver.url)
    first = submit(down_client, policy_doc, WRONG_NUMBER)
    second = submit(up_client, policy_doc, WRONG_NUMBER, agent=OTHER_AGENT)
    rows = Outbox.objects.filter(kind=Outbox.Kind.WEBHOOK).order_by("pk")
    assert [row.decision_id for row in rows] == [first, second]
    rows.update(created_at=timezone.now() - timedelta(minutes=5))
    monkeypatch.setattr(tasks.deliver_webhook, "max_retries", 1)
    retry_inline(monkeypatch)

    # when the sweep sends them
    held_dispatch()
    assert tasks.sweep_outbox() == 2

    # then the second agent got its message, and the first one's row was tried and settled
    assert len(receiver.hooks) == 1
    assert receiver.hooks[0].json()["data"]["id"] == second
    assert signed_by(up, receiver.hooks[0])
    sent = {row.decision_id: row for row in Outbox.objects.filter(kind=Outbox.Kind.WEBHOOK)}
    assert (sent[second].sent_at is not None, sent[second].last_error) == (True, "")
    assert sent[first].sent_at is not None
    assert sent[first].attempts == 2
    assert sent[first].last_error.startswith("could not reach the receiver")
    assert down.webhook_url != up.webhook_url


def test_a_row_whose_dispatch_fails_does_not_stop_the_sweep(
    org: Any,
    policy_doc: Any,
    receiver: WebhookReceiver,
    held_dispatch: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given two agents' messages waiting, and a broker that refuses the first one's task
    _, client = agent_with_webhook(AGENT, receiver.url)
    up, other = agent_with_webhook(OTHER_AGENT, receiver.url)
    first = submit(client, policy_doc, WRONG_NUMBER)
    second = submit(other, policy_doc, WRONG_NUMBER, agent=OTHER_AGENT)
    Outbox.objects.update(created_at=timezone.now() - timedelta(minutes=5))
    first_row = Outbox.objects.get(decision_id=first, kind=Outbox.Kind.WEBHOOK)
    send = tasks.deliver_webhook.delay

    def refusing(outbox_id: int) -> Any:
        if outbox_id == first_row.pk:
            raise RuntimeError("the broker refused the message")
        return send(outbox_id)

    monkeypatch.setattr(tasks.deliver_webhook, "delay", refusing)
    held_dispatch()

    # when the sweep runs
    tasks.sweep_outbox()

    # then the second message went out, and the first waits for a later sweep with the error
    assert [h.json()["data"]["id"] for h in receiver.hooks] == [second]
    assert signed_by(up, receiver.hooks[0])
    waiting = Outbox.objects.get(pk=first_row.pk)
    assert waiting.sent_at is None
    assert waiting.last_error == "the broker refused the message"
    assert waiting.next_attempt_at is not None
    assert waiting.next_attempt_at > timezone.now()


def test_a_row_of_the_previous_release_is_sent_as_a_completed_message_under_a_stable_id(
    policy_doc: Any,
    set_policy: Callable[..., Any],
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
) -> None:
    # given a released answer, and a row queued before this release ({"token", "url"} only)
    set_policy(tau=0.3, refusal_floor=0.2, floor=0.05)
    token, client = webhook_agent
    decision_id = submit(client, policy_doc, GOOD)
    row = Outbox.objects.create(
        kind=Outbox.Kind.WEBHOOK,
        decision_id=decision_id,
        payload={"token": token.pk, "url": token.webhook_url},
    )

    # when it is sent
    assert tasks.deliver_webhook.delay(row.pk).get() == "delivered"

    # then it arrives as the release's message, named after its row
    hook = receiver.hooks[-1]
    assert signed_by(token, hook)
    assert header(hook.headers, "webhook-id") == f"msg_outbox_{row.pk}"
    data = check_common(hook.json(), decision_id, "decision.completed")
    assert (data["release"], data["answer"]) == ("auto", GOOD)


@pytest.mark.parametrize("receiver", [(500,)], indirect=True)
def test_a_task_the_sweep_queues_again_goes_on_from_the_rows_attempts(
    policy_doc: Any,
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
    held_dispatch: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a message tried twice already by a task that was then lost (the broker restarted
    # without its queue), and a receiver that still answers 500
    _, client = webhook_agent
    decision_id = submit(client, policy_doc, WRONG_NUMBER)
    Outbox.objects.filter(decision_id=decision_id, kind=Outbox.Kind.WEBHOOK).update(
        attempts=2, created_at=timezone.now() - timedelta(minutes=5)
    )
    monkeypatch.setattr(tasks.deliver_webhook, "max_retries", 2)
    retry_inline(monkeypatch)

    # when the sweep queues it again
    held_dispatch()
    tasks.sweep_outbox()

    # then it has its last attempt only, and is settled with the error
    assert len(receiver.hooks) == 1
    row = Outbox.objects.get(decision_id=decision_id, kind=Outbox.Kind.WEBHOOK)
    assert (row.sent_at is not None, row.attempts, row.last_error) == (
        True,
        3,
        "the receiver answered 500",
    )


def test_an_answer_given_up_on_in_validation_is_told_as_failed_without_a_refusal(
    policy_doc: Any,
    webhook_agent: tuple[ApiToken, APIClient],
    receiver: WebhookReceiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a validation that fails every time
    def broken(**_: Any) -> Any:
        raise RuntimeError("the embedder is away")

    monkeypatch.setattr(tasks, "decision_validate", broken)
    monkeypatch.setattr(tasks, "VALIDATION_RETRIES", 1)
    monkeypatch.setattr(tasks.validate_decision, "max_retries", 1)
    retry_inline(monkeypatch)
    token, client = webhook_agent

    # when an answer is submitted, its retries run out
    decision_id = submit(client, policy_doc, GOOD)
    assert Decision.objects.get(pk=decision_id).state == "failed"

    # then the agent is told, with the reason, and no refusal or thresholds (none was graded)
    assert len(receiver.hooks) == 1
    assert signed_by(token, receiver.hooks[0])
    data = receiver.hooks[0].json()["data"]
    assert receiver.hooks[0].json()["type"] == "decision.failed"
    assert (data["id"], data["state"], data["gate"]) == (decision_id, "failed", None)
    assert data["reason"].startswith("validation failed after 2 attempts")
    assert (data["refusal"], data["thresholds"]) == (None, None)
