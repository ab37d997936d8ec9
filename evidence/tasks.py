"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from celery import Task, shared_task
from django.core.cache import cache
from django.dispatch import receiver

from coordinates.models import Zone
from evidence import knowledge
from evidence.services import version_embed
from evidence.signals import version_stored
from trail.quarantine import quarantine, quarantined

# Retried with jittered backoff; the tasks are idempotent, so a second run does no harm.
RETRIED = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": (Exception,),
    "retry_backoff": 2,
    "retry_jitter": True,
    "max_retries": 5,
}


# How long a subject's unfinished attempts are remembered: longer than any retry backoff.
ATTEMPTS_REMEMBERED = 24 * 3600


def _attempts_key(task: Task, subject: str) -> str:
    return f"maria:attempts:{task.name}:{subject}"


def retried_then_quarantined(task: Task, *, subject: str, work: Callable[[], int]) -> int:
    """`work()` for a task RETRIED on any error, at most `max_retries + 1` times for one
    `subject`: an error (SoftTimeLimitExceeded at the soft time limit too) is raised again (a
    retry) while attempts are left, and after the last sets `subject` aside
    (`trail.quarantine`, under the task's name), 0; a subject set aside before is skipped, 0.

    The attempts are counted in the cache before each starts, so those that never ended
    count too: a process killed at the hard time limit or for its memory, the task delivered
    again (acks late). Once they are all spent the subject is set aside unrun, rather than
    taking one worker after another down with it (issue 28: a 43,687-paragraph memo)."""
    if quarantined(run=task.name, subjects=[subject]):
        return 0
    allowed = (task.max_retries or 0) + 1
    key = _attempts_key(task, subject)
    cache.add(key, 0, ATTEMPTS_REMEMBERED)
    attempt = cache.incr(key)
    if attempt > allowed:
        cache.delete(key)
        quarantine(
            run=task.name,
            subject=subject,
            error=f"did not finish in {allowed} attempts (stopped at the time limit or killed)",
        )
        return 0
    try:
        done = work()
    except Exception as error:
        if attempt < allowed:
            raise
        cache.delete(key)
        quarantine(run=task.name, subject=subject, error=error)
        return 0
    cache.delete(key)
    return done


@shared_task(**RETRIED)
def embed_version(self: Task, version_id: int) -> int:
    return retried_then_quarantined(
        self, subject=f"version:{version_id}", work=partial(version_embed, version_id=version_id)
    )


@receiver(version_stored, dispatch_uid="evidence.embed_version")
def _embed_stored_version(*, version_id: int, **_: Any) -> None:
    embed_version.delay(version_id)


# The scan's work is the same on every attempt: a version that fails or times out twice is
# set aside and shown to its zone admins (the document page) instead of tried again.
@shared_task(**{**RETRIED, "max_retries": 1})
def scan_version_conflicts(self: Task, version_id: int) -> int:
    """A stored version's paragraphs against the knowledge base they join."""
    return retried_then_quarantined(
        self,
        subject=f"version:{version_id}",
        work=partial(knowledge.conflicts_scan_version, version_id=version_id),
    )


@receiver(version_stored, dispatch_uid="evidence.scan_version_conflicts")
def _scan_stored_version(*, version_id: int, **_: Any) -> None:
    scan_version_conflicts.delay(version_id)


@shared_task(**{**RETRIED, "max_retries": 1})
def scan_zone_conflicts(self: Task, zone: str) -> int:
    """One zone's current paragraphs against each other; twice failed or timed out, the zone
    is set aside (`trail.quarantine`) until an operator releases it."""
    return retried_then_quarantined(
        self, subject=f"zone:{zone}", work=partial(knowledge.conflicts_scan_zone, zone=zone)
    )


@shared_task
def scan_conflicts_nightly() -> int:
    """A task for every zone with documents, each under its own time limits: one large or
    failing zone neither stops nor delays the others. Returns how many were sent."""
    zones = list(
        Zone.objects.filter(documents__isnull=False).distinct().values_list("coordinate", flat=True)
    )
    for zone in zones:
        scan_zone_conflicts.delay(zone)
    return len(zones)
