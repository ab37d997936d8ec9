"""The trail's periodic task.

The trail checkpoint runs periodically through Celery beat. The schedule belongs in
settings, e.g. hourly:

    from celery.schedules import crontab
    CELERY_BEAT_SCHEDULE = {
        "trail-checkpoint": {"task": "trail.checkpoint", "schedule": crontab(minute=0)},
    }

and a beat process next to the workers (`celery -A maria beat`). Each run verifies the whole
trail before it seals it, so the interval bounds how long a deleted tail can go unnoticed
by `verify_trail` when the head rows were rewritten too.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import OperationalError

from trail import checkpoints
from trail.ledger import TrailError
from trail.verify import TrailBroken

log = logging.getLogger(__name__)


@shared_task(
    name="trail.checkpoint",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
)
def trail_checkpoint() -> int | None:
    """Seal the trail; the seq of the new checkpoint, or None when a concurrent run won."""
    try:
        checkpoint = checkpoints.checkpoint_create()
    except TrailBroken as error:
        # Never retried: a broken trail stays broken until someone looks.
        log.error("trail broken, not sealed: %s", error.report.summary())
        raise
    except checkpoints.UnsignedRefused as error:
        # The operator must set the key: said loudly every run, never retried.
        log.error("trail checkpoint refused: %s", error)
        return None
    except TrailError as error:
        log.info("trail checkpoint skipped: %s", error)
        return None
    log.info(
        "trail checkpoint %s sealed %s chains, %s events, hash %s",
        checkpoint.seq,
        checkpoint.chains,
        checkpoint.events,
        checkpoint.hash,
    )
    return checkpoint.seq
