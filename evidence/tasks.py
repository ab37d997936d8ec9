"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from celery import Task, shared_task
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


def retried_then_quarantined(task: Task, *, subject: str, work: Callable[[], int]) -> int:
    """`work()` for a task RETRIED on any error: an error is raised again (a retry) while
    retries are left, and after the last sets `subject` aside (`trail.quarantine`, under the
    task's name), 0; a subject set aside before is skipped, 0."""
    if quarantined(run=task.name, subjects=[subject]):
        return 0
    try:
        return work()
    except Exception as error:
        if task.max_retries is None or task.request.retries < task.max_retries:
            raise
        quarantine(run=task.name, subject=subject, error=error)
        return 0


@shared_task(**RETRIED)
def embed_version(self: Task, version_id: int) -> int:
    return retried_then_quarantined(
        self, subject=f"version:{version_id}", work=partial(version_embed, version_id=version_id)
    )


@receiver(version_stored, dispatch_uid="evidence.embed_version")
def _embed_stored_version(*, version_id: int, **_: Any) -> None:
    embed_version.delay(version_id)


@shared_task(**RETRIED)
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


@shared_task(bind=True, acks_late=True)
def scan_conflicts_nightly(self: Task) -> int:
    """Every zone with documents, one at a time: a zone that fails is set aside
    (`trail.quarantine`) and the others are still scanned."""
    found = 0
    for zone in (
        Zone.objects.filter(documents__isnull=False).distinct().values_list("coordinate", flat=True)
    ):
        subject = f"zone:{zone}"
        if quarantined(run=self.name, subjects=[subject]):
            continue
        try:
            found += knowledge.conflicts_scan_zone(zone=zone)
        except Exception as error:  # one zone's failure must not stop the others
            quarantine(run=self.name, subject=subject, error=error)
    return found
