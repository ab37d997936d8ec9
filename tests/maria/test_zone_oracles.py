"""No oracles across zones (issue 28 point 7): a principal of one zone gets the same answer
for another zone's coordinate, document or colleague as for one that does not exist, so the
answers never tell it what exists elsewhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from coordinates.models import Role
from graph import store
from graph.models import GraphEdge, GraphNode

ZONE_A = "G1.U1.P1.Z1"
ZONE_B = "G1.U1.P2.Z1"  # another planet's zone: exists (tests/conftest.py ORG)
NOWHERE = "G1.U1.P2.Z7"  # a zone that does not exist
POLICY = "Travel policy\n\n1. Approval\nExpenses above 500,000 yen need the division head.\n"


@pytest.fixture(autouse=True)
def _no_rate_limits() -> None:
    cache.clear()  # the walk below sends many requests per principal


def _same(first: Any, second: Any, *, mine: str, missing: str) -> None:
    """The two answers agree in status and in every word, the names asked for aside."""
    assert first.status_code == second.status_code, (first.json(), second.json())
    assert first.content.decode().replace(mine, "X") == second.content.decode().replace(
        missing, "X"
    )


def _calls(zone: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    node = {"key": "risk:oracle", "type": "risk", "label": "r", "zone": zone}
    ends = {"source": {"key": "risk:a", "type": "risk"}, "target": {"key": "risk:b"}}
    document = {"title": "T", "kind": "memo", "status": "draft", "zone": zone, "text": POLICY}
    return [
        ("get", f"/api/v1/zones/{zone}/policy/", None),
        ("put", f"/api/v1/zones/{zone}/policy/", {"tau": 0.9, "reason": "r"}),
        ("get", f"/api/v1/graph/query/?q=who+approves&zone={zone}", None),
        ("get", f"/api/v1/graph/edges/?zone={zone}", None),
        ("get", f"/api/v1/graph/nodes/?zone={zone}", None),
        ("get", f"/api/v1/zones/{zone}/calibration/", None),
        ("get", f"/api/v1/graph/risk/?zone={zone}", None),
        ("get", f"/api/v1/graph/risk/flags/?zone={zone}", None),
        ("post", "/api/v1/graph/nodes/", node),
        ("post", "/api/v1/graph/edges/", {**ends, "type": "depends_on", "zone": zone}),
        ("post", "/api/v1/documents/", document),
    ]


def test_another_zones_coordinate_is_answered_as_a_missing_one(
    org: Any,
    person: Callable[..., Any],
    client_for: Callable[[Any], APIClient],
    agent_client: Callable[[str], APIClient],
) -> None:
    # Given zone A's admin, reviewer and agent
    principals = {
        "admin": client_for(person("zed", Role.ZONE_ADMIN, ZONE_A)),
        "reviewer": client_for(person("rita", Role.REVIEWER, ZONE_A)),
        "auditor": client_for(person("aude", Role.AUDITOR, ZONE_A)),
        "agent": agent_client(f"{ZONE_A}.A1"),
    }
    for who, client in principals.items():
        for (method, b_url, b_body), (_, none_url, none_body) in zip(
            _calls(ZONE_B), _calls(NOWHERE), strict=True
        ):
            # When each asks about zone B and about a zone that does not exist
            cache.clear()
            about_b = getattr(client, method)(b_url, b_body, format="json")
            about_none = getattr(client, method)(none_url, none_body, format="json")
            # Then both get one answer, a 404, whatever exists in zone B (agents have no say
            # in calibrations anywhere: a 403 for both)
            refused = 403 if who == "agent" and "calibration" in b_url else 404
            assert about_b.status_code == refused, (who, method, b_url, about_b.json())
            _same(about_b, about_none, mine=ZONE_B, missing=NOWHERE)


def test_superseding_another_zones_document_is_answered_as_a_missing_one(
    ingest: Callable[..., Any], person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # Given a document of zone B, and zone A's admin adding a version to zone A
    theirs = ingest(POLICY, zone=ZONE_B, title="Legal policy").document
    admin = client_for(person("zed", Role.ZONE_ADMIN, ZONE_A))
    body = {"title": "T", "kind": "memo", "status": "draft", "zone": ZONE_A, "text": POLICY}
    # When it names B's document, and a document that does not exist, as the one it supersedes
    missing = theirs.pk + 1000
    about_b = admin.post("/api/v1/documents/", {**body, "supersedes": theirs.pk}, format="json")
    about_none = admin.post("/api/v1/documents/", {**body, "supersedes": missing}, format="json")
    # Then both are the same 404 on `supersedes`
    assert about_b.status_code == 404
    assert about_b.json()["error"]["field"] == "supersedes"
    _same(about_b, about_none, mine=str(theirs.pk), missing=str(missing))


def _without_ids(body: Any) -> Any:
    """The answer with row ids and content hashes blanked: two writes in one database get
    different ids, and two imports that name different keys different hashes."""
    if isinstance(body, dict):
        return {
            k: None if k in ("id", "content_hash") else _without_ids(v) for k, v in body.items()
        }
    if isinstance(body, list):
        return [_without_ids(v) for v in body]
    return body


def _graph_writes(zone: str, k: str) -> list[tuple[str, str, Any, str]]:
    """Zone `zone`'s admin names keys "risk:<k>-…": as a node, as an edge's bare and typed
    end, in an import (typed and untyped) and as a path's end."""
    when = "2026-01-02T03:04:05+00:00"
    node = {"key": f"risk:{k}-node", "type": "risk", "zone": zone}
    typed = {"source": {"key": f"risk:{k}-src", "type": "risk"}, "type": "depends_on"}
    bare = {**typed, "target": f"risk:{k}-bare", "zone": zone}
    to_typed = {**typed, "target": {"key": f"risk:{k}-typed", "type": "risk"}, "zone": zone}
    line = {"source": f"risk:{k}-imp", "source_type": "risk", "type": "depends_on"}
    both_typed = {**line, "target": f"risk:{k}-imp2", "target_type": "risk", "occurred_at": when}
    imports = f"/api/v1/graph/import/?zone={zone}"
    untyped = json.dumps({**line, "target": f"risk:{k}-untyped"})
    return [
        ("post", "/api/v1/graph/nodes/", node, "json"),
        ("post", "/api/v1/graph/edges/", bare, "json"),
        ("post", "/api/v1/graph/edges/", {**to_typed, "occurred_at": when}, "json"),
        ("post", imports, json.dumps(both_typed), "application/x-ndjson"),
        ("post", imports, untyped, "application/x-ndjson"),
        ("get", f"/api/v1/graph/paths/?source=risk:{k}-far&target=risk:{k}-node", None, ""),
    ]  # fmt: skip


