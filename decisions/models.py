"""The append-only trail (hash-chained events, chain heads, checkpoints) and the decision
with its six-stage state machine, approvals, periodic reviews and outbox.

The record is the canonical bytes of each event and its hash (`decisions.chain`); the other
columns are an index over them for queries. Database triggers refuse UPDATE, DELETE and
TRUNCATE (migration 0001_trail); `manage.py verify_trail` catches whatever bypasses them.
"""

from __future__ import annotations

import json
from typing import Any

import pgtrigger
from django.conf import settings
from django.db import models
from django_fsm import ConcurrentTransitionMixin, FSMField, transition

from decisions.chain import GENESIS, ChainLink


def _as_bytes(value: bytes | memoryview) -> bytes:
    # BinaryField reads back as memoryview on PostgreSQL and bytes on SQLite.
    return bytes(value)


class DecisionEvent(models.Model):
    """One thing that happened (a transition, a bundle, a report, a policy change).

    `canonical` holds the exact bytes that were hashed: `hash = sha256(prev_hash + canonical)`.
    They decode to {v, kind, chain, seq, decision, actor, reason, at, payload}; the columns
    beside them repeat those values so they can be queried (`verify_trail --deep` checks they
    agree). Each zone-tree node has its own chain (`chain` = its coordinate), and a zone's
    decisions have its lanes ("G1.U1.P1.Z1/3", see decisions.trail); each chain is numbered
    by `seq` from 1, so an export scoped to some zones is a set of whole chains.
    """

    chain = models.CharField(max_length=64)
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=64, db_index=True)
    # No foreign key: the trail outlives anything it mentions and must never cascade.
    decision_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    actor = models.CharField(max_length=200)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)
    canonical = models.BinaryField()

    class Meta:
        ordering = ["chain", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "seq"], name="trail_event_chain_seq_unique"),
            models.CheckConstraint(condition=models.Q(seq__gte=1), name="trail_event_seq_gte_1"),
        ]
        indexes = [
            # `?since=` exports find each chain's first event after a time.
            models.Index(fields=["chain", "created_at"], name="trail_event_chain_time"),
        ]

    def __str__(self) -> str:
        return f"{self.chain}#{self.seq} {self.kind}"

    @property
    def body(self) -> dict[str, Any]:
        """What the hashed bytes say (the record; the columns are only an index)."""
        decoded: dict[str, Any] = json.loads(_as_bytes(self.canonical))
        return decoded

    @property
    def payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = self.body.get("payload", {})
        return payload

    @property
    def link(self) -> ChainLink:
        return ChainLink(self.seq, self.prev_hash, self.hash, _as_bytes(self.canonical))


class TrailHead(models.Model):
    """The newest event of one chain. Appends lock this row, so a chain never forks.

    A cache for the next append, not part of the record: `verify_trail` checks it against the
    events, which also catches a tail deleted since the last checkpoint. Updated in place by
    every append, so only DELETE and TRUNCATE are refused.
    """

    chain = models.CharField(max_length=64, primary_key=True)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, default=GENESIS)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["chain"]

    def __str__(self) -> str:
        return f"{self.chain}@{self.seq}"


class TrailCheckpoint(models.Model):
    """A seal over every chain: its head seq, head hash and a digest of all its event hashes.

    Checkpoints form a hash chain of their own (`hash = sha256(prev_hash + canonical)`, seq
    from 1), so an altered or removed checkpoint shows; `prev_hash` is unique, so two runs at
    once cannot both extend the same checkpoint. Publish `hash` outside the database
    (`trail_checkpoint` prints it, the task logs it): whoever can rewrite the trail can
    rewrite this table too, but not the copy someone else kept.
    """

    seq = models.PositiveIntegerField(unique=True)
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64, unique=True)
    hash = models.CharField(max_length=64, unique=True)
    chains = models.PositiveIntegerField()
    events = models.PositiveBigIntegerField()
    # {"type", "seq", "at", "events", "chains": {chain: {"seq", "hash", "digest"}}}
    canonical = models.BinaryField()

    class Meta:
        ordering = ["-seq"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(seq__gte=1), name="trail_checkpoint_seq_gte_1"
            ),
        ]

    def __str__(self) -> str:
        return f"checkpoint {self.seq} {self.hash[:12]}"

    @property
    def body(self) -> dict[str, Any]:
        decoded: dict[str, Any] = json.loads(_as_bytes(self.canonical))
        return decoded

    @property
    def link(self) -> ChainLink:
        return ChainLink(self.seq, self.prev_hash, self.hash, _as_bytes(self.canonical))


