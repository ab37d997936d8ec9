"""The policy a decision was judged under is a node of the decision's zone: its label names
the zone's policy versions, which no other zone reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from decisions.models import Decision
from graph.models import GraphEdge
from tests.graph.conftest import ZONE

pytestmark = pytest.mark.django_db
OTHER = "G1.U1.P2.Z1"  # a zone of another planet


def test_a_decisions_policy_node_is_read_in_its_zone_only(
    decided: Callable[..., dict[str, Any]],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given a decision of ZONE judged under ZONE's own policy version
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    label = Decision.objects.get(pk=made["id"]).policy_label
    assert ZONE in label
    link = GraphEdge.objects.select_related("target").get(
        source__key=f"decision:{made['id']}", edge_type="constrained_by"
    )
    # when a reviewer of ZONE and one of another planet's zone list the policy nodes
    inside = client_for(person("ines", Role.REVIEWER, ZONE))
    outside = client_for(person("olga", Role.REVIEWER, OTHER))
    theirs = inside.get("/api/v1/graph/nodes/?type=policy").json()["nodes"]
    others = outside.get("/api/v1/graph/nodes/?type=policy").json()["nodes"]
    # then the node is ZONE's, ZONE's reviewer reads it and the other zone's reviewer does not
    assert link.target.zone == ZONE
    assert link.target.attributes["label"] == label
    assert [n["key"] for n in theirs] == [link.target.key]
    assert others == []
    assert outside.get(f"/api/v1/graph/nodes/{link.target.pk}/").status_code == 404
