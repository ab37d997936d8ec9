"""A risk scan over a level (a planet here) reads the zones beneath it, whose node keys are
unique per zone only: two zones may each hold "person:busy", and each hot one is its own
flag, its own event and its own review item, never one that stands for both."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from graph.models import GraphNode, GraphRiskFlag
from tests.graph.conftest import ZONE, edge
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
SISTER = "G1.U1.P1.Z2"  # the planet's other zone


def busy_rows() -> list[dict[str, Any]]:
    """Three decisions approved by one overloaded person, one by another."""
    return [
        edge("decision:1", "person:busy", "approved_by"),
        edge("decision:2", "person:busy", "approved_by"),
        edge("decision:3", "person:busy", "approved_by"),
        edge("decision:4", "person:idle", "approved_by"),
    ]


def post_lines(client: Any, zone: str, rows: list[dict[str, Any]]) -> None:
    body = "\n".join(json.dumps(r) for r in rows)
    response = client.post(
        f"/api/v1/graph/import/?zone={zone}", data=body, content_type="application/x-ndjson"
    )
    assert response.status_code == 201, response.json()


@pytest.fixture
def sister_admin(person: Callable[..., Any], client_for: Callable[[Any], Any]) -> Any:
    return client_for(person("sam", Role.ZONE_ADMIN, SISTER))


@pytest.fixture
def planet_reader(
    admin_api: Any,
    sister_admin: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
    set_policy: Callable[..., None],
) -> Any:
    """ZONE and SISTER each hold their own person:busy (a zone node: keys are per zone),
    each on 3 of the planet's 8 causal paths (0.375), above the planet's 0.35 threshold;
    and the planet's reviewer, who reads both zones."""
    post_lines(admin_api, ZONE, busy_rows())
    post_lines(sister_admin, SISTER, busy_rows())
    zones = GraphNode.objects.filter(key="person:busy").values_list("zone", flat=True)
    assert sorted(zones) == [ZONE, SISTER]
    set_policy(zone=PLANET, risk_threshold=0.35)
    return client_for(person("pia", Role.REVIEWER, PLANET))


def live_busy() -> dict[str, GraphRiskFlag]:
    flags = GraphRiskFlag.objects.filter(zone=PLANET, key="person:busy", ended_at__isnull=True)
    return {flag.node_zone: flag for flag in flags}


def test_a_planet_scan_flags_each_zones_node_of_one_key_apart(planet_reader: Any) -> None:
    # When the planet's reviewer reads the planet's risk, twice
    first = planet_reader.get(f"/api/v1/graph/risk/?zone={PLANET}").json()
    second = planet_reader.get(f"/api/v1/graph/risk/?zone={PLANET}").json()
    # Then both person:busy nodes are hotspots, each with a live flag of its own
    busy = [h for h in first["hotspots"] if h["key"] == "person:busy"]
    assert sorted(h["zone"] for h in busy) == [ZONE, SISTER]
    flags = live_busy()
    assert sorted(flags) == [ZONE, SISTER]
    assert {h["zone"]: h["flag"]["id"] for h in busy} == {z: f.pk for z, f in flags.items()}
    # on the trail once each, naming the node's zone; the second read raises nothing
    flagged = [e.payload for e in TrailEvent.objects.filter(kind="graph.risk_flagged")]
    busy_events = sorted(p["node_zone"] for p in flagged if p["node"] == "person:busy")
    assert busy_events == [ZONE, SISTER]
    assert second["hotspots"] == first["hotspots"]
    # and the flags list shows each with its own node
    listed = planet_reader.get(f"/api/v1/graph/risk/flags/?zone={PLANET}").json()["flags"]
    nodes = {f["node_zone"]: f["node_id"] for f in listed if f["node"] == "person:busy"}
    assert nodes == {
        ZONE: GraphNode.objects.get(key="person:busy", zone=ZONE).pk,
        SISTER: GraphNode.objects.get(key="person:busy", zone=SISTER).pk,
    }


def test_one_zones_node_falling_below_ends_its_own_flag_only(
    planet_reader: Any, sister_admin: Any
) -> None:
    # Given both flagged by a planet read
    planet_reader.get(f"/api/v1/graph/risk/?zone={PLANET}")
    before = live_busy()
    # When SISTER's busy approver approves one more decision: of the planet's 9 paths,
    # SISTER's busy carries 4 (0.44) and ZONE's 3 (0.33, below 0.35)
    post_lines(sister_admin, SISTER, [edge("decision:5", "person:busy", "approved_by")])
    body = planet_reader.get(f"/api/v1/graph/risk/?zone={PLANET}").json()
    # Then ZONE's flag ends and SISTER's stays the same live flag, with no new event
    after = live_busy()
    assert [h["zone"] for h in body["hotspots"] if h["key"] == "person:busy"] == [SISTER]
    assert list(after) == [SISTER]
    assert after[SISTER].pk == before[SISTER].pk
    assert GraphRiskFlag.objects.get(pk=before[ZONE].pk).ended_at is not None
    assert TrailEvent.objects.filter(kind="graph.risk_flagged").count() == 2


def lease_rows(office: str) -> list[dict[str, Any]]:
    """One office's printer lease and the officer who approved it, under keys every office
    uses (keys are unique per zone only)."""
    return [
        edge(
            "decision:lease", "person:officer", "approved_by",
            source_label=f"printer lease {office}", target_label=f"printer officer {office}",
        )
    ]  # fmt: skip


def test_a_planet_answer_draws_each_zones_nodes_of_one_key_with_their_own_edges(
    admin_api: Any,
    sister_admin: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    # given two zones of the planet, each with its own decision:lease approved by its own
    # person:officer
    post_lines(admin_api, ZONE, lease_rows("Tokyo"))
    post_lines(sister_admin, SISTER, lease_rows("Osaka"))
    planet = client_for(person("pia", Role.REVIEWER, PLANET))
    # when the planet's reviewer asks the planet's graph about printers
    response = planet.get("/api/v1/graph/query/", {"q": "printer", "zone": PLANET, "k": 4})
    assert response.status_code == 200, response.json()
    body = response.json()
    # then the answer holds four nodes, and each zone's edge joins that zone's two nodes
    nodes = {n["id"]: n for n in body["subgraph"]["nodes"]}
    assert sorted((n["zone"], n["key"]) for n in nodes.values()) == [
        (ZONE, "decision:lease"), (ZONE, "person:officer"),
        (SISTER, "decision:lease"), (SISTER, "person:officer"),
    ]  # fmt: skip
    edges = body["subgraph"]["edges"]
    assert len(edges) == 2, edges  # one per zone, not one merged by their shared keys
    drawn = sorted(
        (nodes[e["source_id"]]["label"], e["type"], nodes[e["target_id"]]["label"]) for e in edges
    )
    assert drawn == [
        ("printer lease Osaka", "approved_by", "printer officer Osaka"),
        ("printer lease Tokyo", "approved_by", "printer officer Tokyo"),
    ]
    assert all(e["source"] == "decision:lease" for e in edges)
    # and the answer states each office's fact with its own labels, never one for the other
    assert "printer lease Tokyo” approved by person “printer officer Tokyo”" in body["answer"]
    assert "printer lease Osaka” approved by person “printer officer Osaka”" in body["answer"]
