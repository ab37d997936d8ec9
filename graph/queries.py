"""Questions answered from the knowledge graph, gated by cohesion; responsibility paths and
risk concentration, and the risk flags raised from it. Reads a snapshot of the cached index
and calls the pure graph math."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
from django.db import transaction
from django.db.models import Case, Q, When
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop
from numpy.typing import NDArray
from scipy.sparse.csgraph import connected_components

from coordinates.coordinate import Coordinate
from coordinates.selectors import (
    EffectivePolicy,
    beneath,
    effective_policy,
    in_scopes,
    unknown_zone,
    within,
)
from decisions import services as decision_services
from decisions.escalation import graph_escalation
from decisions.models import Decision, Gate, State
from evidence import services as evidence_services
from evidence.models import ValidationReport
from evidence.provenance import retrieval_stamp
from evidence.services import bundle_create
from evidence.text import content_terms
from evidence.validation import citable_for, current_versions
from graph import events
from graph.core.cohesion import (
    select_evidence,
    set_cohesion,
    structural_gaps,
    unrelated_pairs,
)
from graph.core.diffusion import best_hop_count, h_hop, noise_from_gap, ppr, spectral_gap
from graph.core.gate import graph_grade
from graph.core.paths import CausalGraph, best_causal_path, causal_subgraph
from graph.core.query_type import cohesion_split, method_for, query_type
from graph.core.risk import risk_concentration
from graph.core.types import EDGE_TYPES, EdgeType
from graph.models import GraphEdge, GraphNode, GraphRiskFlag, RiskFlagStatus
from graph.store import GraphSnapshot, snapshot
from maria.errors import ApplicationError, NotFound
from trail.chain import canonical_json

Method = Literal["hop", "ppr", "auto"]
BoolArray = NDArray[np.bool_]

DEFAULT_K = 8  # evidence nodes per answer
CANDIDATE_POOL = 64  # the best-scored nodes the greedy selection chooses from
# docs/math.md §15 (contract documents): B = 0.42 and the noise N = N0 / (1 - lambda2).
HOP_B = 0.42
HOP_N0 = 0.02
SPECTRAL_LIMIT = 20_000  # above this many visible nodes the gap is not computed per query
RESPONSIBILITY_DEPTH = 4
RESPONSIBILITY_MIN_WEIGHT = 0.05


# Node types a zone inherits from the levels above it, as it inherits their documents
# (docs/architecture.md, "Documents at every level"); any other node of a level above stays
# that level's own.
INHERITED_TYPES = frozenset({"document", "policy"})


def _in_scope(
    zone: str | None, scopes: list[Coordinate] | None, node_type: str | None = None
) -> bool:
    if zone is None:
        return False  # a deleted node's empty row
    # people and policies are shared across zones
    if not zone or in_scopes(zone, scopes):
        return True
    return (
        node_type in INHERITED_TYPES
        and scopes is not None
        and any(str(scope).startswith(zone + ".") for scope in scopes)
    )


def visible_rows(graph: GraphSnapshot, scopes: list[Coordinate] | None) -> BoolArray:
    """The rows a reader of `scopes` sees: nodes of their zones (and the documents and
    policies of the levels above), shared policies, and shared people where they act, that
    is with an edge to a node the reader sees; nobody else's reviewers and approvers."""
    mask = np.fromiter(
        (_in_scope(z, scopes, t) for z, t in zip(graph.zones, graph.types, strict=True)),
        bool,
        graph.n_rows,
    )
    if scopes is None:
        return mask
    people = np.fromiter(
        (z == "" and t == "person" for z, t in zip(graph.zones, graph.types, strict=True)),
        bool,
        graph.n_rows,
    )
    if not people.any():
        return mask
    edges = graph.edges
    # Where they act: an edge either way to a node of the reader's, not to another person.
    seen = mask & ~people
    acting = np.zeros(graph.n_rows, dtype=bool)
    acting[edges.src[seen[edges.dst]]] = True
    acting[edges.dst[seen[edges.src]]] = True
    return mask & (~people | acting)


def restricted(adjacency: sp.csr_array, mask: BoolArray) -> sp.csr_array:
    """A with the rows and columns of invisible nodes zeroed: nothing flows through them."""
    keep = sp.diags_array(mask.astype(np.float64))
    out = sp.csr_array(keep @ adjacency @ keep)
    out.eliminate_zeros()
    return out


def relation(adjacency: sp.csr_array) -> sp.csr_array:
    """R = min(1, A): each directed relation counts once, as seed 002 §8.1 sums A_ij over
    ordered pairs (docs/math.md §16). Capped at 1 because A sums the weights of several edge
    types between one pair, and Cohesion must stay within [0, 1]; a relation held both ways
    counts twice, as in the paper."""
    capped = sp.csr_array(adjacency, copy=True)
    capped.data = np.minimum(capped.data, 1.0)
    return capped


def _node(graph: GraphSnapshot, row: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": graph.node_ids[row],
        "key": graph.keys[row],
        "type": graph.types[row],
        "label": graph.labels[row],
        "zone": graph.zones[row] or None,
        **extra,
    }


