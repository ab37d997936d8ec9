"""The functions that move a decision through its states, each in one transaction.

Every change locks the decision row (`select_for_update`), checks who may act, makes the
transition, writes its trail event and queues its side effects in the outbox; the outbox is
sent only after commit. A transition from the wrong state, or one that lost a race, is 409.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, Exists, OuterRef, Q, When
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django_fsm import ConcurrentTransition, TransitionNotAllowed

from coordinates.coordinate import Coordinate
from coordinates.models import ApiToken, Role
from coordinates.selectors import EffectivePolicy, effective_policy, has_role
from decisions import events
from decisions.delivery import replacement_of
from decisions.models import (
    Approval,
    ClaimVerdict,
    Comment,
    Decision,
    Gate,
    Outbox,
    PeriodicReview,
    State,
)
from decisions.outbox import (
    outbox_push_after_commit,
    outbox_send_after_commit,
    outbox_webhook,
    webhook_token,
    webhook_tokens,
)
from decisions.signals import graph_gate_wanted, validation_wanted, validations_taken
from decisions.webhooks import (
    Release,
    completed_message,
    corrected_message,
    escalated_message,
    failed_message,
    rejected_message,
)
from evidence.judge import JudgeVerdict
from evidence.knowledge import conflicts_from_validation
from evidence.models import ValidationReport
from evidence.passages import answer_claims, citations_pinned
from evidence.services import bundle_create
from evidence.validation import (
    GATE_ORDER,
    evaluate_bundle,
    judge_bundle,
    plugged_judge,
    read_cited,
)
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
            raise Conflict(gettext("a request with this Idempotency-Key is still being processed"))
        with ledger.holding(ledger.chain_for(zone)):
            yield


def _zone_of(decision_id: int) -> str:
    """A decision's zone never changes, so it is read before the transaction begins."""
    zone = Decision.objects.filter(pk=decision_id).values_list("zone", flat=True).first()
    if zone is None:
        raise NotFound(gettext("no decision %(id)s") % {"id": decision_id})
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


def _push(decision: Decision, kind: str, *, into: list[Outbox] | None = None) -> None:
    """Tell the zone's reviewer screens after commit. `into`: a batch's list, written and
    sent with the others' (`outbox.outbox_push_after_commit`) instead of one by one."""
    row = Outbox(
        kind=Outbox.Kind.PUSH,
        decision=decision,
        payload={"type": kind, "zone": decision.zone, "decision": summary(decision)},
    )
    if into is not None:
        into.append(row)
        return
    row.save(force_insert=True)
    outbox_send_after_commit(row)


