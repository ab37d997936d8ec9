"""Sending the outbox: websocket pushes at once after commit, webhooks through Celery.

A row is claimed with a compare-and-set (`UPDATE ... WHERE sent_at IS NULL AND the lease is
free`), so two senders never both send it; a sender that dies leaves the row to the sweep.

A webhook row holds its whole message, written in the transaction of the outcome it tells:
`{"token", "url", "webhook_id", "message"}` (decisions/webhooks.py). Every retry sends the
same message under the same `webhook_id`; rows of the previous release (`{"token", "url"}`)
are built from their decision when they are sent.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from coordinates.coordinate import Coordinate
from coordinates.models import ApiToken
from decisions.models import Approval, Decision, Gate, Outbox
from decisions.signals import queue_event, webhook_due
from decisions.webhooks import Message, completed_message, new_webhook_id

log = logging.getLogger(__name__)


def lease() -> timedelta:
    """How long a claim holds (settings.MARIA_OUTBOX_LEASE_SECONDS); an older one is taken to
    be a dead sender's, and the row may be claimed again. Longer than the slowest send (a
    webhook's timeout), or two senders would both send it."""
    return timedelta(seconds=settings.MARIA_OUTBOX_LEASE_SECONDS)


def outbox_send_after_commit(row: Outbox) -> None:
    # The row as this transaction wrote it: its kind and payload never change, so the send
    # after commit claims it without reading it back (two queries a push, not four).
    transaction.on_commit(lambda: outbox_dispatch(row.pk, row))


def webhook_tokens(user_ids: set[int]) -> dict[int, ApiToken]:
    """Each proposer's newest live token that has a webhook: where its answers' news goes."""
    tokens = ApiToken.objects.filter(user_id__in=user_ids, revoked_at__isnull=True).exclude(
        webhook_url=""
    )
    return {token.user_id: token for token in tokens.order_by("created_at", "pk")}


def webhook_token(user_id: int) -> ApiToken | None:
    return webhook_tokens({user_id}).get(user_id)


def outbox_webhook(decision: Decision, token: ApiToken | None, message: Message) -> None:
    """Queue `message` for `token`'s webhook, in the caller's transaction; sent after commit.
    Without a token that has a webhook there is no one to tell: the agent polls."""
    if token is None or not token.webhook_url:
        return
    outbox_send_after_commit(
        Outbox.objects.create(
            kind=Outbox.Kind.WEBHOOK,
            decision=decision,
            payload={
                "token": token.pk,
                "url": token.webhook_url,
                "webhook_id": new_webhook_id(),
                "message": dict(message),
            },
        )
    )


def webhook_message(row: Outbox) -> tuple[str, dict[str, Any]]:
    """A webhook row's id and message. A row of the previous release holds neither: it told a
    release, so it is that release's `decision.completed`, under an id named after the row."""
    payload = row.payload
    if "message" in payload:
        return str(payload["webhook_id"]), dict(payload["message"])
    decision = Decision.objects.select_related("report").get(pk=row.decision_id)
    if Approval.objects.filter(decision=decision).exists():
        message = completed_message(decision, release="approved")
    elif decision.gate == Gate.BLOCKED:
        message = completed_message(decision, release="overridden")
    else:
        message = completed_message(decision, release="auto")
    return f"msg_outbox_{row.pk}", dict(message)


def outbox_dispatch(row_id: int, written: Outbox | None = None) -> None:
    """Send row `row_id`; `written`: the row as its transaction wrote it, when at hand."""
    kind: str | None = (
        written.kind
        if written is not None
        else Outbox.objects.filter(pk=row_id).values_list("kind", flat=True).first()
    )
    if kind == Outbox.Kind.PUSH:
        outbox_push(row_id, written)
    elif kind == Outbox.Kind.WEBHOOK:
        webhook_due.send(sender=Outbox, outbox_id=row_id)


def outbox_claim(row_id: int, written: Outbox | None = None) -> Outbox | None:
    """The row, claimed; None when it is sent or another sender holds it. `written`: the row
    as its transaction wrote it, returned instead of being read again (what a sender uses of
    it, kind, decision and payload, never changes)."""
    now = timezone.now()
    claimed = (
        Outbox.objects.filter(pk=row_id, sent_at__isnull=True)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - lease()))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    if not claimed:
        return None
    return written if written is not None else Outbox.objects.get(pk=row_id)


def outbox_done(row: Outbox, *, last_error: str = "") -> None:
    """The row is finished: sent, or given up on with the error that ended it."""
    Outbox.objects.filter(pk=row.pk).update(sent_at=timezone.now(), last_error=last_error[:2000])


def outbox_retry_later(row: Outbox, error: str, delay: timedelta) -> None:
    Outbox.objects.filter(pk=row.pk).update(
        claimed_at=None, last_error=error[:2000], next_attempt_at=timezone.now() + delay
    )


def outbox_push(row_id: int, written: Outbox | None = None) -> bool:
    row = outbox_claim(row_id, written)
    if row is None or not _publish(row):
        return False
    outbox_done(row)
    return True


def outbox_push_after_commit(rows: Sequence[Outbox]) -> None:
    """Send the pushes a transaction wrote together once it commits (`outbox_push_many`)."""
    written = list(rows)
    if written:
        transaction.on_commit(lambda: outbox_push_many(written))


def outbox_push_many(rows: Sequence[Outbox]) -> int:
    """Claim, publish and finish pushes just written, with one claim and one "sent" for all
    of them, not two queries each: a batch of validations tells the reviewers' screens of
    each answer it queues. A row another sender holds is left to it. How many were sent."""
    now = timezone.now()
    ids = [row.pk for row in rows]
    claimed = (
        Outbox.objects.filter(pk__in=ids, sent_at__isnull=True)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - lease()))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    if claimed < len(ids):  # some were taken by another sender: this one's bear its moment
        mine = set(Outbox.objects.filter(pk__in=ids, claimed_at=now).values_list("pk", flat=True))
        rows = [row for row in rows if row.pk in mine]
    sent = [row.pk for row in rows if _publish(row)]
    if sent:
        Outbox.objects.filter(pk__in=sent).update(sent_at=timezone.now(), last_error="")
    return len(sent)


def _publish(row: Outbox) -> bool:
    """Hand a claimed push to the channel layer; when the layer is down, leave the row to the
    sweep and say False."""
    payload = dict(row.payload)
    zone = Coordinate.parse(payload.pop("zone"))
    try:
        queue_event.send(sender=Outbox, zone=zone, event=payload)
    except Exception as error:  # the layer is down: keep the row for the sweep
        log.warning(
            "push failed",
            extra={"outbox_id": row.pk, "decision_id": row.decision_id, "error": str(error)},
        )
        outbox_retry_later(row, str(error), timedelta(seconds=5))
        return False
    return True


def outbox_sweep(older_than: timedelta = timedelta(seconds=30)) -> int:
    """Re-dispatch rows that were never sent (their process died after commit)."""
    now = timezone.now()
    stale = Outbox.objects.filter(sent_at__isnull=True, created_at__lt=now - older_than).filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now)
    )
    ids = list(stale.values_list("pk", flat=True).order_by("pk")[:1000])
    for row_id in ids:
        try:
            outbox_dispatch(row_id)
        except Exception as error:  # one row's trouble must not keep the others unsent
            log.exception("outbox row not dispatched", extra={"outbox_id": row_id})
            Outbox.objects.filter(pk=row_id).update(
                last_error=str(error)[:2000], next_attempt_at=now + lease()
            )
    return len(ids)