def _edges_among(graph: GraphSnapshot, rows: set[int], mask: BoolArray) -> list[dict[str, Any]]:
    """The relations among `rows`, each (source, target, type) once at its strongest weight
    (the graph may hold one relation from several origins: a document and a decision).

    Ends are nodes, not keys: an answer over a level reads several zones, and keys are unique
    per zone only, so two zones' "person:x" are two nodes with edges of their own. Each edge
    names its ends' node ids (`source_id`, `target_id`) beside their keys."""
    edges = graph.edges
    inside = np.isin(edges.src, list(rows)) & np.isin(edges.dst, list(rows))
    picked = np.flatnonzero(inside & mask[edges.src] & mask[edges.dst])
    strongest: dict[tuple[int, int, str], dict[str, Any]] = {}
    for i in picked.tolist():
        source, target = int(edges.src[i]), int(edges.dst[i])
        relation = (source, target, str(EDGE_TYPES[int(edges.edge_type[i])]))
        edge: dict[str, Any] = {
            "source": graph.keys[source],
            "target": graph.keys[target],
            "source_id": graph.node_ids[source],
            "target_id": graph.node_ids[target],
            "type": relation[2],
            "weight": round(float(edges.weight[i]), 6),
        }
        if relation not in strongest or edge["weight"] > strongest[relation]["weight"]:
            strongest[relation] = edge
    return list(strongest.values())


# A node's label close enough in meaning to the question to seed relevance without sharing
# a key term with it (a synonym under a semantic embedder); the hashing embedder's shared
# character n-grams alone give unrelated texts cosines of about 0.1 to 0.3.
RELEVANT_COSINE = 0.5
TERM_CHECKS = 512


def _relevant_rows(
    graph: GraphSnapshot, question: str, cosine: NDArray[np.float64], mask: BoolArray
) -> BoolArray:
    """Visible nodes whose label shares a key term with the question, or is close to it.

    Only the TERM_CHECKS labels closest to the question are read for terms: a label that
    shares one has shared features in the embedding too, and a large graph is not re-read
    word by word on every question."""
    terms = set(content_terms(question))
    relevant = mask & (cosine >= RELEVANT_COSINE)
    if terms:
        rows = np.flatnonzero(mask & ~relevant & (cosine > 0))
        closest = rows[np.argsort(-cosine[rows], kind="stable")[:TERM_CHECKS]]
        for row in closest.tolist():
            if terms & set(content_terms(str(graph.labels[row]))):
                relevant[row] = True
    return relevant


def _failed_decision_rows(graph: GraphSnapshot, mask: BoolArray) -> BoolArray:
    """Decision nodes of the engine's own decisions that failed or were blocked: a node
    "decision:12" is decision 12's only in decision 12's zone (keys are unique per zone, so
    another zone may hold a node of that key, and must learn nothing of decision 12)."""
    ids: dict[tuple[int, str], int] = {}
    for row in np.flatnonzero(mask).tolist():
        key = str(graph.keys[row])
        if key.startswith("decision:") and key[len("decision:") :].isdigit():
            ids[(int(key[len("decision:") :]), str(graph.zones[row]))] = row
    out = np.zeros(graph.n_rows, dtype=bool)
    if ids:
        bad = Decision.objects.filter(pk__in={pk for pk, _ in ids}).filter(
            Q(state=State.FAILED) | Q(gate=Gate.BLOCKED)
        )
        for pk, zone in bad.values_list("pk", "zone"):
            hit = ids.get((pk, zone))
            if hit is not None:
                out[hit] = True
    return out


def _no_evidence(
    *,
    question: str,
    zone: Coordinate,
    effective: EffectivePolicy,
    graph: GraphSnapshot,
    method: Method,
    actor: Any,
) -> dict[str, Any]:
    """Nothing in the zone's graph bears on the question: no evidence, so no gate to pass
    or fail; said so, stored and on the trail like any answer."""
    policy = effective.values
    report: dict[str, Any] = {
        "question": question,
        "zone": str(zone),
        "method": method,
        "hops": None,
        "spectral_gap": None,
        "optimal_hops": None,
        "gamma": None,
        "rho": None,
        "cohesion": 0.0,
        "cohesion_tau": policy.graph_tau,
        "gate": None,
        "graph_generation": graph.generation,
        "evidence": [],
    }
    body: dict[str, Any] = {
        **report,
        "no_evidence": True,
        "answer": gettext(
            "Nothing in the graph of %(zone)s bears on this question: no evidence, no gate."
        )
        % {"zone": zone},
        "subgraph": {"nodes": [], "edges": []},
        "structural_gaps": [],
        "components": [],
        "escalated_to": None,
    }
    return _recorded(
        body,
        report,
        zone=zone,
        effective=effective,
        actor=actor,
        outcome=NO_EVIDENCE,
        edges=[],
        nodes=[],
        relevance=0.0,
    )


@dataclass(frozen=True)
class Found:
    """What one retrieval method found: scores rescaled to a maximum of 1, the evidence set
    picked from them and its cohesion."""

    choice: HopChoice
    relevance: NDArray[np.float64]
    top: float
    chosen: NDArray[np.int64]
    cohesion: float