def _log_after_commit(message: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """Log once the change commits (in order with its side effects), never for a rollback."""
    transaction.on_commit(lambda: log.log(level, message, extra=fields))


def _transition(decision: Decision, name: str) -> None:
    try:
        getattr(decision, name)()
    except TransitionNotAllowed:
        raise Conflict(
            # The transition's past participle, as the state machine names it (an identifier).
            gettext("decision %(id)s is %(state)s; it cannot be %(done)s now")
            % {"id": decision.pk, "state": decision.state, "done": f"{name}d"}
        ) from None


def _save(decision: Decision) -> None:
    try:
        decision.save()
    except ConcurrentTransition:
        raise Conflict(
            gettext("decision %(id)s was changed by someone else first") % {"id": decision.pk}
        ) from None


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
    return replayed(existing, same=existing.request_hash == digest)


def replayed(existing: Decision, *, same: bool) -> Submitted:
    """A request that reuses an Idempotency-Key: the decision the key made if the request is
    the same, 422 naming the header if it is not."""
    if not same:
        raise Unprocessable(
            gettext("this Idempotency-Key was used with a different request body"),
            code="idempotency_mismatch",
            field="Idempotency-Key",
        )
    log.info("decision submission replayed", extra={"decision_id": existing.pk})
    return Submitted(existing, replayed=True)


def submitted_under(*, token: ApiToken, idempotency_key: str) -> Decision | None:
    """The decision this token's person submitted under `idempotency_key`, if any."""
    if not idempotency_key:
        return None
    return Decision.objects.filter(proposed_by=token.user, idempotency_key=idempotency_key).first()


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
        raise Forbidden(gettext("only agent tokens submit decisions"))
    zone = Coordinate.parse(payload["zone"])
    if Coordinate.parse(payload["agent"]) != agent:
        raise Forbidden(
            gettext("this token belongs to agent %(agent)s; it may submit only as itself")
            % {"agent": agent}
        )
    if zone != agent.zone():
        raise Forbidden(
            gettext("agent %(agent)s may submit only in its zone %(zone)s")
            % {"agent": agent, "zone": agent.zone()}
        )
    if "claims" in payload:
        claims = list(payload["claims"])
    else:
        claims = answer_claims(
            zone=zone, answer=payload["answer"], sources=payload["sources"], max_claims=MAX_CLAIMS
        )
    # The bundle seals what was cited (seed 000 §2.2): the version current now where the
    # agent named none, and when each source was retrieved (now, where the agent said not).
    claims = citations_pinned(zone=zone, claims=claims, submitted_at=timezone.now())
    graph_keys = list(dict.fromkeys(payload.get("graph_evidence") or ()))
    if graph_keys:
        # Refused now, naming the key, if the zone's graph lacks it (another zone's node too).
        graph_gate(zone=str(zone), keys=graph_keys, strict=True)
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
                    graph_evidence=graph_keys or None,
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


def graph_gate(*, zone: str, keys: Sequence[str], strict: bool) -> dict[str, Any] | None:
    """The graph gate on the nodes an answer names, as the graph app answers it (None: no
    graph app listens)."""
    for _, answer in graph_gate_wanted.send(sender=Decision, zone=zone, keys=keys, strict=strict):
        if isinstance(answer, Mapping):
            return dict(answer)
    return None


# The least gate each graph outcome asks of an agent's answer (seed 002 §9.1): never looser
# than the answer gate; an escalated one also goes to the authority above (§9.3).
GRAPH_GATE_AT_LEAST = {"direct": Gate.AUTO, "qualified": Gate.FLAGGED, "escalate": Gate.REQUIRED}


def _graph_gated(decision: Decision, report: ValidationReport) -> ValidationReport:
    """The report with the graph gate on the answer's graph evidence applied: its outcome in
    `graph_gate`, and the gate made at least as strict as the outcome asks."""
    if not decision.graph_evidence:
        return report
    judged = graph_gate(zone=decision.zone, keys=decision.graph_evidence, strict=False)
    if judged is None:
        return report
    least = GRAPH_GATE_AT_LEAST[judged["gate"]]
    if GATE_ORDER.index(least) > GATE_ORDER.index(report.gate):
        report.gate = least
    body = {**report.body, "graph_gate": judged}
    report.body = body
    report.content_hash = hashlib.sha256(canonical_json(body)).hexdigest()
    return report


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
    judge = plugged_judge()
    if judge is not None:
        # The judge (a network call, or a model) is asked before the transaction, so no row
        # waits on it; its decision is then validated alone (the others have no verdict).
        judged = judge_bundle(decision.bundle, judge)
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
        if others:
            # One statement locks it and the others: it first, whatever its state, then the
            # oldest proposed ones of its zone that nobody holds.
            taken = list(
                rows.select_related("bundle")
                .filter(Q(pk=decision.pk) | Q(zone=decision.zone, state=State.PROPOSED))
                .order_by(Case(When(pk=decision.pk, then=0), default=1), "pk")[: others + 1]
            )
        else:
            taken = list(rows.filter(pk=decision.pk))
        own = taken[0] if taken and taken[0].pk == decision.pk else None
        if own is None:
            taken = taken[:others]  # another run holds it: just the others
        batch = [d for d in taken if d.state == State.PROPOSED]
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
            report = evaluate_bundle(
                decision.bundle,
                policy,
                cited,
                verdicts,
                question=decision.question,
                answer=decision.answer,
            )
            evaluated.append((decision, _graph_gated(decision, report)))
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
    for decision, report in judged:
        if report.body.get("contradictions"):
            conflicts_from_validation(report.body["contradictions"], zone=decision.zone)
    # Their own tasks would find them validated: the workers drop them unrun.
    transaction.on_commit(partial(_skip_validations, [d.pk for d, _ in judged]))
    # Only a released or blocked answer tells the agent's webhook; one a person must approve
    # tells it later, so a batch of those reads no tokens (an empty set: no query).
    tokens = webhook_tokens({d.proposed_by_id for d, r in judged if r.gate != Gate.REQUIRED})
    pushes: list[Outbox] = []  # the reviewers' screens hear of each queued answer after commit
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
        graph = report.body.get("graph_gate") or {}
        # Escalated by its graph evidence, unless the answer gate blocks it outright.
        graph_escalated = graph.get("gate") == "escalate" and report.gate == Gate.REQUIRED
        if graph_escalated:
            decision.escalated_to = str(graph["escalated_to"])
        _route(
            decision,
            report,
            policy.values.review_sla_hours,
            tokens.get(decision.proposed_by_id),
            pushes=pushes,
        )
        if graph_escalated:
            _graph_escalated(decision, graph, pushes)
        # One UPDATE each: Django's bulk_update builds a CASE per field and row, which cost
        # more CPU than the statements it saves (py-spy, bench/bench_pipeline.py).
        decision.save(update_fields=VALIDATED_FIELDS)
    outbox_push_after_commit(Outbox.objects.bulk_create(pushes))


# What validating and routing a decision may change.
VALIDATED_FIELDS = [
    "report", "gate", "mode", "sufficiency", "completeness", "cohesion", "policy_label",
    "attempts", "state", "due_at", "refusal", "outcome_reason", "claimed_by", "claimed_until",
    "updated_at", "escalated_to",
]  # fmt: skip


def _graph_escalated(decision: Decision, graph: Mapping[str, Any], pushes: list[Outbox]) -> None:
    """An agent's answer whose graph evidence hangs together too little went up a level: on
    the trail as the graph's escalation, in the authority's queue, and the agent told why."""
    events.decision_escalated_by_graph(
        decision,
        to=decision.escalated_to,
        cohesion=float(graph.get("cohesion") or 0.0),
        cohesion_tau=float(graph.get("cohesion_tau") or 0.0),
    )
    if decision.escalated_to == decision.zone:
        events.decision_escalation_topped(decision, at=decision.escalated_to)
    _push(decision, "decision.escalated", into=pushes)
    message = escalated_message(decision)
    message["data"]["reason"] = GRAPH_ESCALATION_REASON
    message["data"]["gaps"] = list(graph.get("gaps") or [])
    outbox_webhook(decision, webhook_token(decision.proposed_by_id), message)


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
    decision: Decision,
    report: ValidationReport,
    sla_hours: float,
    webhook: ApiToken | None,
    *,
    pushes: list[Outbox] | None = None,
) -> None:
    if report.gate in (Gate.AUTO, Gate.FLAGGED):
        # The rate the report was judged under (a report older than the field: all of them),
        # and a sample drawn from the id alone, so a replay samples the same answers.
        rate = report.policy.get("periodic_review_rate", 1.0)
        if report.gate == Gate.FLAGGED and PeriodicReview.sampled(decision.pk, rate):
            review = PeriodicReview.objects.create(
                decision=decision,
                zone=decision.zone,
                reason="sufficiency passed but some evidence is weak (below 3x the floor)",
            )
            events.periodic_review_opened(review)
        _transition(decision, "approve")
        events.decision_approved(decision, actor=None, reason=f"gate {report.gate}")
        _log_after_commit("decision routed", decision_id=decision.pk, to="approved")
        _deliver(decision, webhook, release="auto")
    elif report.gate == Gate.REQUIRED:
        decision.due_at = timezone.now() + timedelta(hours=sla_hours)
        _transition(decision, "require_approval")
        events.decision_queued(decision)
        _push(decision, "decision.added", into=pushes)
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
    """approved -> executed: release the answer to `token`'s webhook (`outbox.webhook_tokens`) as
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
                decision, webhook_token(decision.proposed_by_id), failed_message(decision)
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
        raise NotFound(gettext("no decision %(id)s") % {"id": decision_id}) from None
    if not has_role(user, roles, Coordinate.parse(decision.zone)):
        # The same answer as for a missing decision: other zones' ids stay private.
        raise NotFound(gettext("no decision %(id)s") % {"id": decision_id})
    return decision


def _held_by_other(decision: Decision, user: User) -> bool:
    return decision.held() and decision.claimed_by_id != user.pk


# The one limit of a reviewer's reason (approve, reject, override), for the API and the
# pages alike: the pages' inputs carry it as maxlength, and every path ends here.
REASON_LIMIT = 2000


def _limited_reason(reason: str) -> str:
    if not isinstance(reason, str):
        raise ApplicationError(gettext("reason must be a string"), field="reason")
    reason = reason.strip()
    if len(reason) > REASON_LIMIT:
        raise ApplicationError(
            gettext("a reason has at most %(limit)s characters; this one has %(length)s")
            % {"limit": REASON_LIMIT, "length": len(reason)},
            field="reason",
        )
    return reason


def _require_reason(reason: str) -> str:
    reason = _limited_reason(reason)
    if not reason:
        raise ApplicationError(gettext("a reason is required"), field="reason")
    return reason


# --- a reviewer's verdict per claim --------------------------------------------------------
# Approve and reject carry, besides the reason, the reviewer's verdict on each claim they
# name: `[{"index": 0, "supported": false, "note": "..."}]`. Stored as ClaimVerdict rows
# beside the engine's verdict then, in the act's transaction; calibration and the reviews
# export learn from them.

VERDICT_FIELDS = ("index", "supported", "note")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One claim's verdict as a reviewer gave it (`index` into the bundle's claims)."""

    index: int
    supported: bool
    note: str = ""

    def as_payload(self) -> dict[str, Any]:
        return {"index": self.index, "supported": self.supported, "note": self.note}


