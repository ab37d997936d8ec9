"""How a decision reads over the API and in the pages: a row for lists, the detail view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from decisions.delivery import delivery_of
from decisions.escalation import escalation_explained
from decisions.models import Decision
from decisions.services import OVERRIDE_APPROVALS, override_approvals
from trail.models import TrailEvent


def decision_row(decision: Decision) -> dict[str, Any]:
    return {
        "id": decision.pk,
        "state": decision.state,
        "gate": decision.gate or None,
        "mode": decision.mode or None,
        "zone": decision.zone,
        "agent": decision.agent,
        "question": decision.question,
        "sufficiency": decision.sufficiency,
        "policy_version": decision.policy_label or None,
        "due_at": decision.due_at.isoformat() if decision.due_at else None,
        "escalated_to": decision.escalated_to or None,
        "claimed_by": decision.claimed_by.get_username() if decision.claimed_by else None,
        "claimed_until": decision.claimed_until.isoformat() if decision.claimed_until else None,
        "created_at": decision.created_at.isoformat(),
        "updated_at": decision.updated_at.isoformat(),
    }


def _event(event: TrailEvent) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "actor": event.actor,
        "reason": event.reason,
        "at": event.created_at.isoformat(),
        "chain": event.chain,
        "seq": event.seq,
        "hash": event.hash,
    }


def decision_events(decision: Decision) -> list[dict[str, Any]]:
    return [
        _event(event) for event in TrailEvent.objects.filter(decision_id=decision.pk).order_by("pk")
    ]


def decision_detail(
    decision: Decision, *, events: Sequence[TrailEvent] | None = None
) -> dict[str, Any]:
    """The decision with its report, approvals and trail events. `events`, when given, are
    all of its events and it has no approvals (a decision just proposed, as it was made)."""
    report = decision.report
    body = report.body if report is not None else {}
    return {
        **decision_row(decision),
        "answer": decision.answer,
        "completeness": decision.completeness,
        "cohesion": decision.cohesion,
        "policy": report.policy if report is not None else None,
        "claims": body.get("claims", [{"text": c["text"]} for c in decision.bundle.claims]),
        "contradictions": body.get("contradictions", []),
        "numberless_claim_share": body.get("numberless_claim_share"),
        "answer_check": body.get("answer"),
        "addressing": body.get("addressing"),
        "held_at_least": body.get("at_least"),
        "delivered": delivery_of(decision).as_dict(),
        "refusal": decision.refusal,
        "outcome_reason": decision.outcome_reason or None,
        # A graph answer escalated for its cohesion: why, in the reader's language, and the
        # pairs of its evidence nodes with no relation (None for any other decision).
        "escalation": escalation_explained(body) if decision.escalated_to else None,
        "bundle_hash": decision.bundle.content_hash,
        "report_hash": report.content_hash if report is not None else None,
        "approvals": [
            {
                "reviewer": a.reviewer.get_username(),
                "at": a.created_at.isoformat(),
                "reason": a.reason,
                "replacement": a.replacement,
            }
            for a in (
                decision.approvals.select_related("reviewer").order_by("pk")
                if events is None
                else ()
            )
        ],
        "override": override_progress(decision) if events is None else None,
        "events": decision_events(decision) if events is None else [_event(e) for e in events],
    }


def override_progress(decision: Decision) -> dict[str, Any] | None:
    """Where the two-person override of a blocked answer stands; None for any other answer,
    or a blocked one nobody asked to release."""
    approvals = override_approvals(decision)
    if not approvals:
        return None
    given = len(approvals)
    by = "; ".join(f"{a.reviewer}: {a.reason}" for a in approvals)
    return {
        "given": given,
        "needed": OVERRIDE_APPROVALS,
        "approvals": [
            {"reviewer": a.reviewer, "reason": a.reason, "at": a.at.isoformat()} for a in approvals
        ],
        "text": f"{given} of {OVERRIDE_APPROVALS} override approvals, by {by}",
    }