@dataclass(frozen=True)
class _Retrieval:
    """One question's graph and relevance, retrieved by h-hop or by PPR."""

    adjacency: sp.csr_array
    related: sp.csr_array
    x: NDArray[np.float64]
    mask: BoolArray
    excluded: BoolArray
    hops: int | None
    gamma: float
    policy_hops: int
    k: int

    def by_hops(self) -> Found:
        choice = choose_hops(self.adjacency, self.mask, self.hops, self.policy_hops)
        return self._found(h_hop(self.adjacency, self.x, self.gamma, choice.hops), choice)

    def by_ppr(self, rho: float) -> Found:
        scores = ppr(self.adjacency, self.x, rho) if self.x.size else self.x.copy()
        return self._found(scores, HopChoice(self.hops or self.policy_hops, None, None))

    def _found(self, scores: NDArray[np.float64], choice: HopChoice) -> Found:
        scores[~self.mask | self.excluded] = 0.0
        top = float(scores.max()) if scores.size else 0.0
        relevance = scores / top if top > 0 else scores
        positive = np.flatnonzero(relevance > 0)
        pool = positive[np.argsort(-relevance[positive], kind="stable")[:CANDIDATE_POOL]]
        chosen = (
            select_evidence(self.related, relevance, self.k, candidates=pool).nodes
            if pool.size
            else pool
        )
        cohesion = set_cohesion(self.related, chosen) if chosen.size else 0.0
        return Found(choice, relevance, top, chosen, cohesion)


# How many of a zone's past graph answers its cohesion split is read from (seed 002 §8.5).
COHESION_HISTORY = 500


def _cohesion_history(zone: Coordinate) -> list[float]:
    """The h-hop cohesion of the zone's latest graph answers, newest first."""
    values = (
        ValidationReport.objects.filter(bundle__zone=str(zone), mode__startswith="graph-")
        .exclude(body__hop_cohesion=None)
        .order_by("-pk")
        .values_list("body__hop_cohesion", flat=True)[:COHESION_HISTORY]
    )
    return [float(v) for v in values if isinstance(v, int | float)]


def _asked(method: str) -> dict[str, Any]:
    return {
        "asked": method,
        "used": method,
        "query_type": None,
        "reason": gettext("The method was asked for."),
    }


def _by_query_type(hop_cohesion: float, history: Sequence[float]) -> dict[str, Any]:
    """Seed 002 §8.5 and §6.3: the h-hop evidence's cohesion against the split between the
    two groups the zone's past answers fall into picks h-hop or PPR. While they do not fall
    into two groups there is no type to read, and h-hop (the default) answers. The body
    says which and why."""
    split = cohesion_split(history)
    values = {"cohesion": f"{hop_cohesion:.3f}", "count": split.history}
    choice: dict[str, Any] = {
        "asked": "auto",
        "hop_cohesion": round(hop_cohesion, 6),
        "split": None if split.split is None else round(split.split, 6),
        "bimodality": None if split.bimodality is None else round(split.bimodality, 6),
        "history": split.history,
    }
    if split.split is None:
        reason = gettext(
            "The last %(count)s answers of this zone do not fall into two groups by cohesion, "
            "so there is no query type to read; h-hop diffusion, the default, answered."
        )
        return {**choice, "used": "hop", "query_type": None, "reason": reason % values}
    kind = query_type(hop_cohesion, split.split)
    values["split"] = f"{split.split:.3f}"
    if kind == "causal":
        reason = gettext(
            "The h-hop evidence hangs together (cohesion %(cohesion)s, at least %(split)s, "
            "where this zone's last %(count)s answers divide): a causal chain, traced by h-hop "
            "diffusion."
        )
    else:
        reason = gettext(
            "The h-hop evidence is loose (cohesion %(cohesion)s, below %(split)s, where this "
            "zone's last %(count)s answers divide): an open or comparative question, answered "
            "by personalised PageRank over every depth."
        )
    return {**choice, "used": method_for(kind), "query_type": kind, "reason": reason % values}


@dataclass(frozen=True)
class HopChoice:
    hops: int
    spectral_gap: float | None
    optimal: float | None


def choose_hops(
    adjacency: sp.csr_array, mask: BoolArray, requested: int | None, policy: int
) -> HopChoice:
    """The requested h, else h* = B/N - 1 with N = N0/(1 - lambda2) on the visible graph,
    else (graph too large for a per-query eigenvalue) the zone's policy hops."""
    if requested is not None:
        return HopChoice(requested, None, None)
    rows = np.flatnonzero(mask)
    if not 2 <= rows.size <= SPECTRAL_LIMIT:
        return HopChoice(policy, None, None)
    sub = sp.csr_array(adjacency[rows][:, rows])
    if sub.nnz == 0:
        return HopChoice(policy, 0.0, 0.0)
    gap = spectral_gap(sub)
    noise = noise_from_gap(HOP_N0, max(gap, 0.0))
    if math.isinf(noise):
        # Disconnected: the gap is 0 and the model says flat retrieval; keep the policy depth
        # so that the pieces of a chain still reach each other.
        return HopChoice(policy, gap, 0.0)
    optimal = max(0.0, HOP_B / noise - 1.0)
    # An h* that rounds to 0 is the paper's flat retrieval (seed 002 §5.2): each hop would
    # add more noise than signal, so relevance stays x.
    return HopChoice(min(10, best_hop_count(HOP_B, noise)), gap, optimal)


