"""Celery tasks of the decision pipeline: thin wrappers that call a service."""

from __future__ import annotations

import logging
import random
from datetime import timedelta
from typing import Any

from celery import Task, current_app, shared_task
from django.conf import settings
from django.dispatch import receiver

from coordinates.models import ApiToken
from decisions.models import Decision
from decisions.outbox import (
    outbox_claim,
    outbox_done,
    outbox_retry_later,
    outbox_sweep,
)
from decisions.representation import webhook_payload
from decisions.services import (
    decision_confirm_delivery,
    decision_delivery_failed,
    decision_validate,
    decision_validation_failed,
    decisions_escalate_overdue,
)
from decisions.signals import validation_wanted, validations_taken, webhook_due
from decisions.webhooks import DeliveryError, post
from maria.metrics import TASK_RETRIES

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
        current_app.control.revoke([validation_task_id(i) for i in decision_ids])


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=VALIDATION_RETRIES)
def validate_decision(self: Task, decision_id: int, bundle_hash: str) -> str:
    """Validate, grade and route one decision, and on a first try as many as
    settings.MARIA_VALIDATION_BATCH - 1 other waiting ones of its zone with it; retried
    alone, so that no other decision's trouble can fail it, with jittered backoff, then
    failed."""
    others = settings.MARIA_VALIDATION_BATCH - 1 if self.request.retries == 0 else 0
    try:
        # The service records the validation latency, only for the run that validated it.
        decision = decision_validate(
            decision_id=decision_id, bundle_hash=bundle_hash, others=others
        )
        return str(decision.state)
    except Exception as error:
        if self.request.retries >= self.max_retries:
            log.error(
                "validation failed for good",
                extra={"decision_id": decision_id, "error": str(error)},
            )
            decision_validation_failed(
                decision_id=decision_id,
                reason=f"validation failed after {self.request.retries + 1} attempts: {error}",
            )
            return "failed"
        TASK_RETRIES.labels(task="validate_decision").inc()
        log.warning("validation retry", extra={"decision_id": decision_id, "error": str(error)})
        raise self.retry(exc=error, countdown=backoff(self.request.retries)) from error


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=WEBHOOK_RETRIES)
def deliver_webhook(self: Task, outbox_id: int) -> str:
    """POST the released answer to the agent's webhook; retried, then the decision fails."""
    row = outbox_claim(outbox_id)
    if row is None:
        return "taken"
    token = ApiToken.objects.filter(pk=row.payload["token"]).first()
    decision_id = row.decision_id
    if token is None or decision_id is None:
        outbox_done(row)
        return "dropped"
    decision = Decision.objects.get(pk=decision_id)
    try:
        post(token.webhook_url, token.webhook_secret, webhook_payload(decision))
    except DeliveryError as error:
        if self.request.retries >= self.max_retries:
            log.error(
                "webhook failed for good",
                extra={"decision_id": decision_id, "outbox_id": outbox_id, "error": str(error)},
            )
            outbox_done(row, last_error=str(error))
            decision_delivery_failed(decision_id=decision_id, reason=f"webhook: {error}")
            return "failed"
        TASK_RETRIES.labels(task="deliver_webhook").inc()
        log.warning(
            "webhook retry",
            extra={"decision_id": decision_id, "outbox_id": outbox_id, "error": str(error)},
        )
        delay = backoff(self.request.retries)
        outbox_retry_later(row, str(error), timedelta(seconds=delay))
        raise self.retry(exc=error, countdown=delay) from error
    outbox_done(row)
    decision_confirm_delivery(decision_id=decision_id, how="webhook delivered")
    return "delivered"


@shared_task
def escalate_overdue() -> int:
    return decisions_escalate_overdue()


@shared_task
def sweep_outbox() -> int:
    return outbox_sweep()


# --- what the services ask for after commit (decisions.signals) ----------------------------


@receiver(validation_wanted, dispatch_uid="decisions.validate_decision")
def _validate_later(*, decision_id: int, bundle_hash: str, **_: Any) -> None:
    validate_decision.apply_async(
        (decision_id, bundle_hash), task_id=validation_task_id(decision_id)
    )


@receiver(validations_taken, dispatch_uid="decisions.validations_skip")
def _skip_taken(*, decision_ids: list[int], **_: Any) -> None:
    validations_skip(decision_ids)


@receiver(webhook_due, dispatch_uid="decisions.deliver_webhook")
def _deliver_later(*, outbox_id: int, **_: Any) -> None:
    deliver_webhook.delay(outbox_id)
