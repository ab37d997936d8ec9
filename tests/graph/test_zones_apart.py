"""No zone touches another's graph: a zone admin's writes stay in their zone, shared nodes are
the system's, and a shared node's edges are read only within the reader's zones."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from coordinates.models import Role
from graph import store
from graph.models import EdgeOrigin, GraphEdge, GraphNode
from tests.graph.conftest import ZONE, edge

pytestmark = pytest.mark.django_db
OTHER = "G1.U1.P2.Z1"  # a zone of another planet


@pytest.fixture
def z1_graph(import_lines: Callable[..., Any]) -> None:
    # Z1's own document node, and a shared person node (zone-less) with a Z1 edge
    response = import_lines([edge("decision:z1", "doc:z1-policy", "references", tt="document")])
    assert response.status_code == 201, response.json()
    store.node_ensure(key="person:shared", node_type="person", label="Shared")
    store.edge_upsert(
        source=GraphNode.objects.get(key="decision:z1"),
        target=GraphNode.objects.get(key="person:shared"),
        edge_type="approved_by",
        zone=ZONE,
        origin=EdgeOrigin.PIPELINE,
    )


@pytest.fixture
def other_admin(person: Callable[..., Any], client_for: Callable[[Any], Any]) -> Any:
    return client_for(person("otto", Role.ZONE_ADMIN, OTHER))


def test_another_zones_node_key_is_another_node_never_a_move(
    z1_graph: None, other_admin: Any
) -> None:
    # Keys are unique per zone: the write makes OTHER's own node (the answer a free key gets)
    response = other_admin.post(
        "/api/v1/graph/nodes/",
        {"key": "doc:z1-policy", "type": "document", "label": "mine now", "zone": OTHER},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["zone"] == OTHER
    node = GraphNode.objects.get(key="doc:z1-policy", zone=ZONE)
    assert node.label == "doc:z1-policy"
    assert GraphNode.objects.get(key="doc:z1-policy", zone=OTHER).label == "mine now"


def test_a_shared_node_cannot_be_rewritten_or_deleted_by_a_zone_admin(
    z1_graph: None, other_admin: Any
) -> None:
    shared = GraphNode.objects.get(key="person:shared")
    # (they act in OTHER as well, so its admin sees them: unseen, they would be a 404)
    store.edge_upsert(
        source=store.node_ensure(
            key="decision:other", node_type="decision", label="Other", zone=OTHER
        ),
        target=shared,
        edge_type="approved_by",
        zone=OTHER,
        origin=EdgeOrigin.PIPELINE,
    )
    written = other_admin.post(
        "/api/v1/graph/nodes/",
        {"key": "person:shared", "type": "person", "label": "renamed", "zone": OTHER},
        format="json",
    )
    deleted = other_admin.delete(f"/api/v1/graph/nodes/{shared.pk}/?zone={OTHER}")
    assert (written.status_code, deleted.status_code) == (403, 403)
    shared.refresh_from_db()
    assert (shared.label, shared.zone) == ("Shared", "")
    assert GraphEdge.objects.filter(target=shared).count() == 2


def test_an_edge_never_reaches_another_zones_node(z1_graph: None, other_admin: Any) -> None:
    z1_node = GraphNode.objects.get(key="doc:z1-policy", zone=ZONE)
    before = GraphEdge.objects.filter(target=z1_node).count()
    mine = {"key": "decision:mine", "type": "decision", "label": "Mine"}
    # named bare, the key is unknown in OTHER: the 404 of a free key
    bare = other_admin.post(
        "/api/v1/graph/edges/",
        {"source": mine, "target": "doc:z1-policy", "type": "references", "zone": OTHER},
        format="json",
    )
    assert bare.status_code == 404
    assert bare.json()["error"]["field"] == "target"
    # named with its type, OTHER gets a node of its own under that key
    typed = other_admin.post(
        "/api/v1/graph/edges/",
        {
            "source": mine,
            "target": {"key": "doc:z1-policy", "type": "document"},
            "type": "references",
            "zone": OTHER,
        },
        format="json",
    )
    assert typed.status_code == 201, typed.json()
    edge_row = GraphEdge.objects.get(pk=typed.json()["id"])
    assert edge_row.target.zone == OTHER
    assert GraphEdge.objects.filter(target=z1_node).count() == before


def test_an_import_never_reaches_another_zones_node(z1_graph: None, other_admin: Any) -> None:
    z1_node = GraphNode.objects.get(key="doc:z1-policy", zone=ZONE)
    before = GraphEdge.objects.filter(target=z1_node).count()
    body = json.dumps(edge("decision:mine", "doc:z1-policy", "references", tt="document"))
    response = other_admin.post(
        f"/api/v1/graph/import/?zone={OTHER}", data=body, content_type="application/x-ndjson"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["nodes_created"] == 2  # both OTHER's own, as for free keys
    assert GraphEdge.objects.filter(target=z1_node).count() == before
    assert GraphNode.objects.get(key="doc:z1-policy", zone=OTHER).node_type == "document"


def act_in_other(shared: GraphNode) -> None:
    """person:shared approves a decision of OTHER too, so OTHER's readers see them."""
    store.edge_upsert(
        source=store.node_ensure(
            key="decision:other", node_type="decision", label="Other", zone=OTHER
        ),
        target=shared,
        edge_type="approved_by",
        zone=OTHER,
        origin=EdgeOrigin.PIPELINE,
    )


