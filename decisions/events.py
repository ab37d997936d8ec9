"""Everything that can happen to a decision, one function per kind of trail event.

Each function names its event and payload and calls `ledger.append` on the decision's lane
inside the caller's transaction. Payloads stay small: anything big (an evidence bundle, a
validation report) goes in as its content hash, never as content. To add a kind: add it to
`Kind`, then a function like the ones below. The zone tree's events are in
`coordinates.events`, the knowledge graph's in `graph.events`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from trail import ledger

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from decisions.models import Decision, PeriodicReview, ReReview
    from evidence.models import ValidationReport, ZoneCalibration
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
    PERIODIC_REVIEW_OPENED = "periodic_review.opened"
    PERIODIC_REVIEW_CLAIMED = "periodic_review.claimed"
    PERIODIC_REVIEW_RELEASED = "periodic_review.released"
    PERIODIC_REVIEW_CLOSED = "periodic_review.closed"
    DECISION_OVERRIDE_REQUESTED = "decision.override_requested"
    DECISION_ESCALATION_TOPPED = "decision.escalation_topped"
    CALIBRATION_PROPOSED = "calibration.proposed"
    CALIBRATION_ADOPTED = "calibration.adopted"
    REREVIEW_OPENED = "rereview.opened"
    REREVIEW_CLOSED = "rereview.closed"
    DECISION_COMMENTED = "decision.commented"
    DECISION_ASSIGNED = "decision.assigned"
    DECISION_CORRECTED = "decision.corrected"
    DECISION_ANSWER_REPLACED = "decision.answer_replaced"


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


def text_hash(text: str) -> str:
    """sha256 of the UTF-8 text: how an event seals a question or an answer it names."""
    return ledger.content_hash(text.encode())


def keys_hash(keys: Sequence[str] | None) -> str | None:
    """sha256 of the key list's compact JSON (`["decision:12","document:3"]`, in the order
    given), or None for no list: how `decision.proposed` seals a decision's graph evidence."""
    if keys is None:
        return None
    # A hash, not the list: up to 64 keys of up to 300 characters (decisions.api_decisions)
    # would be up to 19 kB in every proposed event, and payloads carry hashes of anything big.
    # Strings only, so this is the canonical JSON an auditor can rebuild and sha256sum.
    return ledger.content_hash(json.dumps(keys, separators=(",", ":"), ensure_ascii=False).encode())


