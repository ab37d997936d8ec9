"""A node written by hand is a trail event, like every other graph write and delete."""

from __future__ import annotations

from typing import Any

import pytest

from graph.models import GraphNode
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db
ZONE = "G1.U1.P1.Z1"


def node_events() -> list[TrailEvent]:
    return list(TrailEvent.objects.filter(kind="graph.node_written").order_by("pk"))


def post_node(client: Any, **body: Any) -> Any:
    return client.post(
        "/api/v1/graph/nodes/",
        {"key": "risk:fx", "type": "risk", "label": "FX exposure", "zone": ZONE, **body},
        format="json",
    )


def test_a_zone_admins_node_write_is_on_the_zones_trail(admin_api: Any) -> None:
    # when a zone admin adds a node
    response = post_node(admin_api, attributes={"owner": "treasury"})
    # then the zone's chain records who wrote which node, and that it is new
    assert response.status_code == 201, response.json()
    [event] = node_events()
    assert (event.chain, event.actor) == (ZONE, "ada")
    assert event.payload["key"] == "risk:fx"
    assert event.payload["type"] == "risk"
    assert event.payload["label"] == "FX exposure"
    assert event.payload["created"] is True


def test_a_node_update_is_an_event_and_an_unchanged_write_is_none(admin_api: Any) -> None:
    post_node(admin_api)
    # when the label changes, and the same write is then sent again
    assert post_node(admin_api, label="FX exposure (hedged)").status_code == 201
    assert post_node(admin_api, label="FX exposure (hedged)").status_code == 201
    # then one more event, for the change only
    first, second = node_events()
    assert (first.payload["created"], second.payload["created"]) == (True, False)
    assert second.payload["label"] == "FX exposure (hedged)"


def test_a_refused_node_write_leaves_no_event(admin_api: Any, reviewer_api: Any) -> None:
    assert post_node(reviewer_api).status_code == 403
    assert post_node(admin_api, type="planet").status_code == 400
    assert not GraphNode.objects.exists()
    assert node_events() == []