def _verdict_read(entry: object, where: str) -> Verdict:
    if not isinstance(entry, dict):
        raise ApplicationError(
            gettext("each claim verdict is an object {index, supported, note}"), field=where
        )
    unknown = sorted(str(key) for key in entry if key not in VERDICT_FIELDS)
    if unknown:
        raise ApplicationError(
            gettext("unknown field %(field)s; a claim verdict has index, supported and note")
            % {"field": repr(unknown[0])},
            field=f"{where}.{unknown[0]}",
        )
    index = entry.get("index")
    if isinstance(index, float) and index.is_integer():
        index = int(index)  # 1.0 is the integer 1 to JSON
    # bool is an int to Python, never to a client: true is not claim 1.
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise ApplicationError(
            gettext("index is required: a whole number from 0, the claim's place in the bundle"),
            field=f"{where}.index",
        )
    supported = entry.get("supported")
    if not isinstance(supported, bool):
        raise ApplicationError(
            gettext("supported is required: true or false"), field=f"{where}.supported"
        )
    note = entry.get("note", "")
    if note is None:
        note = ""
    if not isinstance(note, str):
        raise ApplicationError(gettext("note must be a string"), field=f"{where}.note")
    # Measured as sent, as the schema's maxLength and the page's maxlength count it.
    if len(note) > REASON_LIMIT:
        raise ApplicationError(
            gettext("a note has at most %(limit)s characters; this one has %(length)s")
            % {"limit": REASON_LIMIT, "length": len(note)},
            field=f"{where}.note",
        )
    return Verdict(index=index, supported=supported, note=note.strip())


def claim_verdicts_read(claims: object) -> list[Verdict]:
    """The verdicts as sent (None: none), each checked for its shape; a claim named twice is
    refused. Whether each index is one of the decision's claims is checked with the decision
    in hand (`_verdicts_checked`), so other zones' claim counts stay private."""
    if claims is None:
        return []
    if not isinstance(claims, list):
        raise ApplicationError(
            gettext("claims must be a list of {index, supported, note}"), field="claims"
        )
    if len(claims) > MAX_CLAIMS:
        raise ApplicationError(
            gettext("%(count)s claim verdicts; a decision has at most %(max)s claims")
            % {"count": len(claims), "max": MAX_CLAIMS},
            field="claims",
        )
    verdicts: list[Verdict] = []
    seen: set[int] = set()
    for position, entry in enumerate(claims):
        verdict = _verdict_read(entry, f"claims.{position}")
        if verdict.index in seen:
            raise ApplicationError(
                gettext("claim %(index)s is named twice") % {"index": verdict.index},
                field=f"claims.{position}.index",
            )
        seen.add(verdict.index)
        verdicts.append(verdict)
    return verdicts


def _verdicts_checked(verdicts: Sequence[Verdict], count: int) -> None:
    for position, verdict in enumerate(verdicts):
        if verdict.index >= count:
            raise ApplicationError(
                ngettext(
                    "claim %(index)s does not exist; this decision has %(count)s claim "
                    "(0 to %(last)s)",
                    "claim %(index)s does not exist; this decision has %(count)s claims "
                    "(0 to %(last)s)",
                    count,
                )
                % {"index": verdict.index, "count": count, "last": count - 1},
                field=f"claims.{position}.index",
            )


def engine_verdict(claim: Mapping[str, Any]) -> tuple[bool, float | None]:
    """The engine's verdict on one claim of a report: whether it held the claim supported,
    and the global verifier's P(supported): the highest `signals.probability` among the
    claim's evidence items (None when no item carries one)."""
    probabilities = [
        float(p)
        for item in claim.get("evidence", [])
        if isinstance(p := (item.get("signals") or {}).get("probability"), int | float)
        and not isinstance(p, bool)
    ]
    return bool(claim.get("supported")), max(probabilities, default=None)


