"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.dispatch import receiver

from evidence.services import version_embed
from evidence.signals import version_stored

# Retried with jittered backoff; the tasks are idempotent, so a second run does no harm.
RETRIED = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": (Exception,),
    "retry_backoff": 2,
    "retry_jitter": True,
    "max_retries": 5,
}


@shared_task(**RETRIED)
def embed_version(self: object, version_id: int) -> int:
    return version_embed(version_id=version_id)


@receiver(version_stored, dispatch_uid="evidence.embed_version")
def _embed_stored_version(*, version_id: int, **_: Any) -> None:
    embed_version.delay(version_id)
