"""The functions that move a decision through its states, each in one transaction.

Every change locks the decision row (`select_for_update`), checks who may act, makes the
transition, writes its trail event and queues its side effects in the outbox; the outbox is
sent only after commit. A transition from the wrong state, or one that lost a race, is 409.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django_fsm import ConcurrentTransition, TransitionNotAllowed

from coordinates.coordinate import Coordinate
from coordinates.models import ApiToken, Role
from coordinates.selectors import EffectivePolicy, effective_policy, has_role
from decisions import events
from decisions.models import (
    Approval,
    Decision,
    Gate,
    Outbox,
    PeriodicReview,
    State,
)
from decisions.outbox import outbox_send_after_commit, outbox_webhook
from decisions.signals import validation_wanted, validations_taken
from decisions.webhooks import (
    Release,
    completed_message,
    escalated_message,
    failed_message,
    rejected_message,
)
from evidence.judge import JudgeVerdict, judge_config
from evidence.models import ValidationReport
from evidence.passages import answer_claims
from evidence.services import bundle_create
from evidence.validation import evaluate_bundle, judge_bundle, read_cited
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound, Unprocessable
from maria.metrics import VALIDATION_SECONDS
from trail import ledger
from trail.chain import canonical_json
from trail.models import TrailEvent

log = logging.getLogger(__name__)

CLAIM_MINUTES = 15  # how long a reviewer's claim holds the decision for them
MAX_CLAIMS = 50  # claims of one answer, submitted as claims or found in a plain answer
REVIEW_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)


@dataclass(frozen=True, slots=True)
class Submitted:
    decision: Decision
    replayed: bool
    proposed: TrailEvent | None = None  # a new decision's first trail event


@contextmanager
def _zone_change(zone: str, *, idempotency: str = "") -> Iterator[None]:
    """One change in `zone`, in one transaction: its trail events are linked and written
    together at the end (`ledger.holding`) and announced once after commit. On PostgreSQL
    the lock of the decision's trail lane is the change's last step, after the decision's
    row lock, the same order everywhere, so nothing deadlocks and the changes of one lane
    take turns only for the writing of their events. On SQLite the zone's chain is locked
    by the first statement: a transaction that writes first waits for the write lock
    instead of failing.

    `idempotency` names a request key to claim first, without waiting (PostgreSQL): a
    request whose key another request holds is told 409 at once, not queued behind the zone.
    """
    with transaction.atomic():
        if idempotency and not _advisory_lock(idempotency):
            raise Conflict("a request with this Idempotency-Key is still being processed")
        with ledger.holding(ledger.chain_for(zone)):
            yield


def _zone_of(decision_id: int) -> str:
    """A decision's zone never changes, so it is read before the transaction begins."""
    zone = Decision.objects.filter(pk=decision_id).values_list("zone", flat=True).first()
    if zone is None:
        raise NotFound(f"no decision {decision_id}")
    return zone


@contextmanager
def _changing(decision_id: int) -> Iterator[None]:
    """One change of one decision, in its zone (`_zone_change`)."""
    with _zone_change(_zone_of(decision_id)):
        yield


def request_hash(payload: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(payload)).hexdigest()


def summary(decision: Decision) -> dict[str, Any]:
    """What a queue event says about a decision (never the whole report)."""
    return {
        "id": decision.pk,
        "zone": decision.zone,
        "state": decision.state,
        "gate": decision.gate,
        "mode": decision.mode,
        "sufficiency": decision.sufficiency,
        "question": decision.question[:300],
        "due_at": decision.due_at.isoformat() if decision.due_at else None,
        "escalated_to": decision.escalated_to or None,
        "claimed_by": decision.claimed_by.get_username() if decision.claimed_by else None,
        "claimed_until": decision.claimed_until.isoformat() if decision.claimed_until else None,
    }


def _push(decision: Decision, kind: str) -> None:
    outbox_send_after_commit(
        Outbox.objects.create(
            kind=Outbox.Kind.PUSH,
            decision=decision,
            payload={"type": kind, "zone": decision.zone, "decision": summary(decision)},
        )
    )