def graph_answer(
    *,
    question: str,
    zone: Coordinate,
    scopes: list[Coordinate] | None,
    method: Method = "hop",
    hops: int | None = None,
    k: int = DEFAULT_K,
    actor: Any = None,
    agent: Coordinate | None = None,
) -> dict[str, Any]:
    """Embed q, x_i = max(0, cos(q, label_i)) on the visible nodes, diffuse (h-hop or PPR),
    pick k nodes greedily for relevance + cohesion, then gate on Cohesion(S) vs tau_c.

    An escalated answer asked by someone (`actor`; `agent` when an agent token asked) is
    also an item in the queue of the authority one level up (the galaxy's own at the top):
    `decision` in the body names it."""
    effective = effective_policy(zone)
    policy = effective.values
    graph = snapshot(embed=True)
    mask = visible_rows(graph, [zone] if scopes is None else _narrow(scopes, zone))
    adjacency = restricted(graph.adjacency, mask)
    query = evidence_services.embedder().embed([question])[0]
    x = np.zeros(graph.n_rows)
    if graph.vectors is not None and graph.n_rows:
        x = np.clip(graph.vectors @ query, 0.0, None).astype(np.float64)
    x[~mask] = 0.0
    # Evidence is what bears on the question and what the engine let stand: a node whose
    # label shares no key term with the question and is not close in meaning seeds nothing,
    # and a failed or blocked decision is never evidence (nor a step relevance flows through).
    excluded = _failed_decision_rows(graph, mask)
    x[~_relevant_rows(graph, question, x, mask & ~excluded)] = 0.0
    if not x.any():
        return _no_evidence(
            question=question,
            zone=zone,
            effective=effective,
            graph=graph,
            method=method,
            actor=actor,
        )
    adjacency = restricted(adjacency, mask & ~excluded)
    related = relation(adjacency)
    setting = _Retrieval(adjacency, related, x, mask, excluded, hops, policy.gamma, policy.hops, k)
    hop_cohesion: float | None = None
    if method == "ppr":
        found = setting.by_ppr(policy.ppr_rho)
        picked = _asked(method)
    else:
        found = setting.by_hops()
        hop_cohesion = found.cohesion
        picked = _asked(method)
        if method == "auto":
            picked = _by_query_type(found.cohesion, _cohesion_history(zone))
            if picked["used"] == "ppr":
                found = setting.by_ppr(policy.ppr_rho)
    method = picked["used"]
    choice, relevance, top, chosen, cohesion = (
        found.choice,
        found.relevance,
        found.top,
        found.chosen,
        found.cohesion,
    )
    outcome = graph_grade(cohesion, policy.graph_tau)
    gaps = structural_gaps(related, chosen)
    rows = {int(r) for r in chosen}
    nodes = [_node(graph, r, score=round(float(relevance[r]), 6)) for r in chosen.tolist()]
    edges = _edges_among(graph, rows, mask)
    pieces = [[graph.keys[int(r)] for r in piece] for piece in gaps.components]
    # the same pieces by node id: a level's zones may hold nodes of one key
    ids = [[graph.node_ids[int(r)] for r in piece] for piece in gaps.components]
    # At the top of the tree the escalation stays with the galaxy's own authority.
    escalated_to = str(zone.parent or zone) if outcome == "escalate" else None
    report = {
        "question": question,
        "zone": str(zone),
        "method": method,
        "hops": choice.hops if method == "hop" else None,
        "spectral_gap": choice.spectral_gap,
        "optimal_hops": choice.optimal,
        "gamma": policy.gamma if method == "hop" else None,
        "rho": policy.ppr_rho if method == "ppr" else None,
        "method_choice": picked,
        # The cohesion of the h-hop evidence, whichever method answered: the statistic a
        # zone's questions are classified by (seed 002 §8.5), read back by _cohesion_history.
        "hop_cohesion": None if hop_cohesion is None else round(hop_cohesion, 6),
        "cohesion": round(cohesion, 6),
        "cohesion_tau": policy.graph_tau,
        # The risk level that set tau_c; None when the zone set tau_c itself.
        "graph_risk": policy.graph_risk if policy.cohesion_tau is None else None,
        "gate": outcome,
        "graph_generation": graph.generation,
        "evidence": [n["key"] for n in nodes],
    }
    body: dict[str, Any] = {
        **report,
        "answer": _answer_text(outcome, nodes, edges, pieces, escalated_to),
        "subgraph": {"nodes": nodes, "edges": edges},
        "structural_gaps": (
            [
                {"between": [pieces[a], pieces[b]], "between_ids": [ids[a], ids[b]]}
                for a, b in gaps.gaps
            ]
            if outcome == "qualified"
            else []
        ),
        "components": pieces,
        "escalated_to": escalated_to,
    }
    if outcome == "escalate":
        # What the evidence does not show, pair by pair (seed 002 §14.5), and why it went up,
        # in the asker's language; the stored body keeps the gaps for later readers.
        body["gaps"] = [
            {"between": [_gap_end(graph, a), _gap_end(graph, b)]}
            for a, b in unrelated_pairs(related, chosen)
        ]
        explained = graph_escalation(body)
        body["why"] = explained["why"] if explained else None
    return _recorded(
        body,
        report,
        zone=zone,
        effective=effective,
        actor=actor,
        outcome=outcome,
        edges=edges,
        nodes=nodes,
        relevance=top,
        agent=agent,
        # Only a caller who acts on the asked level (or above it) files work for the
        # authority above it: asking a wider level from a zone below reads that level's
        # graph, and must not put an item in a queue of a zone the caller does not act in.
        files_item=scopes is None or any(s.covers(zone) for s in scopes),
        # What the authority above reads as the answer it may release: the facts the
        # evidence states, with the caution that they do not hang together.
        facts=_answer_text("qualified", nodes, edges, pieces, None) or "",
    )


