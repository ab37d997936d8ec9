"""Quarantine: a background run that meets one bad record sets it aside and goes on.

Each quarantine leaves a row (`trail.models.Quarantine`, one per run and subject), a count
(`maria_quarantined_total{run}`) and a warning log line with `run`, `subject` and `reason`;
`quarantined` tells the next run which of its subjects to skip. Deleting the row (a shell;
the admin only lists them) releases the subject: the next run that meets it tries it again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from maria.metrics import QUARANTINED
from trail.models import Quarantine

log = logging.getLogger(__name__)

REASON_CHARS = 2000  # an exception can quote a whole row back; the class and a start suffice


def reason_of(error: BaseException | str) -> str:
    """What to record of `error`: its class and message, truncated."""
    reason = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return reason[:REASON_CHARS]


def quarantine(*, run: str, subject: str, error: BaseException | str) -> None:
    """Set `subject` aside for `run` ("graph.feed.trail_follow", "trail_event:123"), saying why.

    Written in a transaction of its own, or a savepoint of the caller's: a caller that met
    the error inside a transaction must have rolled back to before it (on PostgreSQL a failed
    statement spoils the transaction), and then the row commits or rolls back with the
    caller's work, such as a cursor moved past the subject. A subject met again updates its
    row: count + 1, the newest reason."""
    reason = reason_of(error)
    now = timezone.now()
    with transaction.atomic():
        again = Quarantine.objects.filter(run=run, subject=subject)
        if not again.update(count=F("count") + 1, reason=reason, last_seen=now):
            try:
                with transaction.atomic():
                    Quarantine.objects.create(
                        run=run, subject=subject, reason=reason, created_at=now, last_seen=now
                    )
            except IntegrityError:  # another worker set it aside between the two statements
                again.update(count=F("count") + 1, reason=reason, last_seen=now)
    QUARANTINED.labels(run=run).inc()
    log.warning(
        "quarantined",
        extra={"run": run, "subject": subject, "reason": reason},
        exc_info=error if isinstance(error, BaseException) else None,
    )


def quarantined(*, run: str, subjects: Iterable[str]) -> set[str]:
    """Those of `subjects` that `run` has set aside: the ones it skips."""
    wanted = list(subjects)
    found: set[str] = set()
    for start in range(0, len(wanted), 500):  # a few hundred at a time: SQLite's bound on ?s
        chunk = wanted[start : start + 500]
        found.update(
            Quarantine.objects.filter(run=run, subject__in=chunk).values_list("subject", flat=True)
        )
    return found
