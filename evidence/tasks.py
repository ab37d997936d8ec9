"""Celery tasks of the evidence store: thin, take ids, call a service, retry on failure."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from evidence.graph_feed import trail_follow
from evidence.graph_services import graph_risk_scan_all
from evidence.graph_store import version_extract
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
# The same for the graph's own runs, retried only when the database was unreachable.
RETRIED_ON_DATABASE = {**RETRIED, "autoretry_for": (OperationalError,)}


@shared_task(**RETRIED)
def embed_version(self: object, version_id: int) -> int:
    return version_embed(version_id=version_id)


@shared_task(**RETRIED)
def extract_graph(self: object, version_id: int) -> int:
    return version_extract(version_id=version_id)


@shared_task(**RETRIED_ON_DATABASE)
def follow_trail(self: object) -> int:
    """The knowledge graph catches up with the trail's decision events (evidence.graph_feed);
    asked for after decision changes and run periodically. Idempotent."""
    return trail_follow()


@shared_task(**RETRIED_ON_DATABASE)
def scan_graph_risk(self: object, zone: str | None = None) -> dict[str, int]:
    """Raise and end risk flags: of one zone after its graph grew, or (no zone: the periodic
    run) of every zone with a graph. Idempotent: a scan that finds the flags as they should
    be writes nothing."""
    return graph_risk_scan_all(zones=[zone] if zone else None)