def _verdicts_record(
    decision: Decision, user: User, action: str, verdicts: Sequence[Verdict]
) -> None:
    """Store the verdicts with the engine's beside them, in the caller's transaction. A
    reviewer who approved one of two required approvals and then rejects changes their
    verdicts: each claim keeps the latest (the trail keeps both acts)."""
    if not verdicts:
        return
    body = decision.report.body if decision.report is not None else {}
    report_claims: list[dict[str, Any]] = list(body.get("claims", []))
    earlier = {
        row.claim: row
        for row in ClaimVerdict.objects.filter(
            decision=decision, reviewer=user, claim__in=[v.index for v in verdicts]
        )
    }
    now = timezone.now()
    new = []
    for verdict in verdicts:
        engine_supported, engine_probability = (
            engine_verdict(report_claims[verdict.index])
            if verdict.index < len(report_claims)
            else (False, None)
        )
        row = earlier.get(verdict.index)
        if row is not None:
            row.action, row.supported, row.note, row.created_at = (
                action,
                verdict.supported,
                verdict.note,
                now,
            )
            row.save(update_fields=["action", "supported", "note", "created_at"])
            continue
        new.append(
            ClaimVerdict(
                decision=decision,
                reviewer=user,
                action=action,
                claim=verdict.index,
                supported=verdict.supported,
                note=verdict.note,
                engine_supported=engine_supported,
                engine_probability=engine_probability,
                zone=decision.zone,
            )
        )
    ClaimVerdict.objects.bulk_create(new)


def _claim_count(decision: Decision) -> int:
    """The claims a reviewer judges: the report's (the bundle's, then the answer's own that
    the engine checked itself), or the bundle's before there is a report."""
    body = decision.report.body if decision.report is not None else {}
    return len(body.get("claims") or decision.bundle.claims)


def decision_claim(*, decision_id: int, user: User) -> Decision:
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; nothing to claim")
                % {"id": decision_id, "state": decision.state}
            )
        if _held_by_other(decision, user):
            raise Conflict(
                gettext("decision %(id)s is claimed by %(user)s")
                % {"id": decision_id, "user": decision.claimed_by}
            )
        if decision.proposed_by_id == user.pk:
            raise Forbidden(gettext("nobody reviews a decision they proposed"))
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
            raise Conflict(gettext("decision %(id)s is not claimed") % {"id": decision_id})
        if decision.claimed_by_id != user.pk and not has_role(
            user, [Role.ZONE_ADMIN], Coordinate.parse(decision.zone)
        ):
            raise Forbidden(
                gettext("decision %(id)s is claimed by %(user)s")
                % {"id": decision_id, "user": decision.claimed_by}
            )
        decision.claimed_by = None
        decision.claimed_until = None
        decision.save(update_fields=["claimed_by", "claimed_until", "updated_at"])
        events.decision_released(decision, actor=user)
        _push(decision, "decision.released")
        _log_after_commit("claim released", decision_id=decision_id, user=user.get_username())
    return decision


def decision_approve(
    *,
    decision_id: int,
    user: User,
    reason: str = "",
    claims: Sequence[Mapping[str, Any]] | None = None,
    replacement: str | None = None,
) -> Decision:
    """One reviewer's approval, with their verdict on the claims they name (`claims`:
    [{index, supported, note}], all optional); enough approvals release the answer.

    `replacement` is an answer the reviewer writes in place of the agent's (seed 002 §9.3:
    the authority an answer went to may replace it): on the trail as
    `decision.answer_replaced`, and delivered instead (decisions.delivery; the latest
    approver's replacement wins). A refusal (mode "refusal") has no answer to release: each
    approval of one needs a replacement, written now or by an earlier approver."""
    reason = _limited_reason(reason)
    verdicts = claim_verdicts_read(claims)
    replacement = _replacement_read(replacement)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; it cannot be approved")
                % {"id": decision_id, "state": decision.state}
            )
        if decision.proposed_by_id == user.pk:
            raise Forbidden(gettext("nobody approves a decision they proposed"))
        if _held_by_other(decision, user):
            raise Conflict(
                gettext("decision %(id)s is claimed by %(user)s")
                % {"id": decision_id, "user": decision.claimed_by}
            )
        if Approval.objects.filter(decision=decision, reviewer=user).exists():
            raise Conflict(
                gettext("you have approved this decision already; another reviewer must")
            )
        count = _claim_count(decision)
        _verdicts_checked(verdicts, count)
        if decision.mode == "refusal" and replacement is None and replacement_of(decision) is None:
            vouched = {v.index for v in verdicts if v.supported}
            if not count or vouched != set(range(count)):
                raise ApplicationError(
                    gettext(
                        "this answer is a refusal: the evidence is too weak to release it; "
                        "write the answer to deliver instead (replacement), or mark every "
                        "claim supported to take the agent's answer over as it stands"
                    ),
                    field="replacement",
                )
            # The approver vouches for every claim: the agent's text becomes their answer.
            replacement = decision.answer
        Approval.objects.create(
            decision=decision, reviewer=user, reason=reason, replacement=replacement
        )
        if replacement is not None:
            events.decision_answer_replaced(
                decision, actor=user, replacement=replacement, reason=reason
            )
        _verdicts_record(decision, user, ClaimVerdict.Action.APPROVE, verdicts)
        named = [v.as_payload() for v in verdicts]
        needed = effective_policy(Coordinate.parse(decision.zone)).values.approvals_required
        given = Approval.objects.filter(decision=decision).count()
        if given < needed:
            decision.claimed_by = None
            decision.claimed_until = None
            decision.save(update_fields=["claimed_by", "claimed_until", "updated_at"])
            events.decision_approval_recorded(
                decision, actor=user, given=given, needed=needed, reason=reason, claims=named
            )
            _push(decision, "decision.released")
            _log_after_commit(
                "approval recorded", decision_id=decision_id, given=given, needed=needed
            )
            return decision
        _transition(decision, "approve")
        events.decision_approved(decision, actor=user, reason=reason, claims=named)
        _push(decision, "decision.resolved")
        _log_after_commit("decision approved", decision_id=decision_id, user=user.get_username())
        _deliver(
            decision, webhook_token(decision.proposed_by_id), release="approved", reason=reason
        )
        _save(decision)
    return decision


