"""The decision with its six-stage state machine, approvals, periodic reviews and outbox."""

from __future__ import annotations

import hashlib
from datetime import datetime

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_fsm import ConcurrentTransitionMixin, FSMField, transition

from maria import triggers

# --- the decision and its life ---------------------------------------------------------------
# proposed -> validated -> approval_required -> approved -> executed -> completed, and failed
# from any non-final state. The state field is protected: it changes only through a
# transition, inside `decisions.services`, which locks the row first.


class State(models.TextChoices):
    PROPOSED = "proposed", _("Proposed")
    VALIDATED = "validated", _("Validated")
    APPROVAL_REQUIRED = "approval_required", _("Approval required")
    APPROVED = "approved", _("Approved")
    EXECUTED = "executed", _("Executed")
    COMPLETED = "completed", _("Completed")
    FAILED = "failed", _("Failed")


class Gate(models.TextChoices):
    AUTO = "auto", _("Auto")
    FLAGGED = "flagged", _("Flagged")
    REQUIRED = "required", _("Human review required")
    BLOCKED = "blocked", _("Blocked")


FINAL_STATES = (State.COMPLETED, State.FAILED)
OPEN_STATES = [s for s in State.values if s not in FINAL_STATES]


def claim_holds(claimed_by_id: int | None, claimed_until: datetime | None, now: datetime) -> bool:
    """A reviewer's claim stands while someone holds it and it has not run out: the one
    rule the services, the queue and the decision page all apply (`Decision.held`)."""
    return claimed_by_id is not None and claimed_until is not None and claimed_until > now


class Decision(ConcurrentTransitionMixin, models.Model):
    """One AI answer under governance, from proposal to its outcome."""

    question = models.TextField()
    answer = models.TextField()
    zone = models.CharField(max_length=64, db_index=True)
    agent = models.CharField(max_length=64)
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="proposed_decisions"
    )
    bundle = models.ForeignKey("evidence.EvidenceBundle", on_delete=models.PROTECT)
    report = models.ForeignKey(
        "evidence.ValidationReport", null=True, blank=True, on_delete=models.PROTECT
    )
    state = FSMField(default=State.PROPOSED, choices=State.choices, protected=True, db_index=True)
    gate = models.CharField(max_length=16, choices=Gate.choices, blank=True)
    mode = models.CharField(max_length=16, blank=True)
    sufficiency = models.FloatField(null=True, blank=True)
    completeness = models.FloatField(null=True, blank=True)
    cohesion = models.FloatField(null=True, blank=True)
    policy_label = models.CharField(max_length=400, blank=True)
    idempotency_key = models.CharField(max_length=200, blank=True)
    request_hash = models.CharField(max_length=64)
    due_at = models.DateTimeField(null=True, blank=True)
    escalated_to = models.CharField(max_length=64, blank=True)  # the authority it went up to
    # The keys of the zone's graph nodes an agent's answer drew on (seed 002 §9): the graph gate
    # judges their cohesion beside the answer gate. Null: none named (and every older decision).
    graph_evidence = models.JSONField(null=True, blank=True)
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    claimed_until = models.DateTimeField(null=True, blank=True)
    # The reviewer it is assigned to (decisions.discussion): their queue shows it first, and
    # anyone else may still claim it; unlike a claim it does not run out.
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    outcome_reason = models.TextField(blank=True)
    refusal = models.JSONField(null=True, blank=True)  # what was found and why not enough
    attempts = models.PositiveSmallIntegerField(default=0)  # validation attempts
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [("override_blocked", "Can override a blocked decision")]
        constraints = [
            models.UniqueConstraint(
                fields=["proposed_by", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="decision_idempotency_key_unique",
            )
        ]
        indexes = [
            models.Index(fields=["zone", "state", "due_at"], name="decision_queue"),
            # The dashboard counts a few days' decisions by their time (gates.kpis).
            models.Index(fields=["created_at"], name="decision_created_at"),
        ]

    def __str__(self) -> str:
        return f"decision {self.pk} ({self.state})"

    def held(self, now: datetime | None = None) -> bool:
        """Someone's claim on it stands (claim_holds)."""
        return claim_holds(self.claimed_by_id, self.claimed_until, now or timezone.now())

    @staticmethod
    def held_at(now: datetime) -> models.Q:
        """The rows whose claim stands at `now` (claim_holds, in SQL)."""
        return models.Q(claimed_by__isnull=False, claimed_until__gt=now)

    # --- transitions: database changes only, no I/O (django-fsm README) ------------------

    @transition(field=state, source=State.PROPOSED, target=State.VALIDATED)
    def validate(self) -> None:
        pass

    @transition(field=state, source=State.VALIDATED, target=State.APPROVAL_REQUIRED)
    def require_approval(self) -> None:
        pass

    @transition(
        field=state, source=[State.VALIDATED, State.APPROVAL_REQUIRED], target=State.APPROVED
    )
    def approve(self) -> None:
        self.claimed_by = None
        self.claimed_until = None

    @transition(field=state, source=State.FAILED, target=State.APPROVED)
    def override(self) -> None:
        pass

    @transition(field=state, source=State.APPROVED, target=State.EXECUTED)
    def execute(self) -> None:
        pass

    @transition(field=state, source=State.EXECUTED, target=State.COMPLETED)
    def complete(self) -> None:
        pass

    @transition(field=state, source=OPEN_STATES, target=State.FAILED)
    def fail(self) -> None:
        self.claimed_by = None
        self.claimed_until = None


class Approval(models.Model):
    """One reviewer's approval; zones that need two approvals need two different people."""

    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="approvals")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    reason = models.TextField(blank=True)
    # The answer this reviewer wrote (or took over) in place of the agent's, delivered
    # instead of it (decisions.delivery); null: none. Nullable so that adding the column
    # alters the append-only table in place on SQLite instead of rebuilding it (a rebuild
    # would drop its triggers).
    replacement = models.TextField(null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["decision", "reviewer"], name="approval_once_each")
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} approved {self.decision_id}"