def test_a_graph_key_another_zone_holds_is_answered_as_a_free_one(
    org: Any, person: Callable[..., Any], client_for: Callable[[Any], APIClient]
) -> None:
    # Given zone B's nodes under every key the "held" writes below name, and zone A's admin
    held = ("node", "bare", "typed", "src", "imp", "imp2", "untyped", "far")
    for name in held:
        store.node_ensure(key=f"risk:held-{name}", node_type="risk", label="B's", zone=ZONE_B)
    b_edges = GraphEdge.objects.filter(zone=ZONE_B).count()
    admin = client_for(person("zed", Role.ZONE_ADMIN, ZONE_A))

    def send(method: str, url: str, body: Any, kind: str) -> Any:
        if method == "get":
            return admin.get(url)
        if kind == "json":
            return admin.post(url, body, format="json")
        return admin.post(url, data=body, content_type=kind)

    for held_call, free_call in zip(
        _graph_writes(ZONE_A, "held"), _graph_writes(ZONE_A, "free"), strict=True
    ):
        # When it names keys zone B holds, and keys nobody holds, in the same writes
        about_b, about_none = send(*held_call), send(*free_call)
        # Then both answers are the same, word for word (row ids aside)
        assert about_b.status_code == about_none.status_code, (held_call, about_b.json())
        assert about_b.status_code in (200, 201, 400, 404), (held_call, about_b.json())
        mine = json.dumps(_without_ids(about_b.json())).replace("held", "X")
        missing = json.dumps(_without_ids(about_none.json())).replace("free", "X")
        assert mine == missing
    # and zone B's nodes are left as they were, with no edge of zone A onto them
    theirs = GraphNode.objects.filter(key__startswith="risk:held-", zone=ZONE_B)
    assert sorted(theirs.values_list("label", flat=True)) == ["B's"] * len(held)
    assert not GraphEdge.objects.filter(source__in=theirs).exists()
    assert not GraphEdge.objects.filter(target__in=theirs).exists()
    assert GraphEdge.objects.filter(zone=ZONE_B).count() == b_edges