# --- database protection (PostgreSQL; the SQLite twins are created in migration 0001) ----
#
# Compiled by django-pgtrigger and installed by migration 0001_trail. They are registered
# here rather than in Meta.triggers so they work without "pgtrigger" in INSTALLED_APPS; the
# registry still lets `pgtrigger.ignore(...)` (maintenance) and `manage.py pgtrigger ls`
# find them.


def _truncate_guard(name: str) -> pgtrigger.Trigger:
    # pgtrigger's Protect has no TRUNCATE form (TRUNCATE fires statement-level triggers with
    # no transition table), so this is a plain statement trigger. Emptying an empty table
    # loses nothing, and Django's test flush truncates every table, so only a table with
    # rows is refused.
    return pgtrigger.Trigger(
        name=name,
        when=pgtrigger.Before,
        operation=pgtrigger.Truncate,
        level=pgtrigger.Statement,
        func=pgtrigger.Func(
            "IF EXISTS (SELECT 1 FROM {meta.db_table}) THEN "
            "RAISE EXCEPTION 'the trail is append-only: cannot truncate %', TG_TABLE_NAME; "
            "END IF; RETURN NULL;"
        ),
    )


EVENT_TRIGGERS = (
    pgtrigger.Protect(
        name="trail_event_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    ),
    _truncate_guard("trail_event_no_truncate"),
)
CHECKPOINT_TRIGGERS = (
    pgtrigger.Protect(
        name="trail_checkpoint_append_only", operation=pgtrigger.Update | pgtrigger.Delete
    ),
    _truncate_guard("trail_checkpoint_no_truncate"),
)
HEAD_TRIGGERS = (
    pgtrigger.Protect(name="trail_head_no_delete", operation=pgtrigger.Delete),
    _truncate_guard("trail_head_no_truncate"),
)

pgtrigger.register(*EVENT_TRIGGERS)(DecisionEvent)
pgtrigger.register(*CHECKPOINT_TRIGGERS)(TrailCheckpoint)
pgtrigger.register(*HEAD_TRIGGERS)(TrailHead)


# --- the decision and its life (appended after the trail models) ---------------------------
# proposed -> validated -> approval_required -> approved -> executed -> completed, and failed
# from any non-final state. The state field is protected: it changes only through a
# transition, inside `decisions.services`, which locks the row first.


class State(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    VALIDATED = "validated", "Validated"
    APPROVAL_REQUIRED = "approval_required", "Approval required"
    APPROVED = "approved", "Approved"
    EXECUTED = "executed", "Executed"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class Gate(models.TextChoices):
    AUTO = "auto", "Auto"
    FLAGGED = "flagged", "Flagged"
    REQUIRED = "required", "Human review required"
    BLOCKED = "blocked", "Blocked"


FINAL_STATES = (State.COMPLETED, State.FAILED)
OPEN_STATES = [s for s in State.values if s not in FINAL_STATES]


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
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    claimed_until = models.DateTimeField(null=True, blank=True)
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
        indexes = [models.Index(fields=["zone", "state", "due_at"], name="decision_queue")]

    def __str__(self) -> str:
        return f"decision {self.pk} ({self.state})"

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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["decision", "reviewer"], name="approval_once_each")
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} approved {self.decision_id}"


class PeriodicReview(models.Model):
    """A flagged decision waiting for the zone's periodic look-back."""

    decision = models.OneToOneField(Decision, on_delete=models.PROTECT)
    zone = models.CharField(max_length=64, db_index=True)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    def __str__(self) -> str:
        return f"periodic review of {self.decision_id}"


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