class ClaimVerdict(models.Model):
    """A reviewer's verdict on one claim of a decision they approved or rejected, beside the
    engine's verdict on it then: the labelled example that per-zone calibration
    (evidence.calibration) and the reviews export learn from."""

    class Action(models.TextChoices):
        APPROVE = "approve", _("Approve")
        REJECT = "reject", _("Reject")

    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="claim_verdicts")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    action = models.CharField(max_length=8, choices=Action.choices)
    claim = models.PositiveSmallIntegerField()  # index into the bundle's claims
    supported = models.BooleanField()
    note = models.TextField(blank=True)
    engine_supported = models.BooleanField()
    # The global verifier's P(supported) for the claim, before any zone calibration: the best
    # (highest) `signals.probability` among the claim's evidence items in the report.
    engine_probability = models.FloatField(null=True, blank=True)
    zone = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "reviewer", "claim"], name="claim_verdict_once_each"
            )
        ]
        indexes = [models.Index(fields=["zone", "created_at"], name="claim_verdict_zone_at")]

    def __str__(self) -> str:
        verdict = "supported" if self.supported else "unsupported"
        return f"{self.reviewer} on claim {self.claim} of {self.decision_id}: {verdict}"


class PeriodicReview(models.Model):
    """A flagged decision sampled for the zone's periodic look-back (`decisions.periodic`):
    open until a reviewer of the zone closes it with a verdict, under a claim lock like a
    decision's (`claim_holds`)."""

    class Verdict(models.TextChoices):
        OK = "ok", _("OK")
        WRONG = "wrong", _("Wrong")

    decision = models.OneToOneField(Decision, on_delete=models.PROTECT)
    zone = models.CharField(max_length=64, db_index=True)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    # Null while open: "no verdict yet" is not a verdict, and the open rows' partial index
    # and the constraints below read it plainly.
    verdict = models.CharField(  # noqa: DJ001
        max_length=8, choices=Verdict.choices, null=True, blank=True
    )
    note = models.TextField(blank=True)
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    claimed_until = models.DateTimeField(null=True, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)  # when it was closed
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(verdict__isnull=True)
                | models.Q(
                    verdict__in=["ok", "wrong"],
                    reviewed_at__isnull=False,
                    reviewed_by__isnull=False,
                ),
                name="periodic_review_closed_by_someone",
            ),
            models.CheckConstraint(
                condition=~models.Q(verdict="wrong") | ~models.Q(note=""),
                name="periodic_review_wrong_has_note",
            ),
        ]
        indexes = [
            # The open items of a zone, oldest first: the reviewers' list (rows as a queue).
            models.Index(
                fields=["zone", "created_at"],
                condition=models.Q(verdict__isnull=True),
                name="periodic_review_open",
            )
        ]

    def __str__(self) -> str:
        return f"periodic review of {self.decision_id}"

    @property
    def is_open(self) -> bool:
        return self.verdict is None

    def held(self, now: datetime | None = None) -> bool:
        """Someone's claim on it stands (claim_holds)."""
        return claim_holds(self.claimed_by_id, self.claimed_until, now or timezone.now())

    @staticmethod
    def held_at(now: datetime) -> models.Q:
        """The rows whose claim stands at `now` (claim_holds, in SQL)."""
        return models.Q(claimed_by__isnull=False, claimed_until__gt=now)

    @staticmethod
    def sampled(decision_id: int, rate: float) -> bool:
        """Whether a flagged decision is sampled at `rate`: u < rate, with u in [0, 1) the
        first 53 bits of sha256("periodic-review:<id>") over 2**53 (exact as a float, so u
        never rounds up to 1). Deterministic, so a replay of the decision samples it again;
        rate 0 samples none and rate 1 all."""
        digest = hashlib.sha256(f"periodic-review:{decision_id}".encode()).digest()
        return (int.from_bytes(digest[:8], "big") >> 11) / 2**53 < rate