def test_an_edge_onto_a_shared_node_stays_in_the_writers_zone(
    z1_graph: None, other_admin: Any
) -> None:
    act_in_other(GraphNode.objects.get(key="person:shared"))  # seen by OTHER's admin
    response = other_admin.post(
        "/api/v1/graph/edges/",
        {
            "source": {"key": "decision:mine", "type": "decision", "label": "Mine"},
            "target": {"key": "person:shared", "type": "person", "label": "Renamed?"},
            "type": "approved_by",
            "zone": OTHER,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    shared = GraphNode.objects.get(key="person:shared")  # the one node of that key
    assert (shared.label, shared.zone) == ("Shared", "")  # named, never changed
    assert GraphEdge.objects.get(pk=response.json()["id"]).target == shared


def post_node(client: Any, key: str) -> Any:
    return client.post(
        "/api/v1/graph/nodes/",
        {"key": key, "type": "person", "label": "renamed", "zone": OTHER},
        format="json",
    )


def post_bare_edge(client: Any, key: str) -> Any:
    return client.post(
        "/api/v1/graph/edges/",
        {
            "source": {"key": "decision:mine", "type": "decision", "label": "Mine"},
            "target": key,
            "type": "approved_by",
            "zone": OTHER,
        },
        format="json",
    )


def test_a_shared_person_the_writer_does_not_see_is_written_as_a_free_key(
    z1_graph: None, other_admin: Any
) -> None:
    # Given person:shared, who acts in ZONE only, so OTHER's admin does not see them
    # When OTHER's admin writes their key, and a key nobody holds, as a node and as an edge end
    unseen, free = post_node(other_admin, "person:shared"), post_node(other_admin, "person:free")
    # Then both answer alike: the unseen person's key is not a 403 that says they exist
    assert (unseen.status_code, free.status_code) == (201, 201), unseen.json()
    assert unseen.json()["zone"] == OTHER  # OTHER's own node, as for the free key
    shared = GraphNode.objects.get(key="person:shared", zone="")
    assert (shared.label, shared.zone) == ("Shared", "")
    # named bare, both are unknown (a 404 naming the end), never an edge onto the shared person
    GraphNode.objects.filter(zone=OTHER).delete()
    bare_unseen = post_bare_edge(other_admin, "person:shared")
    bare_free = post_bare_edge(other_admin, "person:nobody")
    assert (bare_unseen.status_code, bare_free.status_code) == (404, 404)
    assert bare_unseen.json()["error"]["field"] == bare_free.json()["error"]["field"] == "target"
    assert not GraphEdge.objects.filter(target=shared, zone=OTHER).exists()


def test_a_shared_person_the_writer_sees_stays_the_systems(
    z1_graph: None, other_admin: Any
) -> None:
    # Given person:shared acting in OTHER as well: OTHER's admin sees them
    shared = GraphNode.objects.get(key="person:shared")
    act_in_other(shared)
    # When OTHER's admin writes their key, and names it bare as an edge's end
    written = post_node(other_admin, "person:shared")
    named = post_bare_edge(other_admin, "person:shared")
    # Then the write is a 403 (nothing they could not read), the edge reaches the shared node
    assert written.status_code == 403
    assert named.status_code == 201, named.json()
    assert GraphEdge.objects.get(pk=named.json()["id"]).target == shared
    shared.refresh_from_db()
    assert (shared.label, shared.zone) == ("Shared", "")
    assert not GraphNode.objects.filter(key="person:shared", zone=OTHER).exists()


def test_an_import_names_an_unseen_shared_person_as_a_free_key(
    z1_graph: None, other_admin: Any
) -> None:
    # A bare end the writer cannot see is unknown: the import's refusal of a free bare key
    mine = {"target": "decision:mine", "target_type": "decision", "type": "approved_by"}
    body = json.dumps({"source": "person:shared", **mine})
    for key in ("person:shared", "person:nobody"):
        response = other_admin.post(
            f"/api/v1/graph/import/?zone={OTHER}",
            data=body.replace("person:shared", key),
            content_type="application/x-ndjson",
        )
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["code"] == "not_found"
        assert key in response.json()["error"]["message"]
    assert not GraphEdge.objects.filter(zone=OTHER).exists()


def test_a_shared_nodes_edges_are_read_within_the_readers_zones(
    z1_graph: None, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> None:
    shared = GraphNode.objects.get(key="person:shared")
    # (they act in OTHER too: where they act nowhere, a reader does not see them at all)
    store.edge_upsert(
        source=store.node_ensure(
            key="decision:other", node_type="decision", label="Other", zone=OTHER
        ),
        target=shared,
        edge_type="approved_by",
        zone=OTHER,
        origin=EdgeOrigin.PIPELINE,
    )
    outsider = client_for(person("olga", Role.REVIEWER, OTHER))
    insider = client_for(person("ines", Role.REVIEWER, ZONE))
    outside = outsider.get(f"/api/v1/graph/nodes/{shared.pk}/").json()
    inside = insider.get(f"/api/v1/graph/nodes/{shared.pk}/").json()
    assert [e["zone"] for e in outside["edges"]] == [OTHER]
    assert [e["zone"] for e in inside["edges"]] == [ZONE]


def test_a_shared_person_is_seen_only_in_the_zones_they_act_in(
    z1_graph: None, person: Callable[..., Any], client_for: Callable[[Any], Any]
) -> None:
    # Given person:shared, who approved a decision of ZONE only, and a reviewer of each galaxy
    store.node_ensure(key="person:nobody-yet", node_type="person", label="Shared Nobody")
    ours = client_for(person("rita", Role.REVIEWER, ZONE))
    theirs = client_for(person("gus", Role.REVIEWER, "G2"))
    shared = GraphNode.objects.get(key="person:shared")

    def people(client: Any, **query: str) -> set[str]:
        listed = client.get("/api/v1/graph/nodes/", {"type": "person", **query}).json()["nodes"]
        return {n["key"] for n in listed}

    # When each lists the people of the graph, opens the person, and asks the graph about them
    # Then the reviewer of ZONE sees them, the other galaxy's reviewer does not, anywhere
    assert people(ours) == {"person:shared"}
    assert people(theirs) == people(theirs, q="Shared") == set()
    assert ours.get(f"/api/v1/graph/nodes/{shared.pk}/").status_code == 200
    assert theirs.get(f"/api/v1/graph/nodes/{shared.pk}/").status_code == 404
    asked = theirs.get("/api/v1/graph/query/", {"q": "Shared", "zone": "G2.U1.P1.Z1"})
    assert asked.status_code == 200, asked.json()
    assert "person:" not in json.dumps(asked.json())
    asked_here = ours.get("/api/v1/graph/query/", {"q": "Shared", "zone": ZONE})
    assert "person:shared" in json.dumps(asked_here.json())
    assert "person:nobody-yet" not in json.dumps(asked_here.json())  # acts nowhere yet
