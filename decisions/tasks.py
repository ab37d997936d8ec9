"""Celery tasks of the decision pipeline: thin wrappers that call a service."""

from __future__ import annotations

import logging
import random
from datetime import timedelta
from functools import partial
from typing import Any

from celery import Task, current_app, shared_task
from django.conf import settings
from django.db import DatabaseError, transaction
from django.dispatch import receiver
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from coordinates.models import ApiToken
from decisions import rereview
from decisions.calibration import calibrations_propose_due
from decisions.models import Decision, Outbox, State
from decisions.outbox import (
    outbox_claim,
    outbox_done,
    outbox_retry_later,
    outbox_sweep,
    webhook_message,
)
from decisions.services import (
    decision_confirm_delivery,
    decision_delivery_failed,
    decision_validate,
    decision_validation_failed,
    decisions_escalate_overdue,
)
from decisions.signals import validation_wanted, validations_taken, webhook_due
from decisions.webhooks import COMPLETED, DeliveryError, body_of, post
from evidence.signals import conflict_resolved, version_stored
from evidence.tasks import RETRIED, retried_then_quarantined
from maria.metrics import TASK_RETRIES
from trail.quarantine import quarantine, quarantined, reason_of

log = logging.getLogger(__name__)


# --- the decision pipeline -------------------------------------------------------------------

VALIDATION_RETRIES = 5
WEBHOOK_RETRIES = 8


def backoff(retries: int, *, base: float = 2.0, cap: float = 300.0) -> float:
    """Exponential backoff with full jitter: a random wait in [0, min(cap, base * 2^n)]."""
    return random.uniform(0, min(cap, base * 2**retries))  # noqa: S311 - not for secrets


def validation_task_id(decision_id: int) -> str:
    """A decision's validation task has an id named after it (its retries keep it), so a run
    that validated the decision in a batch can name the task to drop."""
    return f"validate-decision-{decision_id}"


def validations_skip(decision_ids: list[int]) -> None:
    """Ask the workers to drop the queued tasks of these decisions, validated by a batch that
    committed: a worker discards a revoked message unrun, in its main process, where running
    it only to find the decision validated cost about 3 ms of CPU. Best effort: a worker that
    misses the request (started later, or after 50,000 newer ones) runs the task, which
    changes nothing."""
    if decision_ids and not current_app.conf.task_always_eager:
        try:
            current_app.control.revoke([validation_task_id(i) for i in decision_ids])
        except BrokerUnreachable as error:
            log.warning("validated tasks not revoked", extra={"error": str(error)})


# How long a decision may stay proposed before its validation is asked for again: longer than
# a validation's retries take (their backoff ceilings add up to 62 s), so a decision that is
# merely retrying is not sent twice.
RESEND_AFTER = timedelta(seconds=120)


def validation_send(decision_id: int, bundle_hash: str) -> bool:
    """Queue the decision's validation task; False when the broker is unreachable. The
    decision stays proposed, which is what `validations_resend` looks for, so nothing is
    lost and the caller (an after-commit hook) must not fail for it."""
    try:
        validate_decision.apply_async(
            (decision_id, bundle_hash), task_id=validation_task_id(decision_id)
        )
    except BrokerUnreachable as error:
        log.warning(
            "validation not queued: the broker is unreachable; the resend will queue it",
            extra={"decision_id": decision_id, "error": str(error)},
        )
        return False
    return True