def _evidence_rows(
    graph: GraphSnapshot, mask: BoolArray, zone: Coordinate, keys: Sequence[str]
) -> list[int | None]:
    """The row of each key the zone's reader sees: the zone's own node of that key first (keys
    are unique per zone), else a visible one of the levels above or a shared one."""
    wanted = set(keys)
    own: dict[str, int] = {}
    seen: dict[str, int] = {}
    for row in np.flatnonzero(mask).tolist():
        key = str(graph.keys[row])
        if key in wanted:
            (own if graph.zones[row] == str(zone) else seen).setdefault(key, row)
    return [own.get(key, seen.get(key)) for key in keys]


def evidence_graph_gate(*, zone: Coordinate, keys: Sequence[str], strict: bool) -> dict[str, Any]:
    """The graph gate on an agent's answer that names nodes of its zone's graph (seed 002
    §9.1): Cohesion of those nodes in the graph the zone sees, against the zone's tau_c.

    `strict` (at submission): a key the zone's graph lacks is a 404 naming the field. Else
    (at validation: the graph changed since) the key is listed as `missing` and the answer
    escalates, since a person must judge evidence the graph no longer holds."""
    policy = effective_policy(zone).values
    graph = snapshot(embed=False)
    mask = visible_rows(graph, [zone])
    found = _evidence_rows(graph, mask, zone, keys)
    missing = [key for key, row in zip(keys, found, strict=True) if row is None]
    if strict and missing:
        index = found.index(None)
        # 404, as for a document that does not exist: another zone's node is not told apart.
        raise NotFound(
            gettext("no node %(key)s in the graph of %(zone)s")
            % {"key": keys[index], "zone": zone},
            field=f"graph_evidence.{index}",
        )
    chosen = np.unique(np.asarray([row for row in found if row is not None], dtype=np.int64))
    related = relation(restricted(graph.adjacency, mask))
    cohesion = set_cohesion(related, chosen) if chosen.size else 0.0
    outcome = "escalate" if missing else graph_grade(cohesion, policy.graph_tau)
    return {
        "gate": outcome,
        "zone": str(zone),
        "cohesion": round(cohesion, 6),
        "cohesion_tau": policy.graph_tau,
        "graph_risk": policy.graph_risk if policy.cohesion_tau is None else None,
        "nodes": [_gap_end(graph, int(row)) for row in chosen.tolist()],
        "missing": missing,
        "gaps": [
            {"between": [_gap_end(graph, a), _gap_end(graph, b)]}
            for a, b in unrelated_pairs(related, chosen)
        ],
        "escalated_to": str(zone.parent or zone) if outcome == "escalate" else None,
        "graph_generation": graph.generation,
    }


def answer_graph_gate(
    sender: Any, *, zone: str, keys: Sequence[str], strict: bool, **_: Any
) -> dict[str, Any]:
    """decisions.signals.graph_gate_wanted: the graph gate on an agent's answer."""
    return evidence_graph_gate(zone=Coordinate.parse(zone), keys=keys, strict=strict)


def _gap_end(graph: GraphSnapshot, row: int) -> dict[str, Any]:
    return {"id": graph.node_ids[row], "key": graph.keys[row], "label": graph.labels[row]}


def _recorded(
    body: dict[str, Any],
    report: dict[str, Any],
    *,
    zone: Coordinate,
    effective: EffectivePolicy,
    actor: Any,
    outcome: str,
    edges: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    relevance: float,
    agent: Coordinate | None = None,
    facts: str = "",
    files_item: bool = True,
) -> dict[str, Any]:
    """Store the answer's report and its trail event in one transaction; the body returned
    names both, and the escalated item it made for the authority above, if any."""
    with transaction.atomic():
        stored = _store_report(
            zone=zone, policy=effective, body=body, edges=edges, nodes=nodes, relevance=relevance
        )
        event = events.graph_answered(
            zone=zone,
            actor=actor,
            question=report["question"],
            method=report["method"],
            cohesion=report["cohesion"],
            cohesion_tau=report["cohesion_tau"],
            outcome=outcome,
            nodes=[str(n["key"]) for n in nodes],
            escalated_to=body["escalated_to"],
            report=stored.content_hash,
            report_id=stored.pk,
        )
        escalated = None
        if outcome == "escalate" and files_item and getattr(actor, "is_authenticated", False):
            escalated = decision_services.decision_escalate_graph_answer(
                report=stored,
                question=str(report["question"]),
                answer=facts,
                zone=zone,
                user=actor,
                agent=agent,
            )
    if escalated is not None:
        body["decision"] = escalated.pk
    body["report"] = {
        **report,
        "id": stored.pk,
        "content_hash": stored.content_hash,
        "trail_event": f"{event.chain}#{event.seq}",
    }
    body["report_id"] = stored.pk
    return body


# How a graph gate outcome is stored in a ValidationReport's gate field (whose values are the
# answer gate's auto | flagged | required | blocked): a direct answer would pass on its own
# ("auto"), a qualified one passes with a caution a person should see ("flagged"), and an
# escalated one needs the parent level's authority ("required"). Nothing is "blocked".
GRAPH_GATE_AS_REPORT_GATE: dict[str, str] = {
    "direct": "auto",
    "qualified": "flagged",
    "escalate": "required",
}
# The outcome on the trail when no evidence bore on the question: there was no gate (the
# report's gate is empty).
NO_EVIDENCE = "no_evidence"


