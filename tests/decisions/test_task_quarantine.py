"""The pipeline's tasks when one record cannot be processed: the decision is quarantined
after its retries (failed when it can be, else left proposed), a webhook row the payload
cannot be built from is quarantined and settled, and the others go through."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.utils import timezone

from coordinates.coordinate import parse
from coordinates.services import token_issue
from decisions import tasks
from decisions.models import Decision, Outbox
from decisions.services import decision_submit
from maria.metrics import QUARANTINED
from tests.decisions.conftest import AGENT, GOOD, ZONE, cite
from tests.decisions.helpers import WebhookReceiver, retry_inline
from tests.trail_support import triggers_bypassed
from trail.models import Quarantine

pytestmark = pytest.mark.django_db

VALIDATE = "decisions.tasks.validate_decision"
DELIVER = "decisions.tasks.deliver_webhook"


def counted(run: str) -> float:
    return QUARANTINED.labels(run=run)._value.get()


def quarantine_logs(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.subject for r in caplog.records if r.getMessage() == "quarantined"]  # type: ignore[attr-defined]


def test_a_decision_that_can_be_neither_validated_nor_failed_is_quarantined_where_it_was(
    policy_doc: Any,
    submit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # given an answer waiting for validation whose stored zone was edited into something
    # that is no coordinate (its policy cannot be read, nor its trail lane found)
    token, _ = token_issue(agent=parse(AGENT))
    payload = {
        "question": "Who approves travel expenses above 500,000 yen?",
        "answer": GOOD,
        "zone": ZONE,
        "agent": AGENT,
        "claims": [{"text": GOOD, "citations": [cite(policy_doc)]}],
    }
    bad = decision_submit(token=token, payload=payload).decision
    with triggers_bypassed():  # a decision keeps its zone: this one is broken by hand
        Decision.objects.filter(pk=bad.pk).update(zone="nowhere")
    real = tasks.decision_validate
    tries: list[int] = []

    def spied(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        tries.append(decision_id)
        return real(decision_id=decision_id, bundle_hash=bundle_hash, others=others)

    monkeypatch.setattr(tasks, "decision_validate", spied)
    retry_inline(monkeypatch)
    before = counted(VALIDATE)

    # when its validation runs, and another answer is submitted
    with caplog.at_level(logging.WARNING, logger="trail.quarantine"):
        result = tasks.validate_decision.apply(args=(bad.pk, bad.bundle.content_hash))
    other = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()

    # then the other went through, and the bad one was tried 1 + its retries, then set aside
    # once with both errors, counted and logged, and left proposed: not lost, not half-failed
    assert other["state"] == "completed"
    assert (result.successful(), result.result) == (True, "quarantined")
    assert tries.count(bad.pk) == tasks.VALIDATION_RETRIES + 1
    assert Decision.objects.get(pk=bad.pk).state == "proposed"
    row = Quarantine.objects.get()
    assert (row.run, row.subject, row.count) == (VALIDATE, f"decision:{bad.pk}", 1)
    assert row.reason.startswith("CoordinateError: ")
    assert "; then failing it: CoordinateError: " in row.reason
    assert counted(VALIDATE) - before == 1
    assert quarantine_logs(caplog) == [f"decision:{bad.pk}"]

    # when its task is delivered again
    tries.clear()
    again = tasks.validate_decision.apply(args=(bad.pk, bad.bundle.content_hash))

    # then it gives up at once instead of running its retries again
    assert (again.successful(), again.result) == (True, "quarantined")
    assert tries == [bad.pk]
    assert Quarantine.objects.get().count == 2


def test_a_validation_that_keeps_failing_fails_the_decision_and_quarantines_it(
    policy_doc: Any, submit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a validation that raises every time it runs
    def broken(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        raise RuntimeError("the embedding service is unreachable")

    monkeypatch.setattr(tasks, "decision_validate", broken)
    retry_inline(monkeypatch)
    before = counted(VALIDATE)

    # when an answer is submitted
    made = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()

    # then it failed with the reason (tests/decisions/test_worker.py), and the operators
    # find it in the quarantine too
    assert made["state"] == "failed"
    row = Quarantine.objects.get()
    assert (row.run, row.subject) == (VALIDATE, f"decision:{made['id']}")
    assert row.reason == "RuntimeError: the embedding service is unreachable"
    assert counted(VALIDATE) - before == 1


def test_a_quarantine_that_cannot_be_read_leaves_the_retries_as_they_were(
    policy_doc: Any, submit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a validation that keeps failing, and a quarantine table that cannot be read
    calls: list[int] = []

    def broken(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
        calls.append(decision_id)
        raise RuntimeError("the embedding service is unreachable")

    def unreadable(**_: Any) -> set[str]:
        raise OperationalError("the database is away")

    monkeypatch.setattr(tasks, "decision_validate", broken)
    monkeypatch.setattr(tasks, "quarantined", unreadable)
    retry_inline(monkeypatch)

    # when an answer is submitted, then it is retried as ever, and fails in the end
    made = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    assert len(calls) == tasks.VALIDATION_RETRIES + 1
    assert made["state"] == "failed"


def test_a_webhook_row_the_payload_cannot_be_built_from_is_quarantined_and_the_sweep_goes_on(
    policy_doc: Any,
    submit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # given a released answer, and two webhook rows the senders never sent: a good one, and
    # one whose payload lost its token
    made = submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    decision = Decision.objects.get(pk=made["id"])
    state = decision.state
    monkeypatch.setattr(tasks.deliver_webhook, "max_retries", 2)
    retry_inline(monkeypatch)
    before = counted(DELIVER)
    with WebhookReceiver((200,)).running() as receiver:
        webhook, _ = token_issue(agent=parse("G1.U1.P1.Z1.A2"), webhook_url=receiver.url)
        good = Outbox.objects.create(
            kind=Outbox.Kind.WEBHOOK,
            decision=decision,
            payload={"token": webhook.pk, "url": receiver.url},
        )
        bad = Outbox.objects.create(
            kind=Outbox.Kind.WEBHOOK, decision=decision, payload={"url": receiver.url}
        )
        Outbox.objects.update(created_at=timezone.now() - timedelta(minutes=5))

        # when the sweep sends what was left, and sweeps again
        with caplog.at_level(logging.WARNING, logger="trail.quarantine"):
            swept = tasks.sweep_outbox()
        swept_again = tasks.sweep_outbox()

    # then the good row was delivered, and the bad one tried 1 + its retries, then settled
    # with its error and set aside once, counted and logged; the decision is where it was
    assert swept == 2
    assert len(receiver.hooks) == 1
    assert Outbox.objects.get(pk=good.pk).sent_at is not None
    settled = Outbox.objects.get(pk=bad.pk)
    assert (settled.sent_at is not None, settled.attempts) == (True, 3)
    assert settled.last_error == "KeyError: 'token'"
    row = Quarantine.objects.get()
    assert (row.run, row.subject, row.reason) == (DELIVER, f"outbox:{bad.pk}", "KeyError: 'token'")
    assert counted(DELIVER) - before == 1
    assert quarantine_logs(caplog) == [f"outbox:{bad.pk}"]
    assert Decision.objects.get(pk=decision.pk).state == state
    # and the next sweep finds nothing left to send
    assert swept_again == 0