MAX_REPLACEMENT = 20_000  # characters: an answer, not a document


def _replacement_read(replacement: object) -> str | None:
    """A replacement answer as given: None when absent or blank, else its text (422 naming
    `replacement` for anything but a string, or one too long)."""
    if replacement is None:
        return None
    if not isinstance(replacement, str):
        raise ApplicationError(gettext("replacement must be text"), field="replacement")
    text = replacement.strip()
    if len(text) > MAX_REPLACEMENT:
        raise ApplicationError(
            gettext("replacement is longer than %(n)s characters") % {"n": MAX_REPLACEMENT},
            field="replacement",
        )
    return text or None


def decision_reject(
    *,
    decision_id: int,
    user: User,
    reason: str,
    claims: Sequence[Mapping[str, Any]] | None = None,
) -> Decision:
    """Reject with a reason and the reviewer's verdict per claim (`claims`, as for approve):
    at least one claim named unsupported, so the rejection says which claim is wrong."""
    reason = _require_reason(reason)
    verdicts = claim_verdicts_read(claims)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; it cannot be rejected")
                % {"id": decision_id, "state": decision.state}
            )
        if _held_by_other(decision, user):
            raise Conflict(
                gettext("decision %(id)s is claimed by %(user)s")
                % {"id": decision_id, "user": decision.claimed_by}
            )
        count = _claim_count(decision)
        _verdicts_checked(verdicts, count)
        if count and all(v.supported for v in verdicts):
            raise ApplicationError(
                gettext(
                    "mark at least one claim unsupported (supported: false): a rejection "
                    "names the claim that is wrong"
                ),
                field="claims",
            )
        _verdicts_record(decision, user, ClaimVerdict.Action.REJECT, verdicts)
        decision.outcome_reason = reason
        _transition(decision, "fail")
        _save(decision)
        events.decision_failed(
            decision, actor=user, reason=reason, claims=[v.as_payload() for v in verdicts]
        )
        _push(decision, "decision.resolved")
        outbox_webhook(
            decision,
            webhook_token(decision.proposed_by_id),
            rejected_message(decision, reviewer=user.get_username()),
        )
        _log_after_commit("decision rejected", decision_id=decision_id, user=user.get_username())
    return decision


# Two different people with override_blocked release a blocked answer: the first asks (an
# Approval row on the decision, on the trail as decision.override_requested), the second
# completes it. Approval rows of a blocked decision are override approvals only: a blocked
# decision never enters the review queue, so no reviewer's approval can be among them.
OVERRIDE_APPROVALS = 2


@dataclass(frozen=True, slots=True)
class OverrideApproval:
    reviewer: str
    reason: str
    at: datetime


def override_approvals(decision: Decision) -> list[OverrideApproval]:
    """Who asked to release a blocked decision so far, in order (none for any other)."""
    if decision.gate != Gate.BLOCKED:
        return []
    rows = decision.approvals.select_related("reviewer").order_by("pk")
    return [OverrideApproval(a.reviewer.get_username(), a.reason, a.created_at) for a in rows]


def decision_override(*, decision_id: int, user: User, reason: str) -> Decision:
    """Release a blocked answer anyway: two different zone admins holding override_blocked,
    each with a reason, on the trail. The first call records the request and the decision
    stays blocked; a second person's call releases it. The same person twice is 409."""
    reason = _require_reason(reason)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user, roles=(Role.ZONE_ADMIN,))
        if not user.has_perm("decisions.override_blocked"):
            raise Forbidden(
                gettext("overriding a blocked decision needs the override_blocked permission")
            )
        if decision.state != State.FAILED or decision.gate != Gate.BLOCKED:
            raise Conflict(
                gettext("only a blocked decision can be overridden; %(id)s is not")
                % {"id": decision_id}
            )
        if decision.proposed_by_id == user.pk:
            raise Forbidden(gettext("nobody overrides a decision they proposed"))
        earlier = list(Approval.objects.filter(decision=decision).select_related("reviewer"))
        if any(a.reviewer_id == user.pk for a in earlier):
            raise Conflict(
                gettext(
                    "you asked for this override already; a second person with the "
                    "override_blocked permission must complete it"
                )
            )
        Approval.objects.create(decision=decision, reviewer=user, reason=reason)
        given = len(earlier) + 1
        if given < OVERRIDE_APPROVALS:
            events.decision_override_requested(
                decision, actor=user, reason=reason, given=given, needed=OVERRIDE_APPROVALS
            )
            _log_after_commit(
                "override of a blocked decision requested",
                level=logging.WARNING,
                decision_id=decision_id,
                user=user.get_username(),
            )
            return decision
        first = earlier[0]
        decision.outcome_reason = reason
        _transition(decision, "override")
        events.decision_overridden_by_two(
            decision,
            actor=user,
            reason=reason,
            requested_by=first.reviewer.get_username(),
            request=first.reason,
        )
        _log_after_commit(
            "blocked decision overridden",
            level=logging.WARNING,
            decision_id=decision_id,
            user=user.get_username(),
            requested_by=first.reviewer.get_username(),
        )
        _deliver(
            decision, webhook_token(decision.proposed_by_id), release="overridden", reason=reason
        )
        _save(decision)
    return decision


# --- escalations ---------------------------------------------------------------------------


MORE_EVIDENCE = "more evidence needed"