def _claims(
    edges: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    *,
    zone: Coordinate,
    answered_at: datetime,
) -> list[dict[str, Any]]:
    """One claim per evidence edge: the fact it states, citing its end nodes that are
    documents (by node key, and document id where the key names one); none otherwise.

    A citation of a document records its version and when it was read (seed 000 §2.2, as
    evidence.passages.citations_pinned does for agents' answers): the version the edge was
    extracted from when the edge is that document's, since that text is where the fact was
    read (a later version may no longer say it); else the version current now, where the
    zone may cite that document; else none. `retrieved_at` is the answer's time. A node key
    that names no document id is cited as it was, by key alone."""
    by_id = {n["id"]: n for n in nodes}  # by node: a level's zones may share keys
    labels = {i: f"{n['type']} “{n['label']}”" for i, n in by_id.items()}
    cited: list[list[tuple[str, int | None]]] = []
    for e in edges:
        ends = []
        for end, node_id in ((e["source"], e["source_id"]), (e["target"], e["target_id"])):
            node = by_id.get(node_id)
            if node is None or node["type"] != "document":
                continue
            ref = str(end).removeprefix("document:")
            ends.append((str(end), int(ref) if ref.isdigit() else None))
        cited.append(ends)
    read_from = _extracted_versions(edges) if any(cited) else {}
    unread = {
        document
        for e, ends in zip(edges, cited, strict=True)
        for _, document in ends
        if document is not None and read_from.get(_edge_key(e), (None, 0))[0] != document
    }
    current = current_versions(unread) if unread else {}
    stamp = retrieval_stamp(answered_at)
    claims = []
    for e, ends in zip(edges, cited, strict=True):
        citations: list[dict[str, Any]] = []
        for end, document in ends:
            if document is None:
                citations.append({"node": end, "document": None})
                continue
            citation: dict[str, Any] = {"node": end, "document": document}
            extracted = read_from.get(_edge_key(e))
            found = current.get(document)
            if extracted is not None and extracted[0] == document:
                citation["version"] = extracted[1]
            elif found is not None and citable_for(found, str(zone)):
                citation["version"] = found.version
            citation["retrieved_at"] = stamp
            citations.append(citation)
        claims.append({"text": _fact(e, labels), "edge": e, "citations": citations})
    return claims


def _edge_key(edge: Mapping[str, Any]) -> tuple[Any, Any, str]:
    return (edge["source_id"], edge["target_id"], str(edge["type"]))


def _extracted_versions(
    edges: Sequence[Mapping[str, Any]],
) -> dict[tuple[Any, Any, str], tuple[int, int]]:
    """The document and version each extracted edge among `edges` was read from, by (source
    node, target node, type), in one query; edges of no document version are absent (the
    index holds no versions: only the edge rows do)."""
    if not edges:
        return {}
    rows = GraphEdge.objects.filter(
        source_id__in={e["source_id"] for e in edges},
        target_id__in={e["target_id"] for e in edges},
        document__isnull=False,
        document_version__isnull=False,
    ).values_list("source_id", "target_id", "edge_type", "document_id", "document_version")
    wanted = {_edge_key(e) for e in edges}
    return {
        (source, target, str(kind)): (document, version)
        for source, target, kind, document, version in rows
        if (source, target, str(kind)) in wanted and document is not None and version is not None
    }


def _store_report(
    *,
    zone: Coordinate,
    policy: EffectivePolicy,
    body: dict[str, Any],
    edges: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    relevance: float,
) -> ValidationReport:
    """The graph answer as an immutable bundle (its evidence edges as claims) and report.

    sufficiency is the best diffusion score (relevance before normalisation, 0 if nothing
    matched); completeness is not computed for graph answers and stored as 0.
    """
    claims = _claims(edges, nodes, zone=zone, answered_at=timezone.now())
    bundle = bundle_create(zone=zone, claims=claims)
    full = {k: v for k, v in body.items() if k != "report"}
    report = ValidationReport(
        bundle=bundle,
        policy_label=policy.label,
        policy=policy.values.as_dict(),
        sufficiency=float(relevance) if math.isfinite(relevance) else 0.0,
        completeness=0.0,
        cohesion=float(body["cohesion"]),
        mode=f"graph-{body['method']}",
        gate=GRAPH_GATE_AS_REPORT_GATE.get(str(body["gate"]), ""),
        body=full,
        content_hash=hashlib.sha256(canonical_json(full)).hexdigest(),
    )
    report.save()
    return report


def _narrow(scopes: list[Coordinate], zone: Coordinate) -> list[Coordinate]:
    """The asked zone, but never more than the caller may read."""
    if any(s.covers(zone) for s in scopes):
        return [zone]
    inside = [s for s in scopes if zone.covers(s)]
    if not inside:
        raise unknown_zone(zone, field="zone")  # as for a zone that does not exist
    return inside


# The answer is read by whoever asked, in their language (an agent's token asks in English);
# its words are the node types and the relations, marked here for the catalogue.
_WORDS = (
    gettext_noop("person"),
    gettext_noop("decision"),
    gettext_noop("amount"),
    gettext_noop("deadline"),
    gettext_noop("document"),
    gettext_noop("policy"),
    gettext_noop("risk"),
    gettext_noop("approved by"),
    gettext_noop("proposed by"),
    gettext_noop("depends on"),
    gettext_noop("constrained by"),
    gettext_noop("allocated from"),
    gettext_noop("deadline for"),
    gettext_noop("escalated to"),
    gettext_noop("references"),
    gettext_noop("mitigates"),
    gettext_noop("caused by"),
)


