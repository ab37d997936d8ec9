"""Everything that can happen, one function per kind of trail event.

Each function names its event, picks the chain (the zone-tree node the event is about) and
the payload, and calls `trail.append` inside the caller's transaction. Payloads stay small:
anything big (an evidence bundle, a validation report) goes in as its content hash
(`trail.content_hash`), never as content. To add a kind: add it to `Kind`, then a function
like the ones below.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING

from django.db import transaction

from decisions import trail
from decisions.models import DecisionEvent

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from coordinates.coordinate import Coordinate
    from coordinates.models import RoleAssignment, Zone, ZonePolicyVersion
    from decisions.models import Decision
    from evidence.models import ValidationReport


class Kind(StrEnum):
    POLICY_CHANGED = "policy.changed"
    ZONE_CREATED = "zone.created"
    ROLE_GRANTED = "role.granted"
    ROLE_REVOKED = "role.revoked"
    DECISION_PROPOSED = "decision.proposed"
    DECISION_VALIDATED = "decision.validated"
    DECISION_QUEUED = "decision.queued"
    DECISION_CLAIMED = "decision.claimed"
    DECISION_RELEASED = "decision.released"
    DECISION_APPROVAL_RECORDED = "decision.approval_recorded"
    DECISION_APPROVED = "decision.approved"
    DECISION_OVERRIDDEN = "decision.overridden"
    DECISION_EXECUTED = "decision.executed"
    DECISION_COMPLETED = "decision.completed"
    DECISION_FAILED = "decision.failed"
    DECISION_ESCALATED = "decision.escalated"
    GRAPH_EDGE_ADDED = "graph.edge_added"
    GRAPH_EDGE_DELETED = "graph.edge_deleted"
    GRAPH_NODE_DELETED = "graph.node_deleted"
    GRAPH_IMPORTED = "graph.imported"
    GRAPH_ANSWERED = "graph.answered"
    GRAPH_RISK_FLAGGED = "graph.risk_flagged"
    GRAPH_RISK_RESOLVED = "graph.risk_resolved"


def policy_changed(
    version: ZonePolicyVersion,
    *,
    actor: AbstractBaseUser | None,
    previous: ZonePolicyVersion | None = None,
) -> DecisionEvent:
    """A zone's own thresholds became a new version (the reason is the editor's)."""
    zone = version.zone
    return trail.append(
        kind=Kind.POLICY_CHANGED,
        chain=trail.chain_for(zone.coordinate),
        actor=actor,
        reason=version.reason,
        payload={
            "zone": zone.coordinate,
            "version": version.version,
            # Small and what an auditor wants to read: the thresholds themselves.
            "overrides": dict(version.overrides),
            "previous_version": previous.version if previous is not None else None,
        },
    )


def zone_created(zone: Zone, *, actor: AbstractBaseUser | None = None) -> DecisionEvent:
    """A node joined the zone tree (galaxy, universe, planet or zone)."""
    return trail.append(
        kind=Kind.ZONE_CREATED,
        chain=trail.chain_for(zone.coordinate),
        actor=actor,
        payload={
            "zone": zone.coordinate,
            "level": zone.level,
            "name": zone.name,
            "parent": zone.parent.coordinate if zone.parent is not None else None,
        },
    )


def role_granted(
    assignment: RoleAssignment, *, actor: AbstractBaseUser | None = None
) -> DecisionEvent:
    """Someone may now act as reviewer, zone admin or auditor on a scope and beneath it."""
    return trail.append(
        kind=Kind.ROLE_GRANTED,
        chain=trail.chain_for(assignment.scope),
        actor=actor,
        payload={
            "user": assignment.user.get_username(),
            "role": assignment.role,
            "scope": assignment.scope,
        },
    )


# --- decisions: every transition, the bundle and the report ----------------------------------


def role_revoked(
    *, user: AbstractBaseUser, role: str, scope: str, actor: AbstractBaseUser | None = None
) -> DecisionEvent:
    """Someone may no longer act in that role on that scope (their socket closes too)."""
    return trail.append(
        kind=Kind.ROLE_REVOKED,
        chain=trail.chain_for(scope),
        actor=actor,
        payload={"user": user.get_username(), "role": role, "scope": scope},
    )


def _decision(
    decision: Decision,
    kind: Kind,
    *,
    actor: AbstractBaseUser | None = None,
    reason: str = "",
    **payload: object,
) -> DecisionEvent:
    event = trail.append(
        kind=kind,
        chain=trail.lane_for(decision.zone, decision.pk),
        actor=actor,
        reason=reason,
        decision_id=decision.pk,
        payload={"state": decision.state, **payload},
    )
    # The knowledge graph follows the trail's decision events after commit, in its own
    # transaction and in bulk (evidence.graph_feed): graph writes share one generation row,
    # and holding it inside every decision's transaction made all zones wait on each other.
    if getattr(_graph, "asked", None) is not None:
        _graph.asked = True
    else:
        transaction.on_commit(_graph_follows)
    return event


# .asked: inside this thread's open graph_batch, whether a decision event was appended
_graph = threading.local()


@contextmanager
def graph_batch() -> Iterator[None]:
    """Decision events appended inside the block ask the knowledge graph to follow the trail
    once after commit, not once each (an auto-approved answer makes four in one change)."""
    if getattr(_graph, "asked", None) is not None:  # an outer block asks
        yield
        return
    _graph.asked = False
    try:
        yield
        asked = _graph.asked
    finally:
        _graph.asked = None
    if asked:
        transaction.on_commit(_graph_follows)


def _graph_follows() -> None:
    from evidence.graph_feed import trail_follow_soon

    trail_follow_soon()


def decision_proposed(decision: Decision, *, actor: AbstractBaseUser) -> DecisionEvent:
    """An agent submitted an answer; its bundle is sealed by its content hash."""
    return _decision(
        decision,
        Kind.DECISION_PROPOSED,
        actor=actor,
        agent=decision.agent,
        bundle=decision.bundle.content_hash,
        request=decision.request_hash,
    )


def decision_validated(decision: Decision, report: ValidationReport) -> DecisionEvent:
    """The engine judged the bundle: the report's hash, the scores and the policy used."""
    return _decision(
        decision,
        Kind.DECISION_VALIDATED,
        report=report.content_hash,
        gate=report.gate,
        mode=report.mode,
        sufficiency=report.sufficiency,
        completeness=report.completeness,
        cohesion=report.cohesion,
        policy=report.policy_label,
    )


