"""Celery tasks of the knowledge graph, and the receivers that schedule them: thin, take ids,
call a service, retry on failure."""

from __future__ import annotations

import logging
import math
from functools import partial
from typing import Any

from celery import Task, current_app, shared_task
from django.core.cache import cache
from django.db import OperationalError
from django.dispatch import receiver
from kombu.exceptions import OperationalError as BrokerUnreachable
from redis.exceptions import RedisError

from evidence.signals import version_stored
from evidence.tasks import RETRIED, retried_then_quarantined
from graph.feed import FOLLOW_AFTER, SCAN_AFTER, trail_follow
from graph.services import graph_risk_scan_all
from graph.signals import risk_scan_wanted
from graph.store import version_extract
from trail.signals import events_committed

# RETRIED is the evidence store's policy (jittered backoff; the tasks are idempotent). The
# graph's own runs are retried only when the database was unreachable.
RETRIED_ON_DATABASE = {**RETRIED, "autoretry_for": (OperationalError,)}


@shared_task(**RETRIED)
def extract_graph(self: Task, version_id: int) -> int:
    """Extract one version's graph; retried, then the version is quarantined."""
    return retried_then_quarantined(
        self, subject=f"version:{version_id}", work=partial(version_extract, version_id=version_id)
    )


@shared_task(**RETRIED_ON_DATABASE)
def follow_trail(self: object) -> int:
    """The knowledge graph catches up with the trail's decision events (graph.feed);
    asked for after decision changes and run periodically. Idempotent."""
    return trail_follow()


@shared_task(**RETRIED_ON_DATABASE)
def scan_graph_risk(self: object, zone: str | None = None) -> dict[str, int]:
    """Raise and end risk flags: of one zone after its graph grew, or (no zone: the periodic
    run) of every zone with a graph. Idempotent: a scan that finds the flags as they should
    be writes nothing."""
    return graph_risk_scan_all(zones=[zone] if zone else None)


# --- scheduling ---------------------------------------------------------------------------


def trail_follow_soon() -> None:
    """Have the graph follow the trail within about a second (after the caller's commit):
    requests inside that second share one run."""
    _due_once("maria:graph-follow-due", FOLLOW_AFTER, follow_trail)


def _due_once(mark: str, after: float, task: Any, *args: Any) -> None:
    """Run `task(*args)` in `after` seconds unless a run marked `mark` is already due. The
    mark expires before the run starts, so work that commits after the mark is gone asks
    for the next run, and work before it is seen by the run already due. Eager Celery
    (`make run`, tests) runs it at once."""
    if current_app.conf.task_always_eager:
        task.delay(*args)
        return
    # The shared cache keeps whole seconds (Django's Redis backend truncates 0.75 s to 0,
    # which expires at once: every commit would schedule its own run), so the mark lives
    # a whole second at least and the run waits a quarter second past it.
    lifetime = max(1, math.floor(after * 0.75))
    try:
        if cache.add(mark, 1, timeout=lifetime):
            task.apply_async(args, countdown=max(after, lifetime + 0.25))
    except (RedisError, BrokerUnreachable) as error:
        # Asked for after a commit: an unreachable cache or broker must not fail the change
        # that asked (a 500 for a committed answer); the periodic run catches up.
        logging.getLogger(__name__).warning(
            "graph run not scheduled", extra={"task": task.name, "error": str(error)}
        )


@receiver(events_committed, dispatch_uid="graph.follow_trail")
def _follow_decision_events(*, kinds: frozenset[str], **_: Any) -> None:
    # The graph follows decision events (graph.feed); its own and the zone tree's it skips.
    if any(kind.startswith("decision.") for kind in kinds):
        trail_follow_soon()


@receiver(version_stored, dispatch_uid="graph.extract_graph")
def _extract_stored_version(*, version_id: int, **_: Any) -> None:
    extract_graph.delay(version_id)


@receiver(risk_scan_wanted, dispatch_uid="graph.scan_graph_risk")
def _scan_zone(*, zone: str, debounced: bool, **_: Any) -> None:
    if debounced:
        # At a hundred decisions a second a scan per decision kept the workers busy
        # scanning (each reads the whole zone).
        _due_once(f"maria:graph-risk-scan-due:{zone}", SCAN_AFTER, scan_graph_risk, zone)
    else:
        scan_graph_risk.delay(zone)
