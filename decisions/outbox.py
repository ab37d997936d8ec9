"""Sending the outbox: websocket pushes at once after commit, webhooks through Celery.

A row is claimed with a compare-and-set (`UPDATE ... WHERE sent_at IS NULL AND the lease is
free`), so two senders never both send it; a sender that dies leaves the row to the sweep.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from coordinates.coordinate import Coordinate
from decisions.models import Outbox
from decisions.signals import queue_event, webhook_due

log = logging.getLogger(__name__)


def lease() -> timedelta:
    """How long a claim holds (settings.MARIA_OUTBOX_LEASE_SECONDS); an older one is taken to
    be a dead sender's, and the row may be claimed again. Longer than the slowest send (a
    webhook's timeout), or two senders would both send it."""
    return timedelta(seconds=settings.MARIA_OUTBOX_LEASE_SECONDS)


def outbox_send_after_commit(row: Outbox) -> None:
    row_id = row.pk
    transaction.on_commit(lambda: outbox_dispatch(row_id))


def outbox_dispatch(row_id: int) -> None:
    kind = Outbox.objects.filter(pk=row_id).values_list("kind", flat=True).first()
    if kind == Outbox.Kind.PUSH:
        outbox_push(row_id)
    elif kind == Outbox.Kind.WEBHOOK:
        webhook_due.send(sender=Outbox, outbox_id=row_id)


def outbox_claim(row_id: int) -> Outbox | None:
    now = timezone.now()
    claimed = (
        Outbox.objects.filter(pk=row_id, sent_at__isnull=True)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - lease()))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    return Outbox.objects.get(pk=row_id) if claimed else None


def outbox_done(row: Outbox, *, last_error: str = "") -> None:
    """The row is finished: sent, or given up on with the error that ended it."""
    Outbox.objects.filter(pk=row.pk).update(sent_at=timezone.now(), last_error=last_error[:2000])


def outbox_retry_later(row: Outbox, error: str, delay: timedelta) -> None:
    Outbox.objects.filter(pk=row.pk).update(
        claimed_at=None, last_error=error[:2000], next_attempt_at=timezone.now() + delay
    )


def outbox_push(row_id: int) -> bool:
    row = outbox_claim(row_id)
    if row is None:
        return False
    payload = dict(row.payload)
    zone = Coordinate.parse(payload.pop("zone"))
    try:
        queue_event.send(sender=Outbox, zone=zone, event=payload)
    except Exception as error:  # the layer is down: keep the row for the sweep
        log.warning(
            "push failed",
            extra={"outbox_id": row_id, "decision_id": row.decision_id, "error": str(error)},
        )
        outbox_retry_later(row, str(error), timedelta(seconds=5))
        return False
    outbox_done(row)
    return True


def outbox_sweep(older_than: timedelta = timedelta(seconds=30)) -> int:
    """Re-dispatch rows that were never sent (their process died after commit)."""
    now = timezone.now()
    stale = Outbox.objects.filter(sent_at__isnull=True, created_at__lt=now - older_than).filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    )
    ids = list(stale.values_list("pk", flat=True)[:1000])
    for row_id in ids:
        outbox_dispatch(row_id)
    return len(ids)