def validations_resend(*, older_than: timedelta = RESEND_AFTER, limit: int = 1000) -> int:
    """Queue again the validation of decisions still proposed `older_than` after they were
    submitted, oldest first: their task was lost (the broker was unreachable at commit, or
    restarted without its queue). The proposed state is the queue and a task only wakes a
    worker for it, so a second task for a decision whose first is merely late changes
    nothing (`decision_validate` is idempotent). Decisions their task set aside (quarantine)
    are left to the operators. Returns how many were queued."""
    waiting = list(
        Decision.objects.filter(state=State.PROPOSED, created_at__lt=timezone.now() - older_than)
        .order_by("pk")
        .values_list("pk", "bundle__content_hash")[:limit]
    )
    set_aside = quarantined(
        run=validate_decision.name, subjects=[f"decision:{pk}" for pk, _ in waiting]
    )
    sent = 0
    for decision_id, bundle_hash in waiting:
        if f"decision:{decision_id}" not in set_aside:
            if not validation_send(decision_id, bundle_hash):
                break  # the broker is away: the next run tries again
            sent += 1
    return sent


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=VALIDATION_RETRIES)
def validate_decision(self: Task, decision_id: int, bundle_hash: str) -> str:
    """Validate, grade and route one decision, and on a first try as many as
    settings.MARIA_VALIDATION_BATCH - 1 other waiting ones of its zone with it; retried
    alone, so that no other decision's trouble can fail it, with jittered backoff, then
    failed and quarantined (`_validation_given_up`)."""
    others = settings.MARIA_VALIDATION_BATCH - 1 if self.request.retries == 0 else 0
    try:
        # The service records the validation latency, only for the run that validated it.
        decision = decision_validate(
            decision_id=decision_id, bundle_hash=bundle_hash, others=others
        )
        return str(decision.state)
    except Exception as error:
        if self.request.retries >= self.max_retries or _given_up_before(self, decision_id):
            return _validation_given_up(self, decision_id, error)
        TASK_RETRIES.labels(task="validate_decision").inc()
        log.warning("validation retry", extra={"decision_id": decision_id, "error": str(error)})
        raise self.retry(exc=error, countdown=backoff(self.request.retries)) from error


def _given_up_before(task: Task, decision_id: int) -> bool:
    """Whether an earlier run quarantined the decision: a task delivered again for it gives
    up at once, without its retries. Asked only once the validation failed, so the pipeline
    pays nothing for it; a database that is away answers no, and the task retries."""
    try:
        return bool(quarantined(run=task.name, subjects=[f"decision:{decision_id}"]))
    except DatabaseError:
        return False


def _validation_given_up(task: Task, decision_id: int, error: Exception) -> str:
    """The retries ran out: the decision fails with the reason, never silently stays
    proposed, and is quarantined for the operators. When even failing it fails (a row the
    services cannot read), it stays proposed, where it was, quarantined with both errors."""
    reason = f"validation failed after {task.request.retries + 1} attempts: {error}"
    log.error("validation failed for good", extra={"decision_id": decision_id, "error": str(error)})
    subject = f"decision:{decision_id}"
    try:
        decision_validation_failed(decision_id=decision_id, reason=reason)
    except Exception as failing:
        both = f"{reason_of(error)}; then failing it: {reason_of(failing)}"
        quarantine(run=task.name, subject=subject, error=both)
        return "quarantined"
    quarantine(run=task.name, subject=subject, error=error)
    return "failed"


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=WEBHOOK_RETRIES)
def deliver_webhook(self: Task, outbox_id: int) -> str:
    """POST an outbox row's message to the agent's webhook (decisions/webhooks.py), under the
    row's webhook id on every attempt; retried with jittered backoff. A 2xx for a
    `decision.completed` completes the decision; when the retries run out for it, the
    decision fails (the released answer never reached its agent); for any other message the
    row is settled with the error, the decision being final already. A row the message
    cannot even be built from is retried as well (the database may have been away), then
    quarantined and settled, its decision left where it was: the sweep stops sending it, and
    an operator finds it in the quarantine.

    The attempts are counted on the row, so a task the sweep queued again for it (its own was
    lost) goes on from them instead of starting over; each row is a task of its own, so an
    agent whose receiver is down delays nobody else's."""
    row = outbox_claim(outbox_id)
    if row is None:
        return "taken"
    decision_id = row.decision_id
    tried = max(self.request.retries, row.attempts - 1)  # attempts before this one
    try:
        token = ApiToken.objects.filter(pk=row.payload["token"]).first()
        if token is None or decision_id is None:
            outbox_done(row)
            return "dropped"
        webhook_id, message = webhook_message(row)
        body = body_of(message)
    except Exception as error:
        if tried >= self.max_retries:
            outbox_done(row, last_error=reason_of(error))
            quarantine(run=self.name, subject=f"outbox:{outbox_id}", error=error)
            return "quarantined"
        return _webhook_retry(self, row, reason_of(error), error, backoff(tried))
    completes = message["type"] == COMPLETED  # its 2xx is the delivery of the released answer
    where = {"decision_id": decision_id, "outbox_id": outbox_id, "webhook_id": webhook_id}
    try:
        post(token.webhook_url, token.webhook_secret, webhook_id=webhook_id, body=body)
    except DeliveryError as error:
        if tried >= self.max_retries:
            log.error("webhook failed for good", extra={**where, "error": str(error)})
            with transaction.atomic():  # as for a delivery, below
                outbox_done(row, last_error=str(error))
                if completes:
                    decision_delivery_failed(decision_id=decision_id, reason=f"webhook: {error}")
            return "failed"
        log.warning("webhook retry", extra={**where, "error": str(error)})
        return _webhook_retry(self, row, str(error), error, backoff(tried))
    if not completes:
        outbox_done(row)
        return "delivered"
    # The row is marked sent in the transaction that completes the decision: a sender that
    # died between the two would leave the decision executed for good (the sweep skips sent
    # rows); killed inside it, the row stays unsent and is sent again after its lease.
    with transaction.atomic():
        outbox_done(row)
        decision_confirm_delivery(decision_id=decision_id, how="webhook delivered")
    return "delivered"


