"""Prometheus metrics at `/metrics`.

Queue depth and gate counts are read from the database at scrape time, so every web and
worker process reports the same truth. Validation latency and task retries are observed
where they happen; with several processes set PROMETHEUS_MULTIPROC_DIR (prometheus-client's
multiprocess mode) so that the scrape adds them up.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY, Collector

VALIDATION_SECONDS = Histogram(
    "maria_validation_seconds",
    "Time from submission to a graded decision",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
TASK_RETRIES = Counter("maria_task_retries", "Celery task retries", ["task"])


class DecisionCollector(Collector):
    def describe(self) -> Iterator[Metric]:
        # Registration asks for the names: answer without touching the database, which may
        # not even be migrated yet when the URLconf is imported.
        yield GaugeMetricFamily("maria_queue_depth", "", labels=["zone"])
        yield GaugeMetricFamily("maria_gate_decisions", "", labels=["zone", "gate"])

    def collect(self) -> Iterator[Metric]:
        from coordinates.coordinate import Level
        from coordinates.models import Zone
        from decisions.models import Decision, State

        depth = GaugeMetricFamily(
            "maria_queue_depth", "Decisions waiting for a reviewer", labels=["zone"]
        )
        # Every zone reports, 0 when its queue is empty: a series that vanished when the
        # queue drained would read as "no data" on a dashboard, not as "nothing waiting".
        waiting = dict.fromkeys(
            Zone.objects.filter(level=Level.ZONE).values_list("coordinate", flat=True), 0
        )
        waiting.update(
            Decision.objects.filter(state=State.APPROVAL_REQUIRED)
            .values("zone")
            .annotate(n=Count("pk"))
            .values_list("zone", "n")
        )
        for zone, n in sorted(waiting.items()):
            depth.add_metric([zone], n)
        yield depth
        gates = GaugeMetricFamily(
            "maria_gate_decisions", "Decisions graded per zone and gate", labels=["zone", "gate"]
        )
        graded = Decision.objects.exclude(gate="").values("zone", "gate").annotate(n=Count("pk"))
        for row in graded:
            gates.add_metric([row["zone"], row["gate"]], row["n"])
        yield gates


_database = DecisionCollector()
REGISTRY.register(_database)


def metrics(request: HttpRequest) -> HttpResponse:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(_database)
    else:
        registry = REGISTRY
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
