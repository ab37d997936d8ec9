"""Prometheus metrics at `/metrics`.

Queue depth and gate counts are read from the database at scrape time (decisions.metrics),
so every web and
worker process reports the same truth. Validation latency and task retries are observed
where they happen; with several processes set PROMETHEUS_MULTIPROC_DIR (prometheus-client's
multiprocess mode) so that the scrape adds them up.
"""

from __future__ import annotations

import os

from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.registry import REGISTRY, Collector

VALIDATION_SECONDS = Histogram(
    "maria_validation_seconds",
    "Time from submission to a graded decision",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
TASK_RETRIES = Counter("maria_task_retries", "Celery task retries", ["task"])
# Records a background run set aside and went on without (trail.quarantine), by run.
QUARANTINED = Counter(
    "maria_quarantined", "Records a background run quarantined after they failed", ["run"]
)


# Collectors that read the database at scrape time, registered by the apps that own the
# tables (decisions.metrics, from its AppConfig.ready()).
_database: list[Collector] = []


def database_collector_add(collector: Collector) -> None:
    _database.append(collector)
    REGISTRY.register(collector)


def metrics(request: HttpRequest) -> HttpResponse:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        for collector in _database:
            registry.register(collector)
    else:
        registry = REGISTRY
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