def _fact(edge: dict[str, Any], labels: dict[Any, str]) -> str:
    """The sentence an edge states, its ends named by `labels` (by node id)."""
    verb = gettext(str(edge["type"]).replace("_", " "))
    return gettext("%(source)s %(verb)s %(target)s.") % {
        "source": labels[edge["source_id"]],
        "verb": verb,
        "target": labels[edge["target_id"]],
    }


def _answer_text(
    outcome: str,
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    pieces: list[list[str | None]],
    escalated_to: str | None,
) -> str | None:
    """The extractive answer: the facts the evidence edges state, and nothing more."""
    if outcome == "escalate" or not nodes:
        if nodes:
            return None
        if escalated_to is None:
            return gettext("No graph evidence; escalated to the authority of the parent level.")
        return gettext("No graph evidence; escalated to the authority of %(level)s.") % {
            "level": escalated_to
        }
    labels = {
        n["id"]: gettext("%(type)s “%(label)s”")
        % {"type": gettext(str(n["type"])), "label": n["label"]}
        for n in nodes
    }
    facts = list(dict.fromkeys(_fact(e, labels) for e in edges))  # each fact once
    text = " ".join(facts) if facts else gettext("The evidence nodes are not linked to each other.")
    if outcome == "qualified" and len(pieces) > 1:
        text += gettext(
            " Caution: the evidence falls into %(parts)s unlinked parts; the links between "
            "them are not shown by the graph."
        ) % {"parts": len(pieces)}
    elif outcome == "qualified":
        # One piece, but few of its pairs linked (seed 002 §8.1 counts every ordered pair):
        # a chain or a star of many nodes, which says less than its length suggests.
        text += gettext(
            " Caution: the evidence hangs together only thinly; few of its parts are linked "
            "to each other directly."
        )
    return text


# --- paths, responsibility, risk -------------------------------------------------------------


def _row(
    graph: GraphSnapshot, ref: str, mask: BoolArray, field: str, zone: str | None = None
) -> int:
    """The row of the node `ref` names among those the reader sees: a key (unique per zone,
    so only the reader's zones' nodes of that key count, or `zone`'s alone when given) or
    an id."""
    rows = [
        row
        for row in graph.rows_of_key(ref)
        if mask[row] and (zone is None or graph.zones[row] == zone)
    ]
    if not rows and ref.isdigit():
        ids = graph.node_ids
        rows = [ids.index(int(ref))] if int(ref) in ids else []
        rows = [row for row in rows if mask[row]]
    if not rows:
        raise NotFound(gettext("no graph node %(key)s") % {"key": repr(ref)}, field=field)
    if len(rows) > 1:
        # A reader of several zones that each hold the key: which one is not for us to guess.
        raise ApplicationError(
            gettext("graph node key %(key)s names a node in %(count)s of your zones; give its id")
            % {"key": repr(ref), "count": len(rows)},
            field=field,
        )
    return rows[0]


def _causal_graph(graph: GraphSnapshot, mask: BoolArray) -> CausalGraph:
    edges = graph.edges
    keep = mask[edges.src] & mask[edges.dst] & (edges.weight > 0)
    return CausalGraph.from_arrays(
        edges.src[keep],
        edges.dst[keep],
        edges.edge_type[keep],
        np.minimum(edges.weight[keep], 1.0),
        edges.time[keep],
        n_nodes=graph.n_rows,
    )


def best_path(
    *,
    source: str,
    target: str,
    scopes: list[Coordinate] | None,
    pattern: str | None = None,
    max_length: int | None = None,
    time_order: Literal["non_decreasing", "non_increasing", "any"] = "any",
) -> dict[str, Any]:
    """The strongest path source -> target under the edge-type pattern, time order and length."""
    graph = snapshot()
    mask = visible_rows(graph, scopes)
    s, t = _row(graph, source, mask, "source"), _row(graph, target, mask, "target")
    try:
        path = best_causal_path(
            _causal_graph(graph, mask), s, t, pattern, max_length=max_length, time_order=time_order
        )
    except (ValueError, KeyError) as error:
        raise ApplicationError(f"bad edge pattern: {error}", field="pattern") from error
    if path is None:
        return {"source": graph.keys[s], "target": graph.keys[t], "path": None}
    return {
        "source": graph.keys[s],
        "target": graph.keys[t],
        "path": {
            "nodes": [_node(graph, r) for r in path.nodes],
            "edge_types": [str(e) for e in path.edge_types],
            "weight": round(path.weight, 6),
            "length": path.length,
        },
    }


def responsibility(*, key: str, zone: str, scopes: list[Coordinate] | None) -> dict[str, Any]:
    """The subgraph of every strong chain leaving a decision of `zone` (who proposed and
    approved it, what it relied on, what constrained it), as nodes and edges ready to draw."""
    graph = snapshot()
    mask = visible_rows(graph, scopes)
    start = _row(graph, key, mask, "decision", zone)
    causal = _causal_graph(graph, mask)
    sub = causal_subgraph(
        causal,
        start,
        edge_types=list(EdgeType),
        min_weight=RESPONSIBILITY_MIN_WEIGHT,
        max_length=RESPONSIBILITY_DEPTH,
        time_order="any",
    )
    strength = dict(zip(sub.nodes.tolist(), sub.strength.tolist(), strict=True))
    share = _shares(sub.src, sub.dst, exclude=start)
    nodes = [
        _node(graph, r, strength=round(strength[r], 6), risk=round(share.get(r, 0.0), 6))
        for r in sub.nodes.tolist()
    ]
    drawn = [
        {
            "source": graph.keys[int(causal.src_of_edge[e])],
            "target": graph.keys[int(causal.dst_of_edge[e])],
            "type": str(EDGE_TYPES[int(causal.type_of_edge[e])]),
            "weight": round(float(causal.weight_of_edge[e]), 6),
        }
        for e in sub.edges.tolist()
    ]
    return {"root": graph.keys[start], "nodes": nodes, "edges": drawn}