def may_send_back(decision: Decision, user: User) -> bool:
    """The authority the decision was escalated to: a reviewer or zone admin whose scope
    covers `escalated_to`. The zone's own reviewers hold no such role."""
    return bool(decision.escalated_to) and has_role(
        user, REVIEW_ROLES, Coordinate.parse(decision.escalated_to)
    )


def decision_send_back(*, decision_id: int, user: User, reason: str) -> Decision:
    """The authority an escalated decision went up to sends it back asking for more evidence.

    It fails, with the outcome "more evidence needed: <reason>", and the agent's webhook is
    told as a reviewer's rejection (`decision.rejected`) whose `outcome` is
    `more_evidence_needed` and whose reason says what to bring. Why not back to the zone's
    queue: an answer's evidence bundle is sealed by its hash and only the agent can cite
    more, in a new submission; the zone's reviewers, who let it lapse, cannot add any. So a
    compliance team reads one closed item with the authority's request on the trail, and the
    next submission is judged afresh by the gate, not approved on the old bundle.
    """
    reason = _require_reason(reason)
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; it cannot be sent back")
                % {"id": decision_id, "state": decision.state}
            )
        if not decision.escalated_to:
            raise Conflict(
                gettext(
                    "decision %(id)s was not escalated; only the authority it goes up to "
                    "sends it back (reject it instead)"
                )
                % {"id": decision_id}
            )
        if not may_send_back(decision, user):
            raise Forbidden(
                gettext(
                    "only the authority of %(escalated_to)s, to which decision %(id)s was "
                    "escalated, may send it back"
                )
                % {"escalated_to": decision.escalated_to, "id": decision_id}
            )
        if decision.proposed_by_id == user.pk:
            raise Forbidden(gettext("nobody reviews a decision they proposed"))
        if _held_by_other(decision, user):
            raise Conflict(
                gettext("decision %(id)s is claimed by %(user)s")
                % {"id": decision_id, "user": decision.claimed_by}
            )
        decision.outcome_reason = f"{MORE_EVIDENCE}: {reason}"
        _transition(decision, "fail")
        _save(decision)
        events.decision_sent_back(decision, actor=user, reason=reason, level=decision.escalated_to)
        _push(decision, "decision.resolved")
        message = rejected_message(decision, reviewer=user.get_username())
        message["data"].update(outcome="more_evidence_needed", request=reason)
        outbox_webhook(decision, webhook_token(decision.proposed_by_id), message)
        _log_after_commit(
            "decision sent back for more evidence",
            decision_id=decision_id,
            user=user.get_username(),
            authority=decision.escalated_to,
        )
    return decision


# --- re-reviews: an answer wrong now that its evidence changed (decisions.rereview) --------

EVIDENCE_CHANGED = "evidence changed"
# Released: the answer went out to its agent; a "wrong now" on it can only correct it.
RELEASED_STATES = (State.EXECUTED, State.COMPLETED)


def decision_evidence_changed(
    *, decision_id: int, user: User, note: str, changes: list[dict[str, Any]]
) -> Decision:
    """A reviewer found, on a re-review, that an answer not yet released is wrong now that
    the text it cited changed: it fails with "evidence changed: <note>" and leaves the
    queue, so nobody approves it on the old text; the agent's webhook is told
    (`decision.failed`, `outcome` "evidence_changed", with the changes). A failed answer is
    left as it is; a released one is corrected instead (`decision_correct`)."""
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state == State.FAILED:
            return decision
        if decision.state in RELEASED_STATES:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; a released answer is corrected instead")
                % {"id": decision_id, "state": decision.state}
            )
        reason = f"{EVIDENCE_CHANGED}: {note}"
        decision.outcome_reason = reason
        _transition(decision, "fail")
        _save(decision)
        events.decision_failed(decision, actor=user, reason=reason)
        _push(decision, "decision.resolved")
        message = failed_message(decision)
        message["data"].update(outcome="evidence_changed", note=note, changes=changes)
        outbox_webhook(decision, webhook_token(decision.proposed_by_id), message)
        _log_after_commit(
            "decision failed: evidence changed", decision_id=decision_id, user=user.get_username()
        )
    return decision


def decision_correct(
    *,
    decision_id: int,
    user: User,
    verdict: str,
    note: str,
    rereview: int,
    changes: list[dict[str, Any]],
) -> Decision:
    """A released answer is wrong now that the text it rested on changed: it stays as given
    (the agent has it), and a correction goes on its trail (`decision.corrected`, counted by
    the KPIs) and to the agent's webhook with the verdict and the reviewer's note."""
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state not in RELEASED_STATES:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; only a released answer is corrected")
                % {"id": decision_id, "state": decision.state}
            )
        events.decision_corrected(
            decision, actor=user, verdict=verdict, note=note, rereview=rereview
        )
        outbox_webhook(
            decision,
            webhook_token(decision.proposed_by_id),
            corrected_message(
                decision,
                verdict=verdict,
                note=note,
                reviewer=user.get_username(),
                changes=changes,
            ),
        )
        _log_after_commit("decision corrected", decision_id=decision_id, user=user.get_username())
    return decision


def _at_top_recorded() -> Exists:
    return Exists(
        TrailEvent.objects.filter(
            decision_id=OuterRef("pk"), kind=events.Kind.DECISION_ESCALATION_TOPPED
        )
    )