def _webhook_retry(task: Task, row: Outbox, reason: str, error: Exception, delay: float) -> str:
    """The row waits `delay` seconds for its next attempt (`next_attempt_at`). A worker gets
    the retry after that countdown; eager Celery (`make run`) would run it at once, the
    whole backoff within a second, so there the outbox sweep of the scheduler sends it when
    it is due, counting on from the row's attempts. A retry with no wait runs at once."""
    TASK_RETRIES.labels(task="deliver_webhook").inc()
    outbox_retry_later(row, reason, timedelta(seconds=delay))
    if task.request.is_eager and delay > 0:
        log.info(
            "webhook retry left to the outbox sweep",
            extra={"outbox_id": row.pk, "retry_in_seconds": round(delay, 1)},
        )
        return "retry scheduled"
    raise task.retry(exc=error, countdown=delay) from error


@shared_task
def escalate_overdue() -> int:
    return decisions_escalate_overdue()


@shared_task
def sweep_outbox() -> int:
    return outbox_sweep()


@shared_task
def resend_validations() -> int:
    return validations_resend()


@shared_task
def propose_calibrations() -> dict[str, list[str]]:
    """Weekly: propose a calibration version for every zone with enough new reviewer verdicts
    since its last one (decisions.calibration); a zone that fails is logged and skipped."""
    run = calibrations_propose_due(fitted_by="weekly job")
    return {"proposed": run.proposed, "skipped": run.skipped, "failed": run.failed}


# --- what the services ask for after commit (decisions.signals) ----------------------------


@receiver(validation_wanted, dispatch_uid="decisions.validate_decision")
def _validate_later(*, decision_id: int, bundle_hash: str, **_: Any) -> None:
    validation_send(decision_id, bundle_hash)


@receiver(validations_taken, dispatch_uid="decisions.validations_skip")
def _skip_taken(*, decision_ids: list[int], **_: Any) -> None:
    validations_skip(decision_ids)


@receiver(webhook_due, dispatch_uid="decisions.deliver_webhook")
def _deliver_later(*, outbox_id: int, **_: Any) -> None:
    try:
        deliver_webhook.delay(outbox_id)
    except BrokerUnreachable as error:  # the row stays unsent: the outbox sweep sends it
        log.warning(
            "webhook not queued: the broker is unreachable; the sweep will queue it",
            extra={"outbox_id": outbox_id, "error": str(error)},
        )


# --- when the text behind past answers changes (decisions.rereview) ------------------------


@shared_task(**RETRIED)
def rereview_version(self: Task, version_id: int) -> int:
    return retried_then_quarantined(
        self,
        subject=f"version:{version_id}",
        work=partial(rereview.rereview_superseded, version_id=version_id),
    )


@shared_task(**RETRIED)
def rereview_resolved_conflict(self: Task, conflict_id: int) -> int:
    return retried_then_quarantined(
        self,
        subject=f"conflict:{conflict_id}",
        work=partial(rereview.rereview_conflict, conflict_id=conflict_id),
    )


@receiver(version_stored, dispatch_uid="decisions.rereview_version")
def _rereview_stored_version(*, version_id: int, **_: Any) -> None:
    rereview_version.delay(version_id)


@receiver(conflict_resolved, dispatch_uid="decisions.rereview_resolved_conflict")
def _rereview_resolved(*, conflict_id: int, **_: Any) -> None:
    rereview_resolved_conflict.delay(conflict_id)