def _acyclic(src: NDArray[np.int64], dst: NDArray[np.int64], n: int) -> BoolArray:
    """Edges outside every cycle: those whose ends lie in different strongly connected parts
    (path counts through a cycle are infinite, so such edges carry no share)."""
    if src.size == 0:
        return np.zeros(0, dtype=bool)
    matrix = sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    return np.asarray(labels[src] != labels[dst])


def _shares(src: NDArray[np.int64], dst: NDArray[np.int64], *, exclude: int) -> dict[int, float]:
    if src.size == 0:
        return {}
    n = int(max(src.max(), dst.max())) + 1
    keep = _acyclic(src, dst, n)
    result = risk_concentration(src[keep], dst[keep], threshold=1.0, exclude=[exclude])
    return {int(v): float(s) for v, s in zip(result.nodes, result.share, strict=True)}


@dataclass(frozen=True)
class RiskReading:
    """B(v) over one zone as one reader sees it, at one graph generation.

    `complete` when the reader sees the whole zone: only such a reading may raise or end risk
    flags (graph_services); a narrower view would miss paths and misjudge the shares.
    """

    zone: Coordinate
    threshold: float
    review_by: str
    generation: int
    complete: bool
    body: dict[str, Any]

    @property
    def hotspots(self) -> list[dict[str, Any]]:
        return list(self.body["hotspots"])


def risk(*, zone: Coordinate, scopes: list[Coordinate] | None) -> RiskReading:
    """B(v) = share of the zone's source-to-sink paths through v (cycles dropped); nodes at or
    above the zone's risk_threshold need review by the parent level's authority. Reads only:
    flags are raised by `graph_services.graph_risk_scan`."""
    threshold = effective_policy(zone).values.risk_threshold
    graph = snapshot()
    seen = [zone] if scopes is None else _narrow(scopes, zone)
    mask = visible_rows(graph, seen)
    edges = graph.edges
    keep = mask[edges.src] & mask[edges.dst] & (edges.weight > 0)
    src, dst = edges.src[keep], edges.dst[keep]
    acyclic = _acyclic(src, dst, graph.n_rows)
    result = risk_concentration(src[acyclic], dst[acyclic], threshold=threshold)
    parent = zone.parent
    review_by = str(parent) if parent is not None else str(zone)
    hot = set(result.hotspots.tolist())
    ranked = np.argsort(-result.share, kind="stable")
    hotspots = [
        {
            **_node(graph, int(v)),
            "share": round(result.share_of(int(v)), 6),
            "review_by": review_by,
        }
        for v in result.hotspots.tolist()
    ]
    body = {
        "zone": str(zone),
        "threshold": threshold,
        "paths": result.path_count,
        "cyclic_edges_dropped": int((~acyclic).sum()),
        "nodes": [
            _node(
                graph,
                int(result.nodes[i]),
                share=round(float(result.share[i]), 6),
                review=int(result.nodes[i]) in hot,
            )
            for i in ranked.tolist()[:200]
        ],
        "hotspots": hotspots,
    }
    return RiskReading(
        zone=zone,
        threshold=threshold,
        review_by=review_by,
        generation=graph.generation,
        complete=seen == [zone],
        body=body,
    )


def risk_flags(
    *,
    scopes: list[Coordinate] | None,
    zone: Coordinate | None = None,
    status: str | None = None,
    limit: int = 500,
) -> list[GraphRiskFlag]:
    """Risk flags of the zones a reader sees (on or beneath `zone` if given), open ones
    first, newest first."""
    flags = GraphRiskFlag.objects.select_related("resolved_by")
    if zone is not None:
        if scopes is not None:
            _narrow(scopes, zone)  # 404 for a zone the reader may not see at all
        flags = flags.filter(beneath(zone))
    if scopes is not None:
        flags = flags.filter(within(scopes))
    if status:
        flags = flags.filter(status=status)
    # Open flags first: by spelling, "open" would sort after "acknowledged" and "dismissed".
    open_first = Case(When(status=RiskFlagStatus.OPEN, then=0), default=1)
    return list(flags.order_by(open_first, "-created_at", "-pk")[:limit])


def node_labels(flags: Sequence[GraphRiskFlag]) -> dict[int, tuple[int, str, str]]:
    """(id, type, label) of the flags' nodes that still exist, by flag id (a flag outlives its
    node). A flag names its node by the node's own zone and key (keys are unique per zone)."""
    rows = GraphNode.objects.filter(key__in={f.key for f in flags})
    by_name = {
        (zone, key): (pk, node_type, label)
        for key, pk, zone, node_type, label in rows.values_list(
            "key", "pk", "zone", "node_type", "label"
        )
    }
    return {
        flag.pk: by_name[(flag.node_zone, flag.key)]
        for flag in flags
        if (flag.node_zone, flag.key) in by_name
    }