def decision_queued(decision: Decision) -> DecisionEvent:
    """A person must decide: the zone's reviewers have until the due date."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(decision, Kind.DECISION_QUEUED, due_at=due)


def decision_claimed(decision: Decision, *, actor: AbstractBaseUser) -> DecisionEvent:
    until = decision.claimed_until.isoformat() if decision.claimed_until else None
    return _decision(decision, Kind.DECISION_CLAIMED, actor=actor, until=until)


def decision_released(decision: Decision, *, actor: AbstractBaseUser) -> DecisionEvent:
    return _decision(decision, Kind.DECISION_RELEASED, actor=actor)


def decision_approval_recorded(
    decision: Decision, *, actor: AbstractBaseUser, given: int, needed: int
) -> DecisionEvent:
    """One of several required approvals (four eyes): not yet approved."""
    return _decision(
        decision, Kind.DECISION_APPROVAL_RECORDED, actor=actor, given=given, needed=needed
    )


def decision_approved(
    decision: Decision, *, actor: AbstractBaseUser | None, reason: str = ""
) -> DecisionEvent:
    """Approved by a reviewer, or by the system when the gate let it through."""
    return _decision(decision, Kind.DECISION_APPROVED, actor=actor, reason=reason)


def decision_overridden(
    decision: Decision, *, actor: AbstractBaseUser, reason: str
) -> DecisionEvent:
    """A blocked answer released anyway, by someone holding override_blocked."""
    return _decision(decision, Kind.DECISION_OVERRIDDEN, actor=actor, reason=reason)


def decision_executed(decision: Decision) -> DecisionEvent:
    """The answer was released to its agent."""
    return _decision(decision, Kind.DECISION_EXECUTED)


def decision_completed(decision: Decision, *, how: str) -> DecisionEvent:
    return _decision(decision, Kind.DECISION_COMPLETED, delivery=how)


def decision_failed(
    decision: Decision, *, actor: AbstractBaseUser | None, reason: str
) -> DecisionEvent:
    """Blocked, rejected, or undeliverable: the reason says which."""
    return _decision(decision, Kind.DECISION_FAILED, actor=actor, reason=reason, gate=decision.gate)


def decision_escalated(decision: Decision, *, to: str) -> DecisionEvent:
    """Past its review SLA: handed up to the parent level's authority."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(decision, Kind.DECISION_ESCALATED, to=to, due_at=due)


# --- the knowledge graph: explicit changes and graph answers ------------------------------------


def graph_edge_added(
    *, zone: Coordinate, source: str, target: str, edge_type: str, actor: AbstractBaseUser
) -> DecisionEvent:
    """Someone asserted an edge by hand (REST)."""
    return trail.append(
        kind=Kind.GRAPH_EDGE_ADDED,
        chain=trail.chain_for(zone),
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
) -> DecisionEvent:
    return trail.append(
        kind=Kind.GRAPH_EDGE_DELETED,
        chain=trail.chain_for(zone),
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
) -> DecisionEvent:
    """A node left the graph, and its edges with it."""
    return trail.append(
        kind=Kind.GRAPH_NODE_DELETED,
        chain=trail.chain_for(zone),
        actor=actor,
        reason=reason,
        payload={"key": key, "type": node_type, "edges": edges},
    )


def graph_imported(
    *, zone: Coordinate, edges: int, nodes: int, digest: str, actor: AbstractBaseUser
) -> DecisionEvent:
    """A bulk import: how many edges and new nodes, and the hash of the file."""
    return trail.append(
        kind=Kind.GRAPH_IMPORTED,
        chain=trail.chain_for(zone),
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
) -> DecisionEvent:
    """A question answered from the graph, and how the graph gate judged its evidence."""
    return trail.append(
        kind=Kind.GRAPH_ANSWERED,
        chain=trail.chain_for(zone),
        actor=actor,
        payload={
            "question": trail.content_hash(question.encode()),
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
    share: float,
    threshold: float,
    review_by: str,
    graph_generation: int,
) -> DecisionEvent:
    """A node carries more of the zone's causal paths than its risk_threshold allows: it is
    sent for review by the parent level's authority (written once per threshold crossing)."""
    return trail.append(
        kind=Kind.GRAPH_RISK_FLAGGED,
        chain=trail.chain_for(zone),
        actor=actor,
        payload={
            "node": key,
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
    flag: str,
    status: str,
    note: str,
    review_by: str,
) -> DecisionEvent:
    """The parent level's authority reviewed a risk flag: acknowledged (a real concentration,
    being handled) or dismissed (not a risk), with its note as the reason. `flag` is the
    "chain#seq" of the graph.risk_flagged event it answers."""
    return trail.append(
        kind=Kind.GRAPH_RISK_RESOLVED,
        chain=trail.chain_for(zone),
        actor=actor,
        reason=note,
        payload={"node": key, "flag": flag, "status": status, "review_by": review_by},
    )
