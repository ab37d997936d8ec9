"""Graph answers: diffusion, evidence selection and the cohesion gate; the cached index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from graph import store as graph_store
from graph.models import EdgeOrigin, GraphNode
from tests.graph.conftest import ZONE, edge
from trail.models import TrailEvent

pytestmark = pytest.mark.django_db

CHAIN = [
    edge(
        "decision:proposal", "document:evaluation", "references", tt="document",
        source_label="printer vendor proposal", target_label="printer vendor evaluation report",
    ),
    edge(
        "decision:approval", "decision:proposal", "depends_on", tt="decision",
        source_label="printer vendor approval", target_label="printer vendor proposal",
    ),
    edge(
        "decision:payment", "decision:approval", "depends_on", tt="decision",
        source_label="printer vendor payment", target_label="printer vendor approval",
    ),
]  # fmt: skip
TWO_ISLANDS = [
    edge("decision:p1", "person:a", "approved_by", source_label="printer lease",
         target_label="printer officer"),
    edge("decision:p2", "person:b", "approved_by", source_label="printer toner",
         target_label="printer clerk"),
]  # fmt: skip


def oracle_cohesion(subgraph: dict[str, Any]) -> float:
    """(ordered linked pairs) / |S|^2 (seed 002 §8.1): every edge weighs 1 here, and a
    relation counts once per direction it is held in."""
    pairs = {(e["source"], e["target"]) for e in subgraph["edges"]}
    return len(pairs) / len(subgraph["nodes"]) ** 2


def ask(client: Any, q: str = "printer vendor", **params: Any) -> dict[str, Any]:
    response = client.get("/api/v1/graph/query/", {"q": q, "zone": ZONE, **params})
    assert response.status_code == 200, response.json()
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize("method", ["hop", "ppr"])
def test_a_linked_chain_answers_directly_with_its_evidence_subgraph(
    import_lines: Callable[..., Any], reviewer_api: Any, method: str
) -> None:
    import_lines(CHAIN)
    body = ask(reviewer_api, method=method, k=4)
    keys = {n["key"] for n in body["subgraph"]["nodes"]}
    assert keys == {
        "decision:proposal", "document:evaluation", "decision:approval", "decision:payment",
    }  # fmt: skip
    assert body["cohesion"] == pytest.approx(oracle_cohesion(body["subgraph"]))
    # The paper's 4-node procurement chain (seed 002 §4.1): 3 directed edges over 4^2 pairs.
    assert body["cohesion"] == pytest.approx(3 / 16)
    assert body["gate"] == "direct"
    assert body["cohesion_tau"] == 0.15
    assert body["escalated_to"] is None
    assert "depends on" in body["answer"]
    assert body["structural_gaps"] == []


def test_the_hop_method_takes_h_from_the_spectral_gap_unless_asked(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    import_lines(CHAIN)
    auto = ask(reviewer_api, k=4)
    assert 0 < auto["spectral_gap"] <= 2
    assert auto["hops"] >= 1
    fixed = ask(reviewer_api, k=4, h=2)
    assert fixed["hops"] == 2
    assert fixed["spectral_gap"] is None


def test_evidence_in_unlinked_pieces_is_qualified_and_the_gaps_are_listed(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    import_lines(TWO_ISLANDS)
    set_policy(cohesion_tau=0.2)
    body = ask(reviewer_api, q="printer", k=4)
    # One directed edge in each island: 2 of 4^2 ordered pairs, in [tau/2, tau) = [0.1, 0.2).
    assert body["cohesion"] == pytest.approx(2 / 16)
    assert body["gate"] == "qualified"
    assert len(body["structural_gaps"]) == 1
    sides = [set(side) for side in body["structural_gaps"][0]["between"]]
    assert {frozenset(s) for s in sides} == {
        frozenset({"decision:p1", "person:a"}),
        frozenset({"decision:p2", "person:b"}),
    }
    assert "unlinked" in body["answer"]


def test_incoherent_evidence_escalates_to_the_parent_levels_authority_on_the_trail(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    import_lines(TWO_ISLANDS)
    set_policy(cohesion_tau=0.9)
    body = ask(reviewer_api, q="printer", k=4)
    assert body["gate"] == "escalate"
    assert body["escalated_to"] == "G1.U1.P1"
    assert body["answer"] is None
    event = TrailEvent.objects.get(kind="graph.answered")
    assert event.chain == ZONE
    assert event.actor == "rita"
    assert event.payload["gate"] == "escalate"
    assert event.payload["cohesion"] == body["cohesion"]
    assert event.payload["cohesion_tau"] == 0.9
    assert event.payload["escalated_to"] == "G1.U1.P1"
    assert event.payload["report"] == body["report"]["content_hash"]
    assert body["report"]["trail_event"] == f"{event.chain}#{event.seq}"


def test_a_question_needs_a_zone_and_a_known_method(reviewer_api: Any) -> None:
    no_zone = reviewer_api.get("/api/v1/graph/query/?q=x")
    assert no_zone.status_code == 400
    assert no_zone.json()["error"]["field"] == "zone"
    method = reviewer_api.get(f"/api/v1/graph/query/?q=x&zone={ZONE}&method=bfs")
    assert method.status_code == 400
    assert method.json()["error"]["field"] == "method"
    empty = ask(reviewer_api, q="anything")
    assert empty["gate"] is None  # no evidence at all: nothing to grade (issue 18)
    assert empty["subgraph"]["nodes"] == []


def _link(source: str, target: str) -> None:
    a = graph_store.node_ensure(key=source, node_type="decision", label=source, zone=ZONE)
    b = graph_store.node_ensure(key=target, node_type="person", label=target, zone=ZONE)
    graph_store.edge_upsert(
        source=a, target=b, edge_type="approved_by", zone=ZONE, origin=EdgeOrigin.MANUAL
    )


def _pairs() -> set[tuple[str | None, str | None]]:
    graph = graph_store.snapshot()
    return {
        (graph.keys[int(s)], graph.keys[int(d)])
        for s, d in zip(graph.edges.src, graph.edges.dst, strict=True)
    }


def test_the_cached_index_replays_new_changes_instead_of_rebuilding(org: Any) -> None:
    graph_store.index_forget()
    _link("decision:a", "person:p")
    before = graph_store.loaded_graph()
    assert _pairs() == {("decision:a", "person:p")}
    _link("decision:b", "person:p")
    after = graph_store.loaded_graph()
    assert after is before  # the same index, brought up to date
    assert after.replayed > 0
    assert _pairs() == {("decision:a", "person:p"), ("decision:b", "person:p")}


def test_a_rolled_back_change_the_index_had_seen_does_not_linger(org: Any) -> None:
    graph_store.index_forget()
    _link("decision:a", "person:p")
    with transaction.atomic():
        _link("decision:ghost", "person:p")
        assert ("decision:ghost", "person:p") in _pairs()  # the index saw it...
        transaction.set_rollback(True)  # ...and then it never happened
    _link("decision:b", "person:p")  # the same generation number again, another change
    assert _pairs() == {("decision:a", "person:p"), ("decision:b", "person:p")}
    assert not GraphNode.objects.filter(key="decision:ghost").exists()


@pytest.mark.parametrize(
    ("tau", "gate", "stored"),
    [(0.1, "direct", "auto"), (0.2, "qualified", "flagged"), (0.9, "escalate", "required")],
)
def test_a_graph_answer_stores_its_bundle_and_report_and_the_trail_carries_its_hash(
    import_lines: Callable[..., Any],
    reviewer_api: Any,
    set_policy: Callable[..., None],
    tau: float,
    gate: str,
    stored: str,
) -> None:
    from evidence.models import ValidationReport

    import_lines(TWO_ISLANDS)
    set_policy(cohesion_tau=tau)
    body = ask(reviewer_api, q="printer", k=4)
    assert body["gate"] == gate
    report = ValidationReport.objects.get()
    assert body["report_id"] == report.pk == body["report"]["id"]
    assert report.cohesion == body["cohesion"]
    assert report.gate == stored
    assert report.mode == "graph-hop"
    assert report.completeness == 0
    assert report.policy["cohesion_tau"] == tau
    assert report.body["structural_gaps"] == body["structural_gaps"]
    assert report.body["escalated_to"] == body["escalated_to"]
    assert report.body["gate"] == gate
    claims = report.bundle.claims
    assert {(c["edge"]["source"], c["edge"]["target"]) for c in claims} == {
        (e["source"], e["target"]) for e in body["subgraph"]["edges"]
    }
    assert all(c["citations"] == [] for c in claims)  # no document nodes among the evidence
    event = TrailEvent.objects.get(kind="graph.answered")
    assert event.payload["report"] == report.content_hash == body["report"]["content_hash"]
    assert event.payload["report_id"] == report.pk


def test_a_document_node_in_the_evidence_is_cited_by_its_claim(
    import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    from evidence.models import ValidationReport

    import_lines(CHAIN)
    ask(reviewer_api, k=4)
    claims = ValidationReport.objects.get().bundle.claims
    cited = [c for c in claims if c["citations"]]
    assert [c["edge"]["target"] for c in cited] == ["document:evaluation"]
    assert cited[0]["citations"] == [{"node": "document:evaluation", "document": None}]


def _document_citations() -> list[dict[str, Any]]:
    from evidence.models import ValidationReport

    claims = ValidationReport.objects.get().bundle.claims
    return [c for claim in claims for c in claim["citations"] if c["document"] is not None]


def test_a_graph_answer_cites_the_version_its_edge_was_read_from_after_a_newer_one_is_current(
    ingest: Callable[..., Any], reviewer_api: Any
) -> None:
    from graph.models import GraphEdge

    # given an edge extracted from version 2 that version 3 no longer asserts (kept, stale)
    ingest("Memo\n\nThe budget is 100,000 yen.\n", title="Memo", key="m", kind="memo")
    ingest("Memo\n\nThe budget is 300,000 yen.\n", title="Memo", key="m", kind="memo")
    memo = ingest("Memo\n\nThe budget is 450,000 yen.\n", title="Memo", key="m", kind="memo")
    read = GraphEdge.objects.get(target__key=f"amount:{ZONE}:300,000 JPY")
    assert (read.document_version, read.stale) == (2, True)
    document = read.document_id
    assert memo.document.pk == document
    assert memo.version.version == 3
    # when the graph answers over it
    before = timezone.now()
    ask(reviewer_api, q="Memo 300,000", k=2)
    after = timezone.now()
    # then the document is cited at the version the fact was read from, and when
    citations = _document_citations()
    assert [(c["node"], c["document"], c["version"]) for c in citations] == [
        (f"document:{document}", document, 2)
    ]
    retrieved = parse_datetime(citations[0]["retrieved_at"])
    assert retrieved is not None
    assert before <= retrieved <= after


def test_a_graph_answer_over_an_edge_of_no_version_cites_the_current_version(
    ingest: Callable[..., Any], import_lines: Callable[..., Any], reviewer_api: Any
) -> None:
    from evidence.models import ValidationReport

    # given a document of two versions and an imported edge to it, which carries no version
    ingest("Memo\n\nThe budget is 100,000 yen.\n", title="Memo", key="m", kind="memo")
    memo = ingest("Memo\n\nThe budget is 300,000 yen.\n", title="Memo", key="m", kind="memo")
    document = memo.document.pk
    imported = import_lines([
        edge("decision:lease", f"document:{document}", "references", tt="document",
             source_label="printer lease", target_label="Memo"),
    ])  # fmt: skip
    assert imported.status_code == 201, imported.json()
    # when the graph answers over it
    ask(reviewer_api, q="printer lease memo", k=2)
    # then the citation is pinned to the version current at answer time
    claims = ValidationReport.objects.get().bundle.claims
    cited = [(c["edge"]["source"], c["citations"]) for c in claims if c["citations"]]
    assert [
        (source, [(c["document"], c["version"]) for c in citations]) for source, citations in cited
    ] == [("decision:lease", [(document, 2)])]
    citations = cited[0][1]
    assert parse_datetime(citations[0]["retrieved_at"]) is not None


def test_an_h_star_below_one_half_is_flat_retrieval() -> None:
    """Seed 002 §5.2: h* = B/N - 1, rounded (3.42 -> 3, 1.38 -> 1); on a graph so loosely
    knit that N = N0/(1 - lambda2) exceeds B, h* is below 0 and the query diffuses nothing."""
    from graph.queries import HOP_B, choose_hops

    n = 24  # a long path: lambda2 of Ahat is cos(pi/(n-1)), the gap about 0.009
    path = sp.csr_array((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    choice = choose_hops(path, np.ones(n, dtype=bool), None, 2)
    assert choice.spectral_gap is not None
    assert 0 < choice.spectral_gap < 0.02
    assert HOP_B / (0.02 / choice.spectral_gap) - 1 < 0  # N > B: the model says no hop helps
    assert choice.hops == 0  # it was clamped to 1


def test_the_papers_chain_gets_its_own_cohesion() -> None:
    """Seed 002 §8.1 on §4.1's 4-node procurement chain: Cohesion = (1/|S|^2) sum A_ij over
    ordered pairs = 3/16, each one-way edge counted once (it was 6/16 with A + A^T)."""
    from graph.core.cohesion import set_cohesion
    from graph.queries import relation

    chain = sp.csr_array(np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], float))
    assert set_cohesion(relation(chain), [0, 1, 2, 3]) == pytest.approx(0.1875)
    both_ways = sp.csr_array(chain + chain.T)
    assert set_cohesion(relation(both_ways), [0, 1, 2, 3]) == pytest.approx(0.375)
    assert set_cohesion(relation(chain * 3), [0, 1, 2, 3]) == pytest.approx(0.1875)  # capped at 1


def test_a_linked_chain_below_tau_is_qualified_as_thin_not_as_unlinked_parts(
    import_lines: Callable[..., Any], reviewer_api: Any, set_policy: Callable[..., None]
) -> None:
    # given the paper's chain (cohesion 3/16) under a stricter tau_c: qualified, one piece
    import_lines(CHAIN)
    set_policy(cohesion_tau=0.3)
    body = ask(reviewer_api, k=4)
    assert body["gate"] == "qualified"
    assert body["structural_gaps"] == []
    # then the caution says what holds it back, not "1 unlinked parts"
    assert "unlinked" not in body["answer"]
    assert "hangs together only thinly" in body["answer"]