def decision_proposed(decision: Decision, *, actor: AbstractBaseUser) -> TrailEvent:
    """An agent submitted an answer; its bundle, question, answer and graph evidence are
    sealed by their hashes (no graph evidence: null), so that `verify_trail` names a decision
    whose row says otherwise (audit.rows)."""
    return _decision(
        decision,
        Kind.DECISION_PROPOSED,
        actor=actor,
        agent=decision.agent,
        bundle=decision.bundle.content_hash,
        request=decision.request_hash,
        question=text_hash(decision.question),
        answer=text_hash(decision.answer),
        graph_evidence=keys_hash(decision.graph_evidence),
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


def _verdicts(claims: Sequence[Mapping[str, Any]] | None) -> dict[str, object]:
    """A reviewer's verdicts per claim ({index, supported, note}) for the payload; a system
    act has none, and its payload stays as it always was."""
    if claims is None:
        return {}
    return {
        "claims": [
            {"index": c["index"], "supported": c["supported"], "note": c.get("note", "")}
            for c in claims
        ]
    }


def decision_approval_recorded(
    decision: Decision,
    *,
    actor: AbstractBaseUser,
    given: int,
    needed: int,
    reason: str = "",
    claims: Sequence[Mapping[str, Any]] | None = None,
) -> TrailEvent:
    """One of several required approvals (four eyes): not yet approved; the approver's
    reason and verdicts per claim are on the trail as the final approver's are."""
    return _decision(
        decision,
        Kind.DECISION_APPROVAL_RECORDED,
        actor=actor,
        given=given,
        needed=needed,
        reason=reason,
        **_verdicts(claims),
    )


def decision_approved(
    decision: Decision,
    *,
    actor: AbstractBaseUser | None,
    reason: str = "",
    claims: Sequence[Mapping[str, Any]] | None = None,
) -> TrailEvent:
    """Approved by a reviewer (with their verdicts per claim), or by the system when the
    gate let it through."""
    return _decision(
        decision, Kind.DECISION_APPROVED, actor=actor, reason=reason, **_verdicts(claims)
    )


def decision_answer_replaced(
    decision: Decision, *, actor: AbstractBaseUser, replacement: str, reason: str = ""
) -> TrailEvent:
    """A reviewer wrote (or took over) the answer to deliver in place of the agent's, which
    stays stored as it was: the new text is sealed by its hash (it is kept on the reviewer's
    Approval row), beside the hash of the answer it replaces and the mode it had."""
    return _decision(
        decision,
        Kind.DECISION_ANSWER_REPLACED,
        actor=actor,
        reason=reason,
        replacement=text_hash(replacement),
        replaces=text_hash(decision.answer),
        mode=decision.mode or None,
    )


def decision_overridden(decision: Decision, *, actor: AbstractBaseUser, reason: str) -> TrailEvent:
    """A blocked answer released anyway, by someone holding override_blocked."""
    return _decision(decision, Kind.DECISION_OVERRIDDEN, actor=actor, reason=reason)


def decision_executed(decision: Decision) -> TrailEvent:
    """The answer was released to its agent."""
    return _decision(decision, Kind.DECISION_EXECUTED)


def decision_completed(decision: Decision, *, how: str) -> TrailEvent:
    return _decision(decision, Kind.DECISION_COMPLETED, delivery=how)


def decision_failed(
    decision: Decision,
    *,
    actor: AbstractBaseUser | None,
    reason: str,
    claims: Sequence[Mapping[str, Any]] | None = None,
) -> TrailEvent:
    """Blocked, rejected (with the reviewer's verdicts per claim), or undeliverable: the
    reason says which."""
    return _decision(
        decision,
        Kind.DECISION_FAILED,
        actor=actor,
        reason=reason,
        gate=decision.gate,
        **_verdicts(claims),
    )


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


# --- escalations that arrive, and two-person overrides (issue 18 point 4) -----------------


def decision_escalated_overdue(decision: Decision, *, to: str, was_due: str | None) -> TrailEvent:
    """Past its review SLA (`was_due`): handed up to the authority of `to`, the level above,
    whose queue now holds it, due again at `due_at`."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(
        decision, Kind.DECISION_ESCALATED, to=to, due_at=due, was_due=was_due, why="overdue"
    )


def decision_escalated_by_graph(
    decision: Decision, *, to: str, cohesion: float, cohesion_tau: float
) -> TrailEvent:
    """A graph answer whose evidence hangs together too little (cohesion below half its
    tau) went to the authority of `to` to decide; the decision's gate (required, whatever
    the report's) is on the event, as the rows check replays it (audit.rows)."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(
        decision,
        Kind.DECISION_ESCALATED,
        to=to,
        due_at=due,
        why="graph",
        gate=decision.gate,
        cohesion=cohesion,
        cohesion_tau=cohesion_tau,
    )


def decision_escalation_topped(decision: Decision, *, at: str) -> TrailEvent:
    """Overdue at the top of the tree: nothing is above `at`, so the item stays with its
    authority. Written once per decision (decisions_escalate_overdue looks for it)."""
    due = decision.due_at.isoformat() if decision.due_at else None
    return _decision(decision, Kind.DECISION_ESCALATION_TOPPED, at=at, due_at=due)


def decision_sent_back(
    decision: Decision, *, actor: AbstractBaseUser, reason: str, level: str
) -> TrailEvent:
    """The authority of `level`, to which the decision was escalated, sent it back for more
    evidence: it fails (a `decision.failed` by a person, as a rejection is, so the figures
    count it as a reviewer's verdict) with the outcome `more_evidence_needed`."""
    return _decision(
        decision,
        Kind.DECISION_FAILED,
        actor=actor,
        reason=reason,
        gate=decision.gate,
        outcome="more_evidence_needed",
        level=level,
    )


def decision_override_requested(
    decision: Decision, *, actor: AbstractBaseUser, reason: str, given: int, needed: int
) -> TrailEvent:
    """The first of two people with override_blocked asked to release a blocked answer; it
    stays blocked until a second, different one completes the override."""
    return _decision(
        decision,
        Kind.DECISION_OVERRIDE_REQUESTED,
        actor=actor,
        reason=reason,
        given=given,
        needed=needed,
    )


def decision_overridden_by_two(
    decision: Decision, *, actor: AbstractBaseUser, reason: str, requested_by: str, request: str
) -> TrailEvent:
    """A blocked answer released anyway by a second person holding override_blocked, after
    `requested_by` asked for it with the reason `request`."""
    return _decision(
        decision,
        Kind.DECISION_OVERRIDDEN,
        actor=actor,
        reason=reason,
        requested_by=requested_by,
        request=request,
    )


# --- periodic review of flagged answers (decisions.periodic) -------------------------------
# On the decision's own lane, so its page and the auditor's timeline show the look-back
# beside the answer it judges.


