"""Everything that can happen to a decision, one function per kind of trail event.

Each function names its event and payload and calls `ledger.append` on the decision's lane
inside the caller's transaction. Payloads stay small: anything big (an evidence bundle, a
validation report) goes in as its content hash, never as content. To add a kind: add it to
`Kind`, then a function like the ones below. The zone tree's events are in
`coordinates.events`, the knowledge graph's in `graph.events`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from trail import ledger

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from decisions.models import Decision
    from evidence.models import ValidationReport
    from trail.models import TrailEvent


class Kind(StrEnum):
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
    ASK_REFUSED = "ask.refused"


def _decision(
    decision: Decision,
    kind: Kind,
    *,
    actor: AbstractBaseUser | None = None,
    reason: str = "",
    **payload: object,
) -> TrailEvent:
    # The knowledge graph follows these events after commit through the ledger's
    # events_committed signal (graph.receivers), in its own transaction and in bulk.
    return ledger.append(
        kind=kind,
        chain=ledger.lane_for(decision.zone, decision.pk),
        actor=actor,
        reason=reason,
        decision_id=decision.pk,
        payload={"state": decision.state, **payload},
    )


def decision_proposed(decision: Decision, *, actor: AbstractBaseUser) -> TrailEvent:
    """An agent submitted an answer; its bundle is sealed by its content hash."""
    return _decision(
        decision,
        Kind.DECISION_PROPOSED,
        actor=actor,
        agent=decision.agent,
        bundle=decision.bundle.content_hash,
        request=decision.request_hash,
    )


def decision_validated(decision: Decision, report: ValidationReport) -> TrailEvent:
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


def decision_queued(decision: Decision) -> TrailEvent:
    """A person must decide: the zone's reviewers have until the due date."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(decision, Kind.DECISION_QUEUED, due_at=due)


def decision_claimed(decision: Decision, *, actor: AbstractBaseUser) -> TrailEvent:
    until = decision.claimed_until.isoformat() if decision.claimed_until else None
    return _decision(decision, Kind.DECISION_CLAIMED, actor=actor, until=until)


def decision_released(decision: Decision, *, actor: AbstractBaseUser) -> TrailEvent:
    return _decision(decision, Kind.DECISION_RELEASED, actor=actor)


def decision_approval_recorded(
    decision: Decision, *, actor: AbstractBaseUser, given: int, needed: int, reason: str = ""
) -> TrailEvent:
    """One of several required approvals (four eyes): not yet approved; the approver's
    reason is on the trail as the final approver's is."""
    return _decision(
        decision,
        Kind.DECISION_APPROVAL_RECORDED,
        actor=actor,
        given=given,
        needed=needed,
        reason=reason,
    )


def decision_approved(
    decision: Decision, *, actor: AbstractBaseUser | None, reason: str = ""
) -> TrailEvent:
    """Approved by a reviewer, or by the system when the gate let it through."""
    return _decision(decision, Kind.DECISION_APPROVED, actor=actor, reason=reason)


def decision_overridden(decision: Decision, *, actor: AbstractBaseUser, reason: str) -> TrailEvent:
    """A blocked answer released anyway, by someone holding override_blocked."""
    return _decision(decision, Kind.DECISION_OVERRIDDEN, actor=actor, reason=reason)


def decision_executed(decision: Decision) -> TrailEvent:
    """The answer was released to its agent."""
    return _decision(decision, Kind.DECISION_EXECUTED)


def decision_completed(decision: Decision, *, how: str) -> TrailEvent:
    return _decision(decision, Kind.DECISION_COMPLETED, delivery=how)


def decision_failed(
    decision: Decision, *, actor: AbstractBaseUser | None, reason: str
) -> TrailEvent:
    """Blocked, rejected, or undeliverable: the reason says which."""
    return _decision(decision, Kind.DECISION_FAILED, actor=actor, reason=reason, gate=decision.gate)


def decision_escalated(decision: Decision, *, to: str) -> TrailEvent:
    """Past its review SLA: handed up to the parent level's authority."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(decision, Kind.DECISION_ESCALATED, to=to, due_at=due)


def ask_refused(
    *, zone: str, actor: AbstractBaseUser, question: str, context: Mapping[str, Any]
) -> TrailEvent:
    """`ask` found nothing good enough and answered nothing: what it found and how close it
    came, on the zone's chain (the question as its hash, as graph answers keep it)."""
    return ledger.append(
        kind=Kind.ASK_REFUSED,
        chain=ledger.chain_for(zone),
        actor=actor,
        payload={
            "question": ledger.content_hash(question.encode()),
            "found": [
                {"document": f["document"], "paragraph": f["paragraph"], "overlap": f["overlap"]}
                for f in context.get("found", [])
            ],
            "score": context.get("score"),
            "threshold": context.get("threshold"),
        },
    )