def decisions_escalate_overdue() -> int:
    """Decisions past their review SLA go up to the parent level's authority, once a level:
    the item is addressed to it (`escalated_to`), first in its queue and pushed to its socket
    group (every prefix of the zone hears the zone's pushes, `gates.groups`). At the galaxy
    nothing is above: the item stays with the galaxy's authority and the trail says so once
    (`decision.escalation_topped`), not again every run. The number moved up a level."""
    now = timezone.now()
    moved = 0
    overdue = Decision.objects.filter(state=State.APPROVAL_REQUIRED, due_at__lt=now).exclude(
        _at_top_recorded()
    )
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
                if not Decision.objects.filter(pk=decision_id).filter(_at_top_recorded()).exists():
                    events.decision_escalation_topped(decision, at=str(current))
                    _log_after_commit(
                        "overdue at the top of the tree: it stays there",
                        level=logging.WARNING,
                        decision_id=decision_id,
                        at=str(current),
                    )
                continue
            was_due = decision.due_at.isoformat()
            sla = effective_policy(Coordinate.parse(decision.zone)).values.review_sla_hours
            decision.escalated_to = str(parent)
            decision.due_at = now + timedelta(hours=sla)
            decision.save(update_fields=["escalated_to", "due_at", "updated_at"])
            events.decision_escalated_overdue(decision, to=str(parent), was_due=was_due)
            _push(decision, "decision.escalated")
            outbox_webhook(
                decision, webhook_token(decision.proposed_by_id), escalated_message(decision)
            )
            moved += 1
            _log_after_commit("decision escalated", decision_id=decision_id, to=str(parent))
    return moved


GRAPH_ESCALATION_REASON = "the graph's evidence hangs together too little (cohesion < tau_c / 2)"


def decision_escalate_graph_answer(
    *,
    report: ValidationReport,
    question: str,
    answer: str,
    zone: Coordinate,
    user: User,
    agent: Coordinate | None = None,
) -> Decision:
    """A graph answer whose evidence hangs together too little becomes an item for the
    authority one level up (the zone's parent; the galaxy's own, at the top): a decision
    awaiting approval with the graph's report, escalated to that level, pushed to its queue.
    Its reviewers approve (the agent is told as for any answer), reject or send it back.

    Called inside the caller's transaction (graph.queries stores the report and its trail
    event in it), so the answer and its work item are written together or not at all.
    """
    parent = zone.parent
    to = parent if parent is not None else zone
    policy = effective_policy(zone)
    with _zone_change(str(zone)):
        decision = Decision.objects.create(
            question=question,
            answer=answer,
            zone=str(zone),
            # A person who asked the graph is no agent: the decision names none.
            agent=str(agent) if agent is not None else "",
            proposed_by=user,
            bundle=report.bundle,
            report=report,
            request_hash=report.content_hash,
        )
        events.decision_proposed(decision, actor=user)
        decision.gate = Gate.REQUIRED
        decision.mode = report.mode
        decision.sufficiency = report.sufficiency
        decision.completeness = report.completeness
        decision.cohesion = report.cohesion
        decision.policy_label = report.policy_label
        _transition(decision, "validate")
        events.decision_validated(decision, report)
        decision.due_at = timezone.now() + timedelta(hours=policy.values.review_sla_hours)
        decision.escalated_to = str(to)
        _transition(decision, "require_approval")
        _save(decision)
        events.decision_queued(decision)
        events.decision_escalated_by_graph(
            decision,
            to=str(to),
            cohesion=report.cohesion or 0.0,
            cohesion_tau=float(report.policy.get("cohesion_tau") or 0.0),
        )
        if parent is None:
            events.decision_escalation_topped(decision, at=str(to))
        _push(decision, "decision.escalated")
        message = escalated_message(decision)
        message["data"]["reason"] = GRAPH_ESCALATION_REASON
        outbox_webhook(decision, webhook_token(user.pk), message)
        _log_after_commit("graph answer escalated", decision_id=decision.pk, to=str(to))
    return decision


def may_override(decision: Decision, user: User) -> bool:
    """What decision_override checks, for a page to offer the action: a blocked answer, a
    zone admin of its zone with override_blocked, not its proposer, not yet among those who
    asked to release it."""
    return (
        decision.state == State.FAILED
        and decision.gate == Gate.BLOCKED
        and decision.proposed_by_id != user.pk
        and user.has_perm("decisions.override_blocked")
        and has_role(user, [Role.ZONE_ADMIN], Coordinate.parse(decision.zone))
        and not decision.approvals.filter(reviewer_id=user.pk).exists()
    )


# --- discussion and assignment ---------------------------------------------------------------
# Reviewers talk about an answer in comments, and a zone's reviewers hand work to each other by
# assignment; both are on the decision's trail. The queue's bulk actions are these one decision
# at a time, each in its own transaction: one that fails is reported and the others go on.

COMMENT_LIMIT = 2000
READ_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN, Role.AUDITOR)


def decision_comment(*, decision_id: int, user: User, text: str) -> Comment:
    text = (text or "").strip()
    if not text:
        raise ApplicationError(gettext("a comment needs some text"), field="text")
    if len(text) > COMMENT_LIMIT:
        raise ApplicationError(
            gettext("at most %(limit)s characters") % {"limit": COMMENT_LIMIT}, field="text"
        )
    with _changing(decision_id):
        decision = _locked_for(decision_id, user, roles=READ_ROLES)
        comment = Comment.objects.create(decision=decision, author=user, text=text)
        events.decision_commented(decision, actor=user, text=text, comment=comment.pk)
    return comment


def _reviewer_named(username: str | None, decision: Decision) -> User | None:
    """The reviewer of the decision's zone called `username` (None or "": nobody). Nobody of
    that name and someone who does not review the zone get one answer: two would tell whoever
    may assign which usernames exist anywhere."""
    if not username:
        return None
    assignee = User.objects.filter(username=username).first()
    if assignee is None or not has_role(assignee, REVIEW_ROLES, Coordinate.parse(decision.zone)):
        raise ApplicationError(
            gettext("%(user)s does not review %(zone)s")
            % {"user": username, "zone": decision.zone},
            field="assignee",
        )
    return assignee