def _log_after_commit(message: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """Log once the change commits (in order with its side effects), never for a rollback."""
    transaction.on_commit(lambda: log.log(level, message, extra=fields))


def _transition(decision: Decision, name: str) -> None:
    try:
        getattr(decision, name)()
    except TransitionNotAllowed:
        raise Conflict(
            f"decision {decision.pk} is {decision.state}; it cannot be {name}d now"
        ) from None


def _save(decision: Decision) -> None:
    try:
        decision.save()
    except ConcurrentTransition:
        raise Conflict(f"decision {decision.pk} was changed by someone else first") from None


# --- submission ----------------------------------------------------------------------------


def _advisory_lock(key: str) -> bool:
    """Serialise requests that share an idempotency key (PostgreSQL); SQLite serialises all
    writers anyway."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))", [key])
        return bool(cursor.fetchone()[0])


def _replay(existing: Decision, digest: str) -> Submitted:
    """The same key again: the first decision if the body is the same, 422 if it is not."""
    if existing.request_hash != digest:
        raise Unprocessable(
            "this Idempotency-Key was used with a different request body",
            code="idempotency_mismatch",
            field="Idempotency-Key",
        )
    log.info("decision submission replayed", extra={"decision_id": existing.pk})
    return Submitted(existing, replayed=True)


def decision_submit(
    *, token: ApiToken, payload: Mapping[str, Any], idempotency_key: str = ""
) -> Submitted:
    """Create a proposed decision and its immutable bundle; validation runs after commit.

    `payload` holds its `claims` with their citations, or a plain answer's `sources`: then
    the claims and citations are found in the answer (`evidence.passages.answer_claims`),
    before the transaction (it reads the sources and aligns, holding no lock). The request
    hash is of the payload as submitted, so the same body replays even after a source's
    document gained a version.
    """
    agent = token.agent_coordinate
    if agent is None:
        raise Forbidden("only agent tokens submit decisions")
    zone = Coordinate.parse(payload["zone"])
    if Coordinate.parse(payload["agent"]) != agent:
        raise Forbidden(f"this token belongs to agent {agent}; it may submit only as itself")
    if zone != agent.zone():
        raise Forbidden(f"agent {agent} may submit only in its zone {agent.zone()}")
    if "claims" in payload:
        claims = list(payload["claims"])
    else:
        claims = answer_claims(
            zone=zone, answer=payload["answer"], sources=payload["sources"], max_claims=MAX_CLAIMS
        )
    digest = request_hash(payload)
    user = token.user
    key = f"{user.pk}:{idempotency_key}" if idempotency_key else ""
    with _zone_change(str(zone), idempotency=key):
        if idempotency_key:
            same_key = Decision.objects.filter(proposed_by=user, idempotency_key=idempotency_key)
            if same_key.exists():  # rare: a cheap look first, the whole decision only then
                return _replay(same_key.get(), digest)
        bundle = bundle_create(zone=zone, claims=claims)
        try:
            # On PostgreSQL the key's advisory lock makes a duplicate insert impossible, so the
            # savepoint (two round trips) is only needed on SQLite.
            with transaction.atomic(savepoint=connection.vendor != "postgresql"):
                decision = Decision.objects.create(
                    question=payload["question"],
                    answer=payload["answer"],
                    zone=str(zone),
                    agent=str(agent),
                    proposed_by=user,
                    bundle=bundle,
                    idempotency_key=idempotency_key,
                    request_hash=digest,
                )
        except IntegrityError:
            # The same key committed between our look-up and insert (SQLite has no advisory
            # lock): answer as a replay of that one.
            existing = Decision.objects.get(proposed_by=user, idempotency_key=idempotency_key)
            return _replay(existing, digest)
        proposed = events.decision_proposed(decision, actor=user)
        decision_id, bundle_hash = decision.pk, bundle.content_hash
        _log_after_commit(
            "decision submitted", decision_id=decision_id, zone=decision.zone, agent=decision.agent
        )
        transaction.on_commit(lambda: _schedule_validation(decision_id, bundle_hash))
    return Submitted(decision, replayed=False, proposed=proposed)


def _skip_validations(decision_ids: list[int]) -> None:
    validations_taken.send(sender=Decision, decision_ids=decision_ids)


def _schedule_validation(decision_id: int, bundle_hash: str) -> None:
    validation_wanted.send(sender=Decision, decision_id=decision_id, bundle_hash=bundle_hash)


# --- validation and routing ----------------------------------------------------------------


def decision_validate(*, decision_id: int, bundle_hash: str, others: int = 0) -> Decision:
    """Validate, grade and route a proposed decision. Idempotent: a retry after success, or
    a second delivery of the task, finds it no longer proposed and changes nothing.

    `others`: how many more proposed decisions of the zone to take along, oldest first, of
    those no other run holds (PostgreSQL: SKIP LOCKED). Under load a zone's decisions wait
    in the queue side by side, and one transaction for several costs much less than one each:
    one read of their policy and cited paragraphs, one insert of their reports, one append
    per trail lane. After commit the workers are asked to drop their own tasks
    (`tasks.validations_skip`); one that runs anyway finds its decision validated. When
    another run holds this decision, this run validates the others it took, then waits for
    that run to end and validates this one alone if that run left it proposed (it failed).

    The bundles are evaluated inside the transaction, holding only the batch's decision rows
    on PostgreSQL (the lanes' locks come at its end); on SQLite, one writer at a time anyway,
    under the write lock.
    """
    decision = Decision.objects.select_related("bundle").get(pk=decision_id)
    if decision.state != State.PROPOSED or decision.bundle.content_hash != bundle_hash:
        log.info("decision already validated", extra={"decision_id": decision_id})
        return decision
    policy = effective_policy(Coordinate.parse(decision.zone))
    judged = None
    config = judge_config()
    if config is not None:
        # The judge is asked over the network before the transaction, so no row waits on
        # it; its decision is then validated alone (the others have no verdict of it).
        judged = judge_bundle(decision.bundle, config)
        others = 0
    validated = _validate_together(decision, policy, others=others, wait=False, judged=judged)
    if validated is None:
        validated = _validate_together(decision, policy, others=0, wait=True, judged=judged)
    assert validated is not None  # noqa: S101 - a run that waits always gets the row
    return validated


def _validate_together(
    decision: Decision,
    policy: EffectivePolicy,
    *,
    others: int,
    wait: bool,
    judged: Mapping[int, JudgeVerdict] | None = None,
) -> Decision | None:
    """One transaction: lock `decision` (waiting for it, or None at once when another run
    holds it and not `wait`) and up to `others` more proposed decisions of its zone that
    nobody holds; evaluate and record every one still proposed. The decision as stored."""
    with _zone_change(decision.zone):
        rows = Decision.objects.select_for_update(skip_locked=not wait, of=("self",))
        own = rows.filter(pk=decision.pk).first()
        batch = [own] if own is not None and own.state == State.PROPOSED else []
        if others:
            batch += (
                rows.select_related("bundle")
                .filter(zone=decision.zone, state=State.PROPOSED)
                .exclude(pk=decision.pk)
                .order_by("pk")[:others]
            )
        if own is not None:
            own.bundle = decision.bundle  # immutable: the one read before, not read again
        if not batch:
            if own is not None:  # another run won; its report stands
                log.info("decision already validated", extra={"decision_id": decision.pk})
            return own
        _record_validations(_evaluate(batch, own, policy, judged), policy)
    return own


def _evaluate(
    batch: list[Decision],
    own: Decision | None,
    policy: EffectivePolicy,
    judged: Mapping[int, JudgeVerdict] | None = None,
) -> list[tuple[Decision, ValidationReport]]:
    """Each decision with its report. A bundle whose evaluation raises is left out, still
    proposed, for its own task to retry, unless it is `own`'s: then the run fails."""
    cited = read_cited([d.bundle for d in batch])
    evaluated = []
    for decision in batch:
        try:
            verdicts = judged if decision is own else None
            evaluated.append((decision, evaluate_bundle(decision.bundle, policy, cited, verdicts)))
        except Exception:
            if decision is own:
                raise
            log.exception("validation left to its own task", extra={"decision_id": decision.pk})
    return evaluated


def _record_validations(
    judged: list[tuple[Decision, ValidationReport]], policy: EffectivePolicy
) -> None:
    """Store the reports, grade and route each decision, in the caller's transaction."""
    ValidationReport.objects.bulk_create([report for _, report in judged])
    # Their own tasks would find them validated: the workers drop them unrun.
    transaction.on_commit(partial(_skip_validations, [d.pk for d, _ in judged]))
    tokens = _webhook_tokens({d.proposed_by_id for d, _ in judged})
    for decision, report in judged:
        seconds = (report.created_at - decision.created_at).total_seconds()
        transaction.on_commit(partial(VALIDATION_SECONDS.observe, seconds))
        decision.report = report
        decision.gate = report.gate
        decision.mode = report.mode
        decision.sufficiency = report.sufficiency
        decision.completeness = report.completeness
        decision.cohesion = report.cohesion
        decision.policy_label = report.policy_label
        decision.attempts += 1
        _transition(decision, "validate")
        events.decision_validated(decision, report)
        _log_after_commit("decision validated", decision_id=decision.pk, gate=report.gate)
        _route(
            decision, report, policy.values.review_sla_hours, tokens.get(decision.proposed_by_id)
        )
        # One UPDATE each: Django's bulk_update builds a CASE per field and row, which cost
        # more CPU than the statements it saves (py-spy, bench/bench_pipeline.py).
        decision.save(update_fields=VALIDATED_FIELDS)


# What validating and routing a decision may change.
VALIDATED_FIELDS = [
    "report", "gate", "mode", "sufficiency", "completeness", "cohesion", "policy_label",
    "attempts", "state", "due_at", "refusal", "outcome_reason", "claimed_by", "claimed_until",
    "updated_at",
]  # fmt: skip


def _webhook_tokens(user_ids: set[int]) -> dict[int, ApiToken]:
    """Each proposer's newest live token that has a webhook: where a released answer goes."""
    tokens = ApiToken.objects.filter(user_id__in=user_ids, revoked_at__isnull=True).exclude(
        webhook_url=""
    )
    return {token.user_id: token for token in tokens.order_by("created_at", "pk")}


def _webhook_token(user_id: int) -> ApiToken | None:
    return _webhook_tokens({user_id}).get(user_id)


def _refusal(report: ValidationReport) -> dict[str, Any]:
    """What was found and why it was not enough, and what to try (docs/math.md §7)."""
    found = [
        {
            "claim": claim["text"],
            "supported": claim["supported"],
            "reasons": claim["reasons"][:3],
            "best_evidence": max(
                (e for e in claim["evidence"] if e["kept"]),
                key=lambda e: e["confidence"],
                default=None,
            ),
        }
        for claim in report.body["claims"]
    ]
    return {
        "found": found,
        "sufficiency": report.sufficiency,
        "refusal_floor": report.policy["refusal_floor"],
        "tau": report.policy["tau"],
        "try": [
            "cite the paragraph that states each fact, with its exact numbers",
            "split the answer so that each claim cites its own evidence",
            "ask a narrower question, or add the missing document to the zone",
        ],
    }


def _route(
    decision: Decision, report: ValidationReport, sla_hours: float, webhook: ApiToken | None
) -> None:
    if report.gate in (Gate.AUTO, Gate.FLAGGED):
        if report.gate == Gate.FLAGGED:
            PeriodicReview.objects.create(
                decision=decision,
                zone=decision.zone,
                reason="sufficiency passed but some evidence is weak (below 3x the floor)",
            )
        _transition(decision, "approve")
        events.decision_approved(decision, actor=None, reason=f"gate {report.gate}")
        _log_after_commit("decision routed", decision_id=decision.pk, to="approved")
        _deliver(decision, webhook, release="auto")
    elif report.gate == Gate.REQUIRED:
        decision.due_at = timezone.now() + timedelta(hours=sla_hours)
        _transition(decision, "require_approval")
        events.decision_queued(decision)
        _push(decision, "decision.added")
        _log_after_commit("decision routed", decision_id=decision.pk, to="reviewer queue")
    else:
        decision.refusal = _refusal(report)
        decision.outcome_reason = "blocked: the evidence does not support the answer"
        _transition(decision, "fail")
        events.decision_failed(decision, actor=None, reason=decision.outcome_reason)
        outbox_webhook(decision, webhook, failed_message(decision))
        _log_after_commit("decision routed", decision_id=decision.pk, to="blocked")


def _deliver(
    decision: Decision, token: ApiToken | None, *, release: Release, reason: str = ""
) -> None:
    """approved -> executed: release the answer to `token`'s webhook (`_webhook_tokens`) as
    `decision.completed`, whose 2xx completes it. Without one the agent polls, so the release
    is the delivery: executed -> completed at once. The caller saves the decision."""
    _transition(decision, "execute")
    events.decision_executed(decision)
    if token is None:
        _transition(decision, "complete")
        events.decision_completed(decision, how="released for polling")
        _log_after_commit("answer released", decision_id=decision.pk, delivery="polling")
        return
    _log_after_commit("answer released", decision_id=decision.pk, delivery="webhook")
    outbox_webhook(decision, token, completed_message(decision, release=release, reason=reason))


def decision_confirm_delivery(*, decision_id: int, how: str) -> Decision:
    with _changing(decision_id):
        decision = Decision.objects.select_for_update().get(pk=decision_id)
        if decision.state != State.EXECUTED:
            return decision
        _transition(decision, "complete")
        _save(decision)
        events.decision_completed(decision, how=how)
        _log_after_commit("delivery confirmed", decision_id=decision_id, delivery=how)
    return decision


def _system_fail(
    *, decision_id: int, expected: State, reason: str, message: str, notify: bool = False
) -> Decision:
    """The system gives up on a decision still in `expected`: failed, with the reason (told to
    the agent's webhook if `notify`)."""
    with _changing(decision_id):
        decision = Decision.objects.select_for_update().get(pk=decision_id)
        if decision.state != expected:
            return decision
        decision.outcome_reason = reason
        _transition(decision, "fail")
        _save(decision)
        events.decision_failed(decision, actor=None, reason=reason)
        if notify:
            outbox_webhook(
                decision, _webhook_token(decision.proposed_by_id), failed_message(decision)
            )
        _log_after_commit(message, level=logging.WARNING, decision_id=decision_id, reason=reason)
    return decision


def decision_delivery_failed(*, decision_id: int, reason: str) -> Decision:
    """Webhook retries ran out: the released answer never reached its agent."""
    return _system_fail(
        decision_id=decision_id, expected=State.EXECUTED, reason=reason, message="delivery failed"
    )


def decision_validation_failed(*, decision_id: int, reason: str) -> Decision:
    """Retries ran out: the decision fails with the reason, never silently stays proposed."""
    return _system_fail(
        decision_id=decision_id,
        expected=State.PROPOSED,
        reason=reason,
        message="decision failed in validation",
        notify=True,
    )


# --- reviewers -----------------------------------------------------------------------------


def _locked_for(decision_id: int, user: User, roles: tuple[str, ...] = REVIEW_ROLES) -> Decision:
    try:
        decision = Decision.objects.select_for_update().get(pk=decision_id)
    except Decision.DoesNotExist:
        raise NotFound(f"no decision {decision_id}") from None
    if not has_role(user, roles, Coordinate.parse(decision.zone)):
        # The same answer as for a missing decision: other zones' ids stay private.
        raise NotFound(f"no decision {decision_id}")
    return decision


def _held_by_other(decision: Decision, user: User) -> bool:
    return decision.held() and decision.claimed_by_id != user.pk


# The one limit of a reviewer's reason (approve, reject, override), for the API and the
# pages alike: the pages' inputs carry it as maxlength, and every path ends here.
REASON_LIMIT = 2000


def _limited_reason(reason: str) -> str:
    if not isinstance(reason, str):
        raise ApplicationError("reason must be a string", field="reason")
    reason = reason.strip()
    if len(reason) > REASON_LIMIT:
        raise ApplicationError(
            f"a reason has at most {REASON_LIMIT} characters; this one has {len(reason)}",
            field="reason",
        )
    return reason


def _require_reason(reason: str) -> str:
    reason = _limited_reason(reason)
    if not reason:
        raise ApplicationError("a reason is required", field="reason")
    return reason


def decision_claim(*, decision_id: int, user: User) -> Decision:
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(f"decision {decision_id} is {decision.state}; nothing to claim")
        if _held_by_other(decision, user):
            raise Conflict(f"decision {decision_id} is claimed by {decision.claimed_by}")
        if decision.proposed_by_id == user.pk:
            raise Forbidden("nobody reviews a decision they proposed")
        decision.claimed_by = user
        decision.claimed_until = timezone.now() + timedelta(minutes=CLAIM_MINUTES)
        decision.save(update_fields=["claimed_by", "claimed_until", "updated_at"])
        events.decision_claimed(decision, actor=user)
        _push(decision, "decision.claimed")
        _log_after_commit("decision claimed", decision_id=decision_id, user=user.get_username())
    return decision


def decision_release(*, decision_id: int, user: User) -> Decision:
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED or decision.claimed_by_id is None:
            raise Conflict(f"decision {decision_id} is not claimed")
        if decision.claimed_by_id != user.pk and not has_role(
            user, [Role.ZONE_ADMIN], Coordinate.parse(decision.zone)
        ):
            raise Forbidden(f"decision {decision_id} is claimed by {decision.claimed_by}")
        decision.claimed_by = None
        decision.claimed_until = None
        decision.save(update_fields=["claimed_by", "claimed_until", "updated_at"])
        events.decision_released(decision, actor=user)
        _push(decision, "decision.released")
        _log_after_commit("claim released", decision_id=decision_id, user=user.get_username())
    return decision


def decision_approve(*, decision_id: int, user: User, reason: str = "") -> Decision:
    reason = _limited_reason(reason)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(f"decision {decision_id} is {decision.state}; it cannot be approved")
        if decision.proposed_by_id == user.pk:
            raise Forbidden("nobody approves a decision they proposed")
        if _held_by_other(decision, user):
            raise Conflict(f"decision {decision_id} is claimed by {decision.claimed_by}")
        if Approval.objects.filter(decision=decision, reviewer=user).exists():
            raise Conflict("you have approved this decision already; another reviewer must")
        Approval.objects.create(decision=decision, reviewer=user, reason=reason)
        needed = effective_policy(Coordinate.parse(decision.zone)).values.approvals_required
        given = Approval.objects.filter(decision=decision).count()
        if given < needed:
            decision.claimed_by = None
            decision.claimed_until = None
            decision.save(update_fields=["claimed_by", "claimed_until", "updated_at"])
            events.decision_approval_recorded(
                decision, actor=user, given=given, needed=needed, reason=reason
            )
            _push(decision, "decision.released")
            _log_after_commit(
                "approval recorded", decision_id=decision_id, given=given, needed=needed
            )
            return decision
        _transition(decision, "approve")
        events.decision_approved(decision, actor=user, reason=reason)
        _push(decision, "decision.resolved")
        _log_after_commit("decision approved", decision_id=decision_id, user=user.get_username())
        _deliver(
            decision, _webhook_token(decision.proposed_by_id), release="approved", reason=reason
        )
        _save(decision)
    return decision


def decision_reject(*, decision_id: int, user: User, reason: str) -> Decision:
    reason = _require_reason(reason)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(f"decision {decision_id} is {decision.state}; it cannot be rejected")
        if _held_by_other(decision, user):
            raise Conflict(f"decision {decision_id} is claimed by {decision.claimed_by}")
        decision.outcome_reason = reason
        _transition(decision, "fail")
        _save(decision)
        events.decision_failed(decision, actor=user, reason=reason)
        _push(decision, "decision.resolved")
        outbox_webhook(
            decision,
            _webhook_token(decision.proposed_by_id),
            rejected_message(decision, reviewer=user.get_username()),
        )
        _log_after_commit("decision rejected", decision_id=decision_id, user=user.get_username())
    return decision


def decision_override(*, decision_id: int, user: User, reason: str) -> Decision:
    """Release a blocked answer anyway: an elevated permission and a reason, on the trail."""
    reason = _require_reason(reason)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user, roles=(Role.ZONE_ADMIN,))
        if not user.has_perm("decisions.override_blocked"):
            raise Forbidden("overriding a blocked decision needs the override_blocked permission")
        if decision.state != State.FAILED or decision.gate != Gate.BLOCKED:
            raise Conflict(f"only a blocked decision can be overridden; {decision_id} is not")
        if decision.proposed_by_id == user.pk:
            raise Forbidden("nobody overrides a decision they proposed")
        decision.outcome_reason = reason
        _transition(decision, "override")
        events.decision_overridden(decision, actor=user, reason=reason)
        _log_after_commit(
            "blocked decision overridden",
            level=logging.WARNING,
            decision_id=decision_id,
            user=user.get_username(),
        )
        _deliver(
            decision, _webhook_token(decision.proposed_by_id), release="overridden", reason=reason
        )
        _save(decision)
    return decision


def decisions_escalate_overdue() -> int:
    """Decisions past their review SLA go up to the parent level's authority, once a level."""
    now = timezone.now()
    moved = 0
    overdue = Decision.objects.filter(state=State.APPROVAL_REQUIRED, due_at__lt=now)
    for decision_id, zone in list(overdue.values_list("pk", "zone")):
        with _zone_change(zone):
            decision = Decision.objects.select_for_update().get(pk=decision_id)
            if (
                decision.state != State.APPROVAL_REQUIRED
                or not decision.due_at
                or decision.due_at >= now
            ):
                continue
            current = Coordinate.parse(decision.escalated_to or decision.zone)
            parent = current.parent
            if parent is None:
                continue  # the galaxy is the top: it stays overdue there
            sla = effective_policy(Coordinate.parse(decision.zone)).values.review_sla_hours
            decision.escalated_to = str(parent)
            decision.due_at = now + timedelta(hours=sla)
            decision.save(update_fields=["escalated_to", "due_at", "updated_at"])
            events.decision_escalated(decision, to=str(parent))
            _push(decision, "decision.escalated")
            outbox_webhook(
                decision, _webhook_token(decision.proposed_by_id), escalated_message(decision)
            )
            moved += 1
            _log_after_commit("decision escalated", decision_id=decision_id, to=str(parent))
    return moved
