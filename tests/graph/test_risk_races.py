"""Risk flags under concurrency on PostgreSQL: scans racing to raise the same crossing, and
reviewers racing to resolve the same flag. Every thread is its own connection and commits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from coordinates.coordinate import parse
from graph.models import GraphRiskFlag
from graph.services import graph_risk_scan
from tests.decisions.helpers import at_once
from tests.graph.conftest import ZONE, edge
from trail import verify
from trail.models import TrailEvent

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def crossing(import_lines: Callable[..., Any], set_policy: Callable[..., None]) -> None:
    """busy carries 3/4 of the paths; the import's own scan finds nothing above 0.9, and the
    threshold then drops to 0.6 (a policy edit triggers no scan): the next scans race."""
    set_policy(risk_threshold=0.9)
    rows = [edge(f"decision:{n}", "person:busy", "approved_by") for n in (1, 2, 3)]
    response = import_lines([*rows, edge("decision:4", "person:idle", "approved_by")])
    assert response.status_code == 201, response.json()
    assert not GraphRiskFlag.objects.exists()
    set_policy(risk_threshold=0.6)


def test_concurrent_scans_raise_one_flag_and_one_event(crossing: None) -> None:
    at_once(8, lambda _: graph_risk_scan(zone=parse(ZONE)))
    assert GraphRiskFlag.objects.filter(key="person:busy").count() == 1
    assert TrailEvent.objects.filter(kind="graph.risk_flagged").count() == 1
    assert verify.verify_database().intact


def test_concurrent_reviews_of_one_flag_have_one_winner(
    crossing: None, person: Callable[..., Any]
) -> None:
    from coordinates.models import Role

    graph_risk_scan(zone=parse(ZONE))
    flag = GraphRiskFlag.objects.get()
    people = [person(f"planet{i}", Role.REVIEWER, "G1.U1.P1") for i in range(10)]

    def resolve(i: int) -> Any:
        client = APIClient()
        client.force_authenticate(user=people[i])
        return client.post(
            f"/api/v1/graph/risk/flags/{flag.pk}/resolve/",
            {"action": "acknowledge" if i % 2 else "dismiss", "note": f"seen by {i}"},
            format="json",
        )

    statuses = Counter(r.status_code for r in at_once(10, resolve))
    assert statuses == {200: 1, 409: 9}, statuses
    [event] = TrailEvent.objects.filter(kind="graph.risk_resolved")
    flag.refresh_from_db()
    assert flag.resolved_by is not None
    assert event.actor == flag.resolved_by.username
    assert event.reason == flag.note
    assert verify.verify_database().intact
