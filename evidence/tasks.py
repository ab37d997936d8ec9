"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import OperationalError

from evidence.graph_store import record_decision_event_later, version_extract
from evidence.services import version_embed

# Retried with jittered backoff; both are idempotent, so a second run does no harm.
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


@shared_task(**RETRIED)
def extract_graph(self: object, version_id: int) -> int:
    return version_extract(version_id=version_id)


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=1,
    retry_jitter=True,
    max_retries=5,
)
def record_graph_event(
    self: object, decision_id: int, kind: str, actor_id: int | None, payload: dict[str, Any]
) -> None:
    """The knowledge graph's side of one committed decision event (evidence.graph_store)."""
    record_decision_event_later(
        decision_id=decision_id, kind=kind, actor_id=actor_id, payload=payload
    )
