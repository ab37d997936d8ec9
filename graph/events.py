"""Everything that can happen to the knowledge graph by hand or by a question: one function
per kind of trail event, written to the zone's own chain inside the caller's transaction.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

from trail import ledger

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from coordinates.coordinate import Coordinate
    from trail.models import TrailEvent


class Kind(StrEnum):
    GRAPH_EDGE_ADDED = "graph.edge_added"
    GRAPH_EDGE_DELETED = "graph.edge_deleted"
    GRAPH_NODE_DELETED = "graph.node_deleted"
    GRAPH_NODE_WRITTEN = "graph.node_written"
    GRAPH_IMPORTED = "graph.imported"
    GRAPH_ANSWERED = "graph.answered"
    GRAPH_RISK_FLAGGED = "graph.risk_flagged"
    GRAPH_RISK_RESOLVED = "graph.risk_resolved"


def graph_edge_added(
    *, zone: Coordinate, source: str, target: str, edge_type: str, actor: AbstractBaseUser
) -> TrailEvent:
    """Someone asserted an edge by hand (REST)."""
    return ledger.append(
        kind=Kind.GRAPH_EDGE_ADDED,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={"source": source, "target": target, "type": edge_type},
    )


def graph_edge_deleted(
    *,
    zone: Coordinate,
    source: str,
    target: str,
    edge_type: str,
    actor: AbstractBaseUser,
    reason: str = "",
) -> TrailEvent:
    return ledger.append(
        kind=Kind.GRAPH_EDGE_DELETED,
        chain=ledger.chain_for(zone),
        actor=actor,
        reason=reason,
        payload={"source": source, "target": target, "type": edge_type},
    )


def graph_node_deleted(
    *,
    zone: Coordinate,
    key: str,
    node_type: str,
    edges: int,
    actor: AbstractBaseUser,
    reason: str = "",
) -> TrailEvent:
    """A node left the graph, and its edges with it."""
    return ledger.append(
        kind=Kind.GRAPH_NODE_DELETED,
        chain=ledger.chain_for(zone),
        actor=actor,
        reason=reason,
        payload={"key": key, "type": node_type, "edges": edges},
    )


def graph_node_written(
    *,
    zone: Coordinate,
    key: str,
    node_type: str,
    label: str,
    attributes: dict[str, Any],
    created: bool,
    actor: AbstractBaseUser,
) -> TrailEvent:
    """Someone added a node by hand (REST), or changed one of their zone's; the attributes
    go in as their hash (they may be large)."""
    return ledger.append(
        kind=Kind.GRAPH_NODE_WRITTEN,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={
            "key": key,
            "type": node_type,
            "label": label,
            "attributes": ledger.content_hash(attributes),
            "created": created,
        },
    )


def graph_imported(
    *, zone: Coordinate, edges: int, nodes: int, digest: str, actor: AbstractBaseUser
) -> TrailEvent:
    """A bulk import: how many edges and new nodes, and the hash of the file."""
    return ledger.append(
        kind=Kind.GRAPH_IMPORTED,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={"edges": edges, "nodes_created": nodes, "content": digest},
    )


def graph_answered(
    *,
    zone: Coordinate,
    actor: AbstractBaseUser | str | None,
    question: str,
    method: str,
    cohesion: float,
    cohesion_tau: float,
    outcome: str,
    nodes: list[str],
    escalated_to: str | None,
    report: str,
    report_id: int | None = None,
) -> TrailEvent:
    """A question answered from the graph, and how the graph gate judged its evidence."""
    return ledger.append(
        kind=Kind.GRAPH_ANSWERED,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={
            "question": ledger.content_hash(question.encode()),
            "method": method,
            "cohesion": cohesion,
            "cohesion_tau": cohesion_tau,
            "gate": outcome,
            "nodes": nodes[:50],
            "escalated_to": escalated_to,
            "report": report,
            "report_id": report_id,
        },
    )


def graph_risk_flagged(
    *,
    zone: Coordinate,
    actor: AbstractBaseUser | str | None,
    key: str,
    node_zone: str,
    share: float,
    threshold: float,
    review_by: str,
    graph_generation: int,
) -> TrailEvent:
    """A node carries more of the zone's causal paths than its risk_threshold allows: it is
    sent for review by the parent level's authority (written once per threshold crossing).
    The node is named by its key and its own zone ("" shared): a level holds many zones."""
    return ledger.append(
        kind=Kind.GRAPH_RISK_FLAGGED,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={
            "node": key,
            "node_zone": node_zone,
            "share": share,
            "threshold": threshold,
            "review_by": review_by,
            "graph_generation": graph_generation,
        },
    )


def graph_risk_resolved(
    *,
    zone: Coordinate,
    actor: AbstractBaseUser,
    key: str,
    node_zone: str,
    flag: str,
    status: str,
    note: str,
    review_by: str,
) -> TrailEvent:
    """The parent level's authority reviewed a risk flag: acknowledged (a real concentration,
    being handled) or dismissed (not a risk), with its note as the reason. `flag` is the
    "chain#seq" of the graph.risk_flagged event it answers."""
    return ledger.append(
        kind=Kind.GRAPH_RISK_RESOLVED,
        chain=ledger.chain_for(zone),
        actor=actor,
        reason=note,
        payload={
            "node": key,
            "node_zone": node_zone,
            "flag": flag,
            "status": status,
            "review_by": review_by,
        },
    )
