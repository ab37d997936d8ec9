"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from celery import Task, shared_task
from django.dispatch import receiver

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
