"""Explicit edges, bulk import, deletion with trail events, paths and risk over REST."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from graph.models import GraphEdge, GraphNode
from tests.graph.conftest import ZONE, edge
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db


def trail_kinds(kind_prefix: str = "graph.") -> list[str]:
    return list(
        TrailEvent.objects.filter(kind__startswith=kind_prefix)
        .order_by("pk")
        .values_list("kind", flat=True)
    )


def test_a_zone_admin_asserts_an_edge_and_the_trail_records_it(admin_api: Any) -> None:
    response = admin_api.post(
        "/api/v1/graph/edges/",
        {
            "source": {"key": "decision:vendor", "type": "decision", "label": "Pick vendor"},
            "target": {"key": "person:cfo", "type": "person", "label": "CFO"},
            "type": "approved_by",
            "zone": ZONE,
            "confidence": 0.9,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["source"] == "decision:vendor"
    event = TrailEvent.objects.get(kind="graph.edge_added")
    assert event.chain == ZONE
    assert event.actor == "ada"
    assert event.payload == {
        "source": "decision:vendor",
        "target": "person:cfo",
        "type": "approved_by",
    }


def test_a_reviewer_may_read_but_not_change_the_graph(reviewer_api: Any) -> None:
    response = reviewer_api.post(
        "/api/v1/graph/nodes/",
        {"key": "risk:x", "type": "risk", "label": "x", "zone": ZONE},
        format="json",
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert not GraphNode.objects.filter(key="risk:x").exists()


def test_a_nul_in_a_text_query_parameter_is_a_400_naming_it(
    admin_api: Any, import_lines: Callable[..., Any]
) -> None:
    # PostgreSQL holds no NUL in text: these reached it and answered 500 there.
    assert import_lines([edge("decision:a", "person:p", "approved_by")]).status_code == 201
    node = GraphNode.objects.get(key="decision:a")
    for url in (
        "/api/v1/graph/nodes/?q=a%00",
        "/api/v1/graph/nodes/?type=%00",
        f"/api/v1/graph/query/?zone={ZONE}&q=who%00",
    ):
        response = admin_api.get(url)
        assert response.status_code == 400, url
        assert response.json()["error"]["field"] in ("q", "type"), url
    deleted = admin_api.delete(f"/api/v1/graph/nodes/{node.pk}/?reason=gone%00")
    assert deleted.status_code == 400
    assert deleted.json()["error"]["field"] == "reason"
    assert GraphNode.objects.filter(pk=node.pk).exists()


def test_bad_edges_are_refused_naming_the_field(admin_api: Any) -> None:
    unknown = admin_api.post(
        "/api/v1/graph/edges/",
        {"source": "nobody", "target": "nothing", "type": "approved_by", "zone": ZONE},
        format="json",
    )
    assert unknown.status_code == 404
    assert unknown.json()["error"]["field"] == "source"
    wrong_type = admin_api.post(
        "/api/v1/graph/edges/",
        {
            "source": {"key": "a", "type": "decision"},
            "target": {"key": "b", "type": "person"},
            "type": "blames",
            "zone": ZONE,
        },
        format="json",
    )
    assert wrong_type.status_code == 400
    assert wrong_type.json()["error"]["field"] == "type"
    bad_zone = admin_api.post(
        "/api/v1/graph/edges/",
        {"source": "a", "target": "b", "type": "approved_by", "zone": "Z1"},
        format="json",
    )
    assert bad_zone.status_code == 400
    assert bad_zone.json()["error"]["field"] == "zone"


def test_an_import_of_json_lines_adds_edges_with_one_trail_event(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    response = import_lines(
        [
            edge("decision:a", "person:p", "approved_by"),
            edge("decision:b", "decision:a", "depends_on", tt="decision", weight=0.5),
        ]
    )
    assert response.status_code == 201, response.json()
    assert response.json()["edges"] == 2
    assert response.json()["nodes_created"] == 3
    assert GraphEdge.objects.get(source__key="decision:b").weight == 0.5
    assert trail_kinds() == ["graph.imported"]
    path = reviewer_api.get("/api/v1/graph/paths/?source=decision:b&target=person:p").json()
    assert [n["key"] for n in path["path"]["nodes"]] == ["decision:b", "decision:a", "person:p"]
    assert path["path"]["weight"] == pytest.approx(0.5)


def test_a_csv_import_is_accepted_too(admin_api: Any) -> None:
    body = (
        "source,source_type,target,target_type,type,confidence\n"
        "decision:a,decision,policy:p,policy,constrained_by,0.8\n"
    )
    response = admin_api.post(
        f"/api/v1/graph/import/?zone={ZONE}", data=body, content_type="text/csv"
    )
    assert response.status_code == 201, response.json()
    assert GraphEdge.objects.get().confidence == 0.8


def test_an_import_names_its_format_in_the_query_string(admin_api: Any) -> None:
    # `format` is also DRF's response-format override: it once made every such import a 404.
    body = (
        "source,source_type,target,target_type,type\n"
        "decision:a,decision,person:p,person,approved_by\n"
    )
    as_csv = admin_api.post(
        f"/api/v1/graph/import/?zone={ZONE}&format=csv", data=body, content_type="text/plain"
    )
    assert as_csv.status_code == 201, as_csv.json()
    line = json.dumps(
        {
            "source": "decision:b",
            "source_type": "decision",
            "target": "person:p",
            "type": "approved_by",
        }
    )
    as_lines = admin_api.post(
        f"/api/v1/graph/import/?zone={ZONE}&format=jsonl", data=line, content_type="text/plain"
    )
    assert as_lines.status_code == 201, as_lines.json()
    assert GraphEdge.objects.count() == 2


def test_an_import_with_one_bad_row_writes_nothing(import_lines: Callable[..., Any]) -> None:
    response = import_lines(
        [edge("decision:a", "person:p", "approved_by"), edge("decision:a", "person:q", "blames")]
    )
    assert response.status_code == 400
    assert "blames" in response.json()["error"]["message"]
    assert not GraphNode.objects.exists()
    assert trail_kinds() == []


def test_deleting_an_edge_or_a_node_is_on_the_trail_and_the_index_follows(
    import_lines: Callable[..., Any], admin_api: Any, reviewer_api: Any
) -> None:
    import_lines(
        [
            edge("decision:a", "decision:b", "depends_on", tt="decision"),
            edge("decision:b", "person:p", "approved_by"),
        ]
    )
    url = "/api/v1/graph/paths/?source=decision:a&target=person:p"
    assert reviewer_api.get(url).json()["path"]["length"] == 2
    link = GraphEdge.objects.get(edge_type="approved_by")
    assert admin_api.delete(f"/api/v1/graph/edges/{link.pk}/?reason=wrong").status_code == 204
    assert reviewer_api.get(url).json()["path"] is None
    node = GraphNode.objects.get(key="decision:b")
    assert admin_api.delete(f"/api/v1/graph/nodes/{node.pk}/").status_code == 204
    assert not GraphEdge.objects.exists()
    gone = reviewer_api.get("/api/v1/graph/paths/?source=decision:a&target=decision:b")
    assert gone.status_code == 404
    assert trail_kinds() == ["graph.imported", "graph.edge_deleted", "graph.node_deleted"]
    deleted = TrailEvent.objects.get(kind="graph.node_deleted")
    assert deleted.payload["key"] == "decision:b"
    assert deleted.payload["edges"] == 1


def test_the_best_path_follows_the_allowed_edge_type_sequence(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    # A strong references shortcut and a weaker causal chain to the same person.
    import_lines(
        [
            edge("decision:a", "person:p", "references"),
            edge("decision:a", "decision:b", "caused_by", tt="decision", weight=0.6),
            edge("decision:b", "person:p", "approved_by", weight=0.5),
        ]
    )
    best = reviewer_api.get("/api/v1/graph/paths/?source=decision:a&target=person:p").json()
    assert best["path"]["edge_types"] == ["references"]
    causal = reviewer_api.get(
        "/api/v1/graph/paths/",
        {"source": "decision:a", "target": "person:p", "pattern": "caused_by* approved_by"},
    ).json()
    assert causal["path"]["edge_types"] == ["caused_by", "approved_by"]
    assert causal["path"]["weight"] == pytest.approx(0.3)
    short = reviewer_api.get(
        "/api/v1/graph/paths/",
        {
            "source": "decision:a",
            "target": "person:p",
            "pattern": "caused_by* approved_by",
            "max_length": 1,
        },
    ).json()
    assert short["path"] is None


def test_a_node_most_causal_paths_run_through_is_sent_for_review_above(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    # Three decisions all approved by one overloaded person, one by another.
    import_lines(
        [
            edge("decision:1", "person:busy", "approved_by"),
            edge("decision:2", "person:busy", "approved_by"),
            edge("decision:3", "person:busy", "approved_by"),
            edge("decision:4", "person:idle", "approved_by"),
        ]
    )
    set_policy(risk_threshold=0.6)
    body = reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}").json()
    assert body["paths"] == 4
    assert body["threshold"] == 0.6
    assert [h["key"] for h in body["hotspots"]] == ["person:busy"]
    assert body["hotspots"][0]["share"] == pytest.approx(0.75)
    assert body["hotspots"][0]["review_by"] == "G1.U1.P1"


def test_graph_reads_are_scoped_to_the_readers_zones(
    import_lines: Callable[..., Any], person: Callable[..., Any], client_for: Callable[..., Any]
) -> None:
    from coordinates.models import Role

    import_lines([edge("decision:a", "person:p", "approved_by")])
    outsider = client_for(person("otto", Role.REVIEWER, "G1.U1.P2.Z1"))
    answer = outsider.get(f"/api/v1/graph/query/?q=decision&zone={ZONE}")
    assert answer.status_code == 404
    path = outsider.get("/api/v1/graph/paths/?source=decision:a&target=person:p")
    assert path.status_code == 404
    listed = outsider.get("/api/v1/graph/nodes/").json()["nodes"]
    assert "decision:a" not in {n["key"] for n in listed}


def test_a_risk_hotspot_is_flagged_on_the_trail_once_per_threshold_crossing(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    from trail.models import TrailEvent

    import_lines(
        [
            edge("decision:1", "person:busy", "approved_by"),
            edge("decision:2", "person:busy", "approved_by"),
            edge("decision:3", "person:busy", "approved_by"),
            edge("decision:4", "person:idle", "approved_by"),
        ]
    )
    set_policy(risk_threshold=0.6)

    def risk_events() -> list[Any]:
        return list(TrailEvent.objects.filter(kind="graph.risk_flagged").order_by("seq"))

    for _ in range(3):
        assert reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}").status_code == 200
    [flagged] = risk_events()
    assert flagged.chain == ZONE
    assert flagged.actor == "rita"
    assert flagged.payload["node"] == "person:busy"
    assert flagged.payload["share"] == pytest.approx(0.75)
    assert flagged.payload["threshold"] == 0.6
    assert flagged.payload["review_by"] == "G1.U1.P1"

    set_policy(risk_threshold=0.9)  # busy falls below: nothing to flag, the flag is cleared
    reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}")
    assert len(risk_events()) == 1
    set_policy(risk_threshold=0.6)  # a new crossing is a new event
    reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}")
    reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}")
    assert [e.payload["node"] for e in risk_events()] == ["person:busy", "person:busy"]
    set_policy(risk_threshold=0.7)  # still above, at a new threshold: flagged at it too
    reviewer_api.get(f"/api/v1/graph/risk/?zone={ZONE}")
    assert [e.payload["threshold"] for e in risk_events()] == [0.6, 0.6, 0.7]
