"""The graph is fed by the decision pipeline and by document extraction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from graph.models import GraphEdge, GraphNode
from tests.graph.conftest import AGENT, ZONE
from tests.samples import POLICY_EN

pytestmark = pytest.mark.django_db


def edges_of(key: str) -> set[tuple[str, str]]:
    return {
        (e.edge_type, e.target.key)
        for e in GraphEdge.objects.filter(source__key=key).select_related("target")
    }


def test_an_auto_approved_decision_links_its_agent_documents_policy_and_approver(
    decided: Callable[..., dict[str, Any]],
) -> None:
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    node = GraphNode.objects.get(key=f"decision:{made['id']}")
    assert node.node_type == "decision"
    assert node.zone == ZONE
    assert node.attributes["state"] == "completed"
    links = edges_of(node.key)
    assert ("proposed_by", f"agent:{AGENT}") in links
    assert ("references", f"document:{made['document']}") in links
    assert ("approved_by", "person:system") in links
    assert any(kind == "constrained_by" and key.startswith("policy:") for kind, key in links)


def test_a_reviewer_approval_is_an_edge_to_that_reviewer(
    decided: Callable[..., dict[str, Any]],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    from coordinates.models import Role

    made = decided(tau=0.99, refusal_floor=0.05)
    reviewer = client_for(person("rita", Role.REVIEWER, ZONE))
    with django_capture_on_commit_callbacks(execute=True):
        answer = reviewer.post(
            f"/api/v1/decisions/{made['id']}/approve/", {"reason": "ok"}, format="json"
        )
    assert answer.status_code == 200, answer.json()
    assert ("approved_by", "person:rita") in edges_of(f"decision:{made['id']}")
    assert ("approved_by", "person:system") not in edges_of(f"decision:{made['id']}")


def test_the_responsibility_chain_of_a_decision_is_drawable(
    decided: Callable[..., dict[str, Any]],
    reviewer_api: Any,
) -> None:
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    body = reviewer_api.get(f"/api/v1/graph/decisions/{made['id']}/responsibility/").json()
    keys = {n["key"] for n in body["nodes"]}
    assert body["root"] == f"decision:{made['id']}"
    assert {f"agent:{AGENT}", "person:system", f"document:{made['document']}"} <= keys
    kinds = {(e["source"], e["type"]) for e in body["edges"]}
    assert (f"decision:{made['id']}", "proposed_by") in kinds
    # What the travel policy itself names (the division head) hangs off the document.
    assert any(n["label"] == "division head" for n in body["nodes"])


def test_a_decision_of_another_zone_has_no_responsibility_view_for_this_reviewer(
    decided: Callable[..., dict[str, Any]],
    person: Callable[..., Any],
    client_for: Callable[[Any], Any],
) -> None:
    from coordinates.models import Role

    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    outsider = client_for(person("otto", Role.REVIEWER, "G1.U1.P2.Z1"))
    response = outsider.get(f"/api/v1/graph/decisions/{made['id']}/responsibility/")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_a_document_yields_amounts_deadlines_approvers_agents_and_references(
    ingest: Callable[..., Any],
) -> None:
    ingest(POLICY_EN, title="Travel policy", key="travel")
    ingest(
        "Budget memo\n\nThe budget of USD 1.2 million was approved by Jane Smith. "
        "Submit the spending report by 2025-03-31. Agent G1.U1.P1.Z1.A2 prepares it. "
        "Limits follow the Travel policy.\n",
        title="Budget memo",
        key="budget",
        kind="memo",
    )
    memo = GraphNode.objects.get(key__startswith="document:", label="Budget memo")
    links = edges_of(memo.key)
    assert ("references", f"amount:{ZONE}:1,200,000 USD") in links
    assert ("approved_by", f"person:{ZONE}:Jane Smith") in links
    assert ("references", "agent:G1.U1.P1.Z1.A2") in links
    travel = GraphNode.objects.get(label="Travel policy", node_type="document")
    assert ("references", travel.key) in links
    deadline = GraphEdge.objects.get(target=memo, edge_type="deadline_for")
    assert deadline.source.label == "deadline 2025-03-31"
    assert deadline.occurred_at.date().isoformat() == "2025-03-31"


def test_a_new_version_marks_what_it_no_longer_says_stale_without_deleting_it(
    ingest: Callable[..., Any], reviewer_api: Any
) -> None:
    from graph import store as graph_store

    ingest("Memo\n\nThe budget is 300,000 yen.\n", title="Memo", key="m", kind="memo")
    ingest("Memo\n\nThe budget is 450,000 yen.\n", title="Memo", key="m", kind="memo")
    old = GraphEdge.objects.get(target__key=f"amount:{ZONE}:300,000 JPY")
    new = GraphEdge.objects.get(target__key=f"amount:{ZONE}:450,000 JPY")
    assert old.stale is True
    assert new.stale is False
    assert new.document_version == 2
    loaded = graph_store.loaded_graph()
    stale_weight = loaded.index.edge_weight(old.source_id, old.target_id, "references")
    fresh_weight = loaded.index.edge_weight(new.source_id, new.target_id, "references")
    assert stale_weight == pytest.approx(fresh_weight * graph_store.STALE_FACTOR)


def test_a_question_about_a_past_decision_returns_its_evidence_subgraph_and_gate(
    decided: Callable[..., dict[str, Any]], reviewer_api: Any
) -> None:
    made = decided(tau=0.3, refusal_floor=0.2, floor=0.05)
    response = reviewer_api.get(
        "/api/v1/graph/query/",
        {"q": "Who approves travel expenses above 500,000 yen?", "zone": ZONE, "method": "ppr"},
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    keys = [n["key"] for n in body["subgraph"]["nodes"]]
    assert keys[0] == f"decision:{made['id']}"  # the decision itself is the most relevant
    assert f"agent:{AGENT}" in keys
    assert body["gate"] in ("direct", "qualified", "escalate")
    assert body["cohesion"] > 0
    assert body["report"]["gate"] == body["gate"]
