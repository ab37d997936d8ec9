"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from celery import shared_task

from evidence.graph_store import version_extract
from evidence.services import version_embed


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_jitter=True,
    max_retries=5,
)
def embed_version(self: object, version_id: int) -> int:
    return version_embed(version_id=version_id)


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(Exception,),
    retry_backoff=2,
    retry_jitter=True,
    max_retries=5,
)
def extract_graph(self: object, version_id: int) -> int:
    return version_extract(version_id=version_id)