def periodic_review_opened(review: PeriodicReview) -> TrailEvent:
    """A flagged answer was sampled for the zone's periodic review (the system's act)."""
    return _decision(
        review.decision, Kind.PERIODIC_REVIEW_OPENED, review=review.pk, why=review.reason
    )


def periodic_review_claimed(review: PeriodicReview, *, actor: AbstractBaseUser) -> TrailEvent:
    until = review.claimed_until.isoformat() if review.claimed_until else None
    return _decision(
        review.decision, Kind.PERIODIC_REVIEW_CLAIMED, actor=actor, review=review.pk, until=until
    )


def periodic_review_released(review: PeriodicReview, *, actor: AbstractBaseUser) -> TrailEvent:
    return _decision(review.decision, Kind.PERIODIC_REVIEW_RELEASED, actor=actor, review=review.pk)


def periodic_review_closed(
    review: PeriodicReview, *, actor: AbstractBaseUser, released: bool
) -> TrailEvent:
    """A reviewer's verdict on a flagged answer, with their note as the reason; `released`:
    the answer had already gone to its agent, so a "wrong" verdict is serious."""
    return _decision(
        review.decision,
        Kind.PERIODIC_REVIEW_CLOSED,
        actor=actor,
        reason=review.note,
        review=review.pk,
        verdict=review.verdict,
        released=released,
        serious=released and review.verdict == "wrong",
    )


# --- zone calibrations of the claim verifier (decisions.calibration) ---------------------


def calibration_proposed(
    calibration: ZoneCalibration, *, actor: AbstractBaseUser | None
) -> TrailEvent:
    """A new calibration version was fitted for a zone: on how many verdicts, from when to
    when, by whom or what; it judges nothing until adopted."""
    return ledger.append(
        kind=Kind.CALIBRATION_PROPOSED,
        chain=ledger.chain_for(calibration.zone.coordinate),
        actor=actor,
        payload={
            "zone": calibration.zone.coordinate,
            "version": calibration.version,
            "method": calibration.method,
            "params": dict(calibration.params),
            "verdicts": calibration.verdicts,
            "window_from": calibration.window_from.isoformat(),
            "window_until": calibration.window_until.isoformat(),
            "fitted_by": calibration.fitted_by,
        },
    )


def calibration_adopted(
    calibration: ZoneCalibration,
    *,
    actor: AbstractBaseUser,
    reason: str,
    retired: ZoneCalibration | None,
) -> TrailEvent:
    """A zone admin adopted a calibration version: from now on it judges the zone's answers
    (and those of zones beneath it without one of their own); the one before is retired."""
    return ledger.append(
        kind=Kind.CALIBRATION_ADOPTED,
        chain=ledger.chain_for(calibration.zone.coordinate),
        actor=actor,
        reason=reason,
        payload={
            "zone": calibration.zone.coordinate,
            "version": calibration.version,
            "params": dict(calibration.params),
            "retired_version": retired.version if retired is not None else None,
        },
    )


def _rereview_payload(review: ReReview) -> dict[str, Any]:
    old = review.old_paragraph
    new = review.new_paragraph
    return {
        "rereview": review.pk,
        "cause": review.cause,
        "document": old.version.document_id,
        "cited": {"version": old.version.version, "paragraph": old.number},
        "now": {"version": new.version.version, "paragraph": new.number} if new else None,
        "conflict": review.conflict_id,
    }


def rereview_opened(review: ReReview) -> TrailEvent:
    """The text a past answer rested on changed: the answer is to be looked at again."""
    return _decision(review.decision, Kind.REREVIEW_OPENED, actor=None, **_rereview_payload(review))


def rereview_closed(review: ReReview, *, actor: AbstractBaseUser) -> TrailEvent:
    return _decision(
        review.decision,
        Kind.REREVIEW_CLOSED,
        actor=actor,
        reason=review.note,
        verdict=review.verdict,
        **_rereview_payload(review),
    )


def decision_corrected(
    decision: Decision, *, actor: AbstractBaseUser, verdict: str, note: str, rereview: int
) -> TrailEvent:
    """A released answer is wrong now that the text it rested on changed (a re-review's
    verdict): the answer stands as given, and its agent is told what is wrong."""
    return _decision(
        decision,
        Kind.DECISION_CORRECTED,
        actor=actor,
        reason=note,
        verdict=verdict,
        rereview=rereview,
    )


def decision_commented(
    decision: Decision, *, actor: AbstractBaseUser, text: str, comment: int
) -> TrailEvent:
    return _decision(decision, Kind.DECISION_COMMENTED, actor=actor, reason=text, comment=comment)


def decision_assigned(decision: Decision, *, actor: AbstractBaseUser, to: str | None) -> TrailEvent:
    return _decision(decision, Kind.DECISION_ASSIGNED, actor=actor, to=to)