def decision_assign(*, decision_id: int, user: User, assignee: str | None) -> Decision:
    """Assign an answer awaiting review to the reviewer of its zone with username `assignee`
    (None or "": unassign)."""
    with _changing(decision_id):
        decision = _locked_for(decision_id, user)
        if decision.state != State.APPROVAL_REQUIRED:
            raise Conflict(
                gettext("decision %(id)s is %(state)s; nothing to assign")
                % {"id": decision_id, "state": decision.state}
            )
        reviewer = _reviewer_named(assignee, decision)
        if reviewer is not None and reviewer.pk == decision.proposed_by_id:
            raise ApplicationError(
                gettext("nobody reviews a decision they proposed"), field="assignee"
            )
        decision.assigned_to = reviewer
        decision.save(update_fields=["assigned_to", "updated_at"])
        events.decision_assigned(
            decision, actor=user, to=reviewer.get_username() if reviewer else None
        )
        _push(decision, "decision.assigned")
    return decision


BULK_ACTIONS = ("release", "assign", "approve", "reject")
BULK_DONE = "ok"
# An approval recorded in bulk on a decision whose zone needs more than one: it waits on.
BULK_RECORDED = "recorded"


def engine_choice_of(claim: Mapping[str, Any]) -> str:
    """The engine's word on one claim of a report, as the decision page presets the claim's
    toggle (gates.presenters.engine_choice): "yes" verified, "no" refuted, "" a claim it
    could not verify (or whose evidence contradicts itself), which waits for a person."""
    if claim.get("contradicted"):
        return ""
    verdict = claim.get("verdict")
    if verdict in ("verified", "refuted", "unverified"):
        return {"verified": "yes", "refuted": "no"}.get(str(verdict), "")
    return "yes" if claim.get("supported") else "no"


def bulk_refusal(decision: Decision, user: User, action: str) -> str | None:
    """Why `action` ("approve" or "reject") may not be taken on `decision` from the queue's
    bulk form, without opening it; None when it may. Never a bulk approval of an answer with
    a refuted claim, nor any bulk verdict while a claim waits for a person's own choice: the
    single page asks for those, claim by claim."""
    if not has_role(user, REVIEW_ROLES, Coordinate.parse(decision.zone)):
        return gettext("not in your zones")
    if decision.state != State.APPROVAL_REQUIRED:
        return gettext("already decided (%(state)s)") % {"state": decision.get_state_display()}
    body = decision.report.body if decision.report is not None else {}
    choices = [engine_choice_of(c) for c in body.get("claims", [])]
    refuted = [str(k + 1) for k, c in enumerate(choices) if c == "no"]
    waiting = [str(k + 1) for k, c in enumerate(choices) if c == ""]
    if action == "approve" and refuted:
        return ngettext(
            "claim %(n)s is refuted: an answer with a refuted claim is never approved in "
            "bulk; open it to decide",
            "claims %(n)s are refuted: an answer with a refuted claim is never approved in "
            "bulk; open it to decide",
            len(refuted),
        ) % {"n": ", ".join(refuted)}
    if waiting:
        return ngettext(
            "claim %(n)s is not verified and waits for your own choice: open it to decide",
            "claims %(n)s are not verified and wait for your own choice: open it to decide",
            len(waiting),
        ) % {"n": ", ".join(waiting)}
    if action == "reject" and not refuted:
        return gettext("no claim is refuted: open it to say which claim is wrong")
    if decision.proposed_by_id == user.pk:
        return gettext("nobody approves or rejects a decision they proposed")
    if action == "approve" and Approval.objects.filter(decision=decision, reviewer=user).exists():
        return gettext("you approved it already; it needs a second approver who is not you")
    return None


def _bulk_verdict(decision: Decision, user: User, action: str, reason: str) -> str:
    """One decision of a bulk approval or rejection, through the single page's services (the
    same trail events, webhooks and checks): BULK_DONE, BULK_RECORDED or why not. A bulk
    approval records no verdict per claim (the reviewer judged none of them one by one, and
    calibration learns from those); a bulk rejection names the claims the engine refuted."""
    refusal = bulk_refusal(decision, user, action)
    if refusal is not None:
        return refusal
    if action == "approve":
        done = decision_approve(decision_id=decision.pk, user=user, reason=reason)
        return BULK_DONE if done.state != State.APPROVAL_REQUIRED else BULK_RECORDED
    body = decision.report.body if decision.report is not None else {}
    wrong = [
        {"index": k, "supported": False, "note": ""}
        for k, claim in enumerate(body.get("claims", []))
        if engine_choice_of(claim) == "no"
    ]
    decision_reject(decision_id=decision.pk, user=user, reason=reason, claims=wrong)
    return BULK_DONE


def decisions_bulk(
    *,
    decision_ids: Sequence[int],
    user: User,
    action: str,
    assignee: str | None = None,
    reason: str = "",
) -> dict[int, str]:
    """Release, assign, approve or reject several decisions: for each, BULK_DONE (an approval
    still short of the zone's count: BULK_RECORDED) or why not. Each goes through the same
    service as the single action, in its own transaction: one refused leaves the others."""
    if action not in BULK_ACTIONS:
        raise ApplicationError(
            gettext("action must be release, assign, approve or reject"), field="action"
        )
    if action == "reject":
        reason = _require_reason(reason)  # asked once, before any decision is touched
    outcome: dict[int, str] = {}
    ids = list(dict.fromkeys(decision_ids))
    found = {d.pk: d for d in Decision.objects.select_related("report").filter(pk__in=ids)}
    for decision_id in ids:
        try:
            if action == "release":
                decision_release(decision_id=decision_id, user=user)
            elif action == "assign":
                decision_assign(decision_id=decision_id, user=user, assignee=assignee)
            elif decision_id not in found:
                outcome[decision_id] = gettext("not in your zones")
                continue
            else:
                outcome[decision_id] = _bulk_verdict(found[decision_id], user, action, reason)
                continue
        except ApplicationError as error:
            outcome[decision_id] = error.message
        else:
            outcome[decision_id] = BULK_DONE
    return outcome


def may_read(user: User, decision: Decision) -> bool:
    """Whether the user may read the decision's discussion: a role on its zone."""
    return has_role(user, READ_ROLES, Coordinate.parse(decision.zone))