class Outbox(models.Model):
    """Side effects written in the same transaction as the change that causes them and sent
    after commit; a rolled-back change leaves no row, so nothing is ever announced wrongly.
    Rows are claimed with a compare-and-set, so two workers never send one twice."""

    class Kind(models.TextChoices):
        PUSH = "push", "Websocket push"
        WEBHOOK = "webhook", "Webhook"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    decision = models.ForeignKey(Decision, null=True, on_delete=models.PROTECT)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(sent_at__isnull=True),
                name="outbox_pending",
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} ({'sent' if self.sent_at else 'pending'})"


class ReReview(models.Model):
    """A past answer to look at again because the text it rested on changed: a new version
    superseded the cited paragraph, or a knowledge-base conflict was resolved against it
    (`decisions.rereview`). Open until a reviewer of its zone says whether it still holds."""

    class Cause(models.TextChoices):
        SUPERSEDED = "superseded", _("A new version of the cited document")
        CONFLICT = "conflict", _("A knowledge-base conflict resolved against the cited text")

    class Verdict(models.TextChoices):
        STILL_CORRECT = "still_correct", _("Still correct")
        WRONG = "wrong", _("Wrong now")

    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="rereviews")
    zone = models.CharField(max_length=64)
    cause = models.CharField(max_length=16, choices=Cause.choices)
    old_paragraph = models.ForeignKey(
        "evidence.Paragraph", on_delete=models.PROTECT, related_name="+"
    )
    # What says it now: the new version's paragraph on the same place or subject, or the
    # side of the conflict that governs; None when the new version has nothing in its place.
    new_paragraph = models.ForeignKey(
        "evidence.Paragraph", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    conflict = models.ForeignKey(
        "evidence.KnowledgeConflict", null=True, blank=True, on_delete=models.PROTECT
    )
    created_at = models.DateTimeField(auto_now_add=True)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, blank=True)
    note = models.TextField(blank=True)
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["decision", "old_paragraph", "cause"], name="rereview_once_each"
            )
        ]
        indexes = [models.Index(fields=["zone", "closed_at"], name="rereview_zone_open")]

    def __str__(self) -> str:
        return f"re-review of {self.decision_id} ({self.cause})"


class Comment(models.Model):
    """A note on a decision by someone who may see it: reviewers discussing an answer, an
    auditor asking. On the decision's trail too (decisions.discussion)."""

    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.decision_id}"


# --- database protection ------------------------------------------------------------------
#
# Every governance row is append-only or on the chain (docs/architecture.md): approvals and
# comments never change; a per-claim verdict keeps its claim and the engine's verdict, and
# its reviewer's verdict changes only with their next act on the decision's lane (approve,
# reject: the event carries the verdicts); a decision keeps what was asked, answered
# and cited, its graph evidence too (its state, gate and scores change only with an event on
# its lane, which `verify_trail` replays: audit.rows); a re-review or periodic review keeps
# what it is about and, once closed, its verdict. PostgreSQL: compiled by django-pgtrigger and
# installed by migration 0009 (registered here, not in Meta.triggers, like the trail's);
# SQLite: the twins in that migration. A change to these columns needs a migration that
# installs the trigger again, as 0012 does for graph_evidence.

_DECISION_FIXED = (
    "question",
    "answer",
    "zone",
    "agent",
    "proposed_by_id",
    "bundle_id",
    "idempotency_key",
    "request_hash",
    "graph_evidence",
)
_REREVIEW_FIXED = (
    "decision_id",
    "zone",
    "cause",
    "old_paragraph_id",
    "new_paragraph_id",
    "conflict_id",
)
_REREVIEW_CLOSED = ("verdict", "note", "closed_by_id", "closed_at")
_PERIODIC_FIXED = ("decision_id", "zone", "reason")
_PERIODIC_CLOSED = ("verdict", "note", "reviewed_at", "reviewed_by_id")

DECISION_TRIGGERS = triggers.fixed("decision", _DECISION_FIXED)
APPROVAL_TRIGGERS = triggers.append_only("approval")
CLAIM_VERDICT_TRIGGERS = triggers.fixed(
    "claim_verdict",
    ("decision_id", "reviewer_id", "claim", "engine_supported", "engine_probability", "zone"),
)
COMMENT_TRIGGERS = triggers.append_only("comment")
REREVIEW_TRIGGERS = triggers.fixed(
    "rereview",
    _REREVIEW_FIXED,
    once=pgtrigger.Q(old__closed_at__isnull=False) & triggers.changed(_REREVIEW_CLOSED),
)
PERIODIC_REVIEW_TRIGGERS = triggers.fixed(
    "periodic_review",
    _PERIODIC_FIXED,
    once=pgtrigger.Q(old__verdict__isnull=False) & triggers.changed(_PERIODIC_CLOSED),
)

pgtrigger.register(*DECISION_TRIGGERS)(Decision)
pgtrigger.register(*APPROVAL_TRIGGERS)(Approval)
pgtrigger.register(*CLAIM_VERDICT_TRIGGERS)(ClaimVerdict)
pgtrigger.register(*COMMENT_TRIGGERS)(Comment)
pgtrigger.register(*REREVIEW_TRIGGERS)(ReReview)
pgtrigger.register(*PERIODIC_REVIEW_TRIGGERS)(PeriodicReview)
