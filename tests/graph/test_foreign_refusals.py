"""A write onto another zone's node is a 409 that names the key the writer sent and never the
zone the node belongs to (which the writer may not read)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from tests.graph.conftest import ZONE, edge

pytestmark = pytest.mark.django_db
OTHER = "G1.U1.P2.Z1"  # a zone of another planet


def test_refusals_of_another_zones_node_do_not_name_its_zone(
    import_lines: Callable[..., Any], person: Callable[..., Any], client_for: Callable[..., Any]
) -> None:
    # given ZONE's node, and a zone admin of another planet's zone
    assert (
        import_lines([edge("decision:z1", "doc:z1", "references", tt="document")]).status_code
        == 201
    )
    other = client_for(person("otto", Role.ZONE_ADMIN, OTHER))
    # when they write the node, an edge onto it, and an import onto it
    node = other.post(
        "/api/v1/graph/nodes/",
        {"key": "doc:z1", "type": "document", "label": "mine", "zone": OTHER},
        format="json",
    )
    link = other.post(
        "/api/v1/graph/edges/",
        {
            "source": {"key": "decision:mine", "type": "decision"},
            "target": "doc:z1",
            "type": "references",
            "zone": OTHER,
        },
        format="json",
    )
    rows = json.dumps(edge("decision:mine", "doc:z1", "references", tt="document"))
    bulk = other.post(
        f"/api/v1/graph/import/?zone={OTHER}", data=rows, content_type="application/x-ndjson"
    )
    # then each is a 409 naming the key, and none says whose node it is
    for response in (node, link, bulk):
        assert response.status_code == 409
        message = response.json()["error"]["message"]
        assert "doc:z1" in message
        assert ZONE not in message
        assert "G1.U1.P1" not in message
