"""Feeding (a) of the knowledge graph: it follows the trail's decision events.

Every decision is a node; its transitions add edges from it: proposed -> its agent and the
documents it cites, validated -> the policy version that judged it, approved/overridden ->
who approved, escalated -> the authority it went up to.

The trail is the source: `trail_follow` reads the decision events committed since it last
ran (a cursor per chain, kept in the graph's state row) and applies them all in one
transaction with a handful of queries however many there are: nodes and edges are read,
created and refreshed in bulk, and the change log gets one generation per node or edge
touched, as `graph_store.node_ensure` and `edge_upsert` would write them one at a time.
A decision change asks for a run after it commits (the trail's `events_committed`, received
by `graph.tasks.trail_follow_soon`); runs asked for
within a second share one, and a periodic run catches anything a lost request missed. So
the graph costs the pipeline a few queries a second, not a task per decision, and a run
that dies leaves the cursor where it was: the next one applies the same events again, and
every write is an upsert. An event that cannot be applied is quarantined (`trail.quarantine`)
and the cursor moves past it: one bad event never stops the graph for the others.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from coordinates.coordinate import Coordinate
from decisions.models import Decision
from evidence.models import Document
from graph.core.types import EdgeType, NodeType
from graph.models import EdgeOrigin, GraphEdge, GraphNode, GraphState
from graph.signals import risk_scan_wanted
from graph.store import SYSTEM_PERSON, _edge_data, _node_data, record_changes
from trail import ledger
from trail.models import TrailEvent, TrailHead
from trail.quarantine import quarantine, quarantined

SCAN_AFTER = 2.0  # seconds a zone's risk scan waits for more of the pipeline's changes
FOLLOW_AFTER = 1.0  # seconds the graph waits for more decision events before following
RUN = "graph.feed.trail_follow"  # the quarantine's name for this run (a task names its own)
# What ends a run instead of quarantining an event: the database, not the event, failed
# (the task retries the run; every event would otherwise be set aside one by one).
DATABASE_AWAY = (OperationalError, InterfaceError)
ROW_ID_MAX = 2**63 - 1  # the widest id a row holds (a PostgreSQL bigint)

# One committed decision event: (decision id, kind, actor as the trail names it, payload).
DecisionFact = tuple[int, str, str, dict[str, Any]]


@dataclass(slots=True)
class _NodeWanted:
    node_type: str
    label: str
    zone: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class _Plan:
    """The nodes (by key) and edges (source key, target key, type, zone) a batch asserts."""

    nodes: dict[str, _NodeWanted] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def node(self, key: str, node_type: str, label: str, zone: str = "", **facts: Any) -> str:
        """Assert a node (as `graph_store.node_ensure` would); its key. `facts` go into its
        attributes, merged over what the node has."""
        key, label = key[:200], (label.strip() or key)[:300]
        wanted = self.nodes.get(key)
        if wanted is None:
            self.nodes[key] = _NodeWanted(node_type, label, zone, dict(facts))
        else:
            wanted.node_type, wanted.label = node_type, label
            wanted.zone = zone or wanted.zone
            wanted.attributes.update(facts)
        return key

    def edge(self, source: str, target: str, edge_type: EdgeType, zone: str) -> None:
        self.edges[(source, target, str(edge_type))] = zone


def _cited(decision: Decision) -> set[int]:
    cited: set[int] = set()
    for claim in decision.bundle.claims:
        for citation in claim.get("citations", []):
            try:
                pk = int(citation["document"])
            except (KeyError, TypeError, ValueError):
                continue
            # An id no row can hold names no document (and SQLite cannot even be asked).
            if 1 <= pk <= ROW_ID_MAX:
                cited.add(pk)
    return cited


def _agent(plan: _Plan, coordinate: str) -> str:
    zone = str(Coordinate.parse(coordinate).zone())
    return plan.node(f"agent:{coordinate}", NodeType.PERSON, f"agent {coordinate}", zone)


def _person(plan: _Plan, username: str) -> str:
    if username == ledger.SYSTEM:
        return plan.node(SYSTEM_PERSON, NodeType.PERSON, "system (gate)")
    if username.startswith("agent:"):
        return _agent(plan, username.removeprefix("agent:"))
    return plan.node(f"person:{username}", NodeType.PERSON, username)


def _plan(facts: Sequence[DecisionFact]) -> _Plan:
    decisions = {
        d.pk: d
        for d in Decision.objects.filter(pk__in={f[0] for f in facts}).select_related("bundle")
    }
    proposed = [decisions[f[0]] for f in facts if f[1] == "decision.proposed" and f[0] in decisions]
    cited = {d.pk: _cited(d) for d in proposed}
    documents = {
        doc.pk: doc
        for doc in Document.objects.filter(
            pk__in=set().union(*cited.values()) if cited else set()
        ).select_related("zone")
    }
    plan = _Plan()
    for decision_id, kind, actor, payload in facts:
        decision = decisions.get(decision_id)
        if decision is None:
            continue  # deleted since: nothing to link
        zone = decision.zone
        node = plan.node(
            f"decision:{decision.pk}",
            NodeType.DECISION,
            decision.question[:300],
            zone,
            decision=decision.pk,
            state=decision.state,
            gate=decision.gate,
        )
        if kind == "decision.proposed":
            if decision.agent:  # a graph escalation a person asked names no agent
                plan.edge(node, _agent(plan, decision.agent), EdgeType.PROPOSED_BY, zone)
            for pk in sorted(cited.get(decision.pk, ())):
                document = documents.get(pk)
                # Only documents the decision's zone reads, its own or a level's above it
                # (documents at every level): a fabricated or foreign citation is no link.
                home = document.zone.coordinate if document is not None else ""
                if document is None or not (zone == home or zone.startswith(f"{home}.")):
                    continue
                target = plan.node(
                    f"document:{pk}",
                    NodeType.DOCUMENT,
                    document.title,
                    document.zone.coordinate,
                    document=pk,
                )
                plan.edge(node, target, EdgeType.REFERENCES, zone)
        elif kind == "decision.validated" and decision.policy_label:
            name = decision.policy_label
            # The zone's effective policy, a node of the zone: its label names the versions
            # of the zone's levels ("G1.U1.P2.Z9@3"), which no other zone may read, so it is
            # not shared the way people are.
            policy = plan.node(f"policy:{zone}:{name}", NodeType.POLICY, f"policy {name}", zone)
            plan.nodes[policy].attributes["label"] = name
            plan.edge(node, policy, EdgeType.CONSTRAINED_BY, zone)
        elif kind in ("decision.approved", "decision.overridden"):
            plan.edge(node, _person(plan, actor), EdgeType.APPROVED_BY, zone)
        elif kind == "decision.escalated":
            to = str(payload.get("to", ""))
            authority = plan.node(f"authority:{to}", NodeType.PERSON, f"authority of {to}", to)
            plan.edge(node, authority, EdgeType.ESCALATED_TO, zone)
    return plan


def _planned(plan: _Plan, keys: list[str]) -> dict[str, GraphNode]:
    """The stored nodes the plan means, by key: each in the zone the plan names for it (keys
    are unique per zone, so a zone admin's "decision:12" of another zone is not this one)."""
    rows = GraphNode.objects.filter(key__in=keys)
    return {n.key: n for n in rows if n.zone == plan.nodes[n.key].zone}


def _ensure_nodes(plan: _Plan, changes: list[tuple[str, dict[str, Any]]]) -> dict[str, GraphNode]:
    existing = _planned(plan, list(plan.nodes))
    missing = [key for key in plan.nodes if key not in existing]
    if missing:
        GraphNode.objects.bulk_create(
            [
                GraphNode(
                    key=key,
                    node_type=plan.nodes[key].node_type,
                    label=plan.nodes[key].label,
                    zone=plan.nodes[key].zone,
                    attributes=plan.nodes[key].attributes,
                )
                for key in missing
            ],
            ignore_conflicts=True,  # another batch may create the same person or policy
        )
        created = _planned(plan, missing)
        existing.update(created)
        changes.extend(("node", _node_data(created[key])) for key in missing if key in created)
    now = timezone.now()
    for key, wanted in plan.nodes.items():
        node = existing[key]
        if key in missing:
            continue
        merged = {**node.attributes, **wanted.attributes}
        after = (wanted.node_type, wanted.label, merged)
        if (node.node_type, node.label, node.attributes) == after:
            continue
        node.node_type, node.label, node.attributes = after
        # One UPDATE a node: a batch changes few, and bulk_update's CASE per column costs
        # more to build than the statements it saves.
        GraphNode.objects.filter(pk=node.pk).update(
            node_type=node.node_type,
            label=node.label,
            attributes=node.attributes,
            updated_at=now,
        )
        changes.append(("node", _node_data(node)))
    return existing


def _upsert_edges(
    plan: _Plan, nodes: dict[str, GraphNode], changes: list[tuple[str, dict[str, Any]]]
) -> set[str]:
    """Add or refresh the plan's edges; the zones where an edge was added."""
    sources = {nodes[s].pk for s, _, _ in plan.edges}
    existing = {
        (e.source_id, e.target_id, e.edge_type): e
        for e in GraphEdge.objects.filter(source_id__in=sources)
    }
    now = timezone.now()
    refreshed: dict[str, list[GraphEdge]] = {}  # by zone: every refreshed edge gets the same
    added: list[GraphEdge] = []
    fresh = {
        "weight": 1.0,
        "confidence": 1.0,
        "occurred_at": now,
        "stale": False,
        "origin": EdgeOrigin.PIPELINE,
        "document": None,
        "document_version": None,
    }
    for (source, target, edge_type), zone in plan.edges.items():
        s, t = nodes[source].pk, nodes[target].pk
        edge = existing.get((s, t, edge_type))
        if edge is None:
            added.append(
                GraphEdge(source_id=s, target_id=t, edge_type=edge_type, zone=zone, **fresh)
            )
            continue
        for name, value in fresh.items():
            setattr(edge, name, value)
        edge.zone = zone
        refreshed.setdefault(zone, []).append(edge)
    for zone, edges in refreshed.items():
        GraphEdge.objects.filter(pk__in=[e.pk for e in edges]).update(
            zone=zone, updated_at=now, **fresh
        )
        changes.extend(("edge", _edge_data(e)) for e in edges)
    if added:
        # ignore_conflicts: a concurrent batch may add the same edge; its row stands.
        GraphEdge.objects.bulk_create(added, ignore_conflicts=True)
    changes.extend(("edge", _edge_data(e)) for e in added)
    return {e.zone for e in added}


def decision_events_record(*, facts: Sequence[DecisionFact]) -> set[str]:
    """Apply decision events to the graph, inside the caller's transaction; the zones that
    gained an edge."""
    plan = _plan(facts)
    if not plan.nodes:
        return set()
    changes: list[tuple[str, dict[str, Any]]] = []
    nodes = _ensure_nodes(plan, changes)
    grown = _upsert_edges(plan, nodes, changes)
    record_changes(changes)
    return grown


def _unfed(fed: dict[str, int]) -> tuple[list[TrailEvent], dict[str, int]]:
    """The decision events committed after each chain's cursor, in each chain's order, and
    the heads they were read up to. A head read first covers only committed events (they
    commit with their head)."""
    heads: dict[str, int] = {}
    behind = Q()
    for chain, seq in TrailHead.objects.values_list("chain", "seq"):
        if seq > fed.get(chain, 0):
            heads[chain] = seq
            behind |= Q(chain=chain, seq__gt=fed.get(chain, 0), seq__lte=seq)
    if not heads:
        return [], heads
    events = list(
        TrailEvent.objects.filter(behind, decision_id__isnull=False)
        .only("chain", "seq", "kind", "decision_id", "actor", "canonical")
        .order_by("chain", "seq")
    )
    return events, heads


def _subject(event: TrailEvent) -> str:
    return f"trail_event:{event.pk}"


def _record(events: Sequence[TrailEvent]) -> set[str]:
    """Apply `events` in a savepoint of the run's transaction: all of them or none."""
    with transaction.atomic():
        facts = [
            (
                int(event.decision_id or 0),
                event.kind,
                event.actor,
                json.loads(bytes(event.canonical))["payload"],
            )
            for event in events
        ]
        return decision_events_record(facts=facts) if facts else set()


def _apply(events: Sequence[TrailEvent], *, whole: bool = True) -> set[str]:
    """Apply `events`, quarantining any that cannot be; the zones that gained an edge.

    All at once first. When that fails, the events an earlier run quarantined (a replay) are
    left out, and the rest halved until each failing event stands alone: one bad event costs
    its batch about 2 log2(n) more tries, and the others are applied as if it were not there.
    `whole`: `events` is the run's batch, not a part of one."""
    if not events:
        return set()
    try:
        return _record(events)
    except DATABASE_AWAY:
        raise
    except Exception as error:
        failed = error
    if whole:
        known = quarantined(run=RUN, subjects=[_subject(e) for e in events])
        if known:
            return _apply([e for e in events if _subject(e) not in known], whole=False)
    if len(events) == 1:
        quarantine(run=RUN, subject=_subject(events[0]), error=failed)
        return set()
    middle = len(events) // 2
    return _apply(events[:middle], whole=False) | _apply(events[middle:], whole=False)


def trail_follow(*, limit: int = 5000) -> int:
    """Apply the decision events committed since the last run, at most `limit` of them (the
    rest on the next run); how many were read (applied, or quarantined: see `_apply`). One
    transaction: the graph's state row is locked first, so runs take turns and never apply
    an event twice over each other. Zones
    that gained an edge get a risk scan soon after (only a new edge changes which paths
    exist, so only then can a node cross its risk threshold)."""
    with transaction.atomic():
        GraphState.objects.bulk_create([GraphState(pk=1)], ignore_conflicts=True)
        state = GraphState.objects.select_for_update().get(pk=1)
        fed = {str(chain): int(seq) for chain, seq in dict(state.fed).items()}
        events, heads = _unfed(fed)
        if not heads:
            return 0
        if len(events) > limit:
            # The oldest first; each chain's cursor moves only as far as what was applied.
            events = sorted(events, key=lambda e: e.pk)[:limit]
            events.sort(key=lambda e: (e.chain, e.seq))
            heads = {}
            for event in events:
                heads[event.chain] = max(heads.get(event.chain, 0), event.seq)
        grown = _apply(events)
        GraphState.objects.filter(pk=1).update(fed={**fed, **heads})
    for zone in sorted(grown):
        risk_scan_wanted.send(sender=GraphState, zone=zone, debounced=True)
    return len(events)
