"""The decision pipeline's Prometheus gauges, read from the database at each scrape."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from coordinates.coordinate import Level
from coordinates.models import Zone
from decisions.models import Decision, State


class DecisionCollector(Collector):
    def describe(self) -> Iterator[Metric]:
        # Registration asks for the names: answer without touching the database, which may
        # not even be migrated yet when the URLconf is imported.
        yield GaugeMetricFamily("maria_queue_depth", "", labels=["zone"])
        yield GaugeMetricFamily("maria_gate_decisions", "", labels=["zone", "gate"])

    def collect(self) -> Iterator[Metric]:
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
