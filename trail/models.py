"""The append-only ledger: hash-chained events, chain heads, checkpoints.

The record is the canonical bytes of each event and its hash (`trail.chain`); the other
columns are an index over them for queries. Database triggers refuse UPDATE, DELETE and
TRUNCATE (installed by the decisions app's migration 0001_trail, which first created these
tables); `manage.py verify_trail` catches whatever bypasses them.
"""

from __future__ import annotations

import json
from typing import Any

import pgtrigger
from django.db import models

from trail.chain import GENESIS, ChainLink


def _as_bytes(value: bytes | memoryview) -> bytes:
    # BinaryField reads back as memoryview on PostgreSQL and bytes on SQLite.
    return bytes(value)


class TrailEvent(models.Model):
    """One thing that happened (a transition, a bundle, a report, a policy change).

    `canonical` holds the exact bytes that were hashed: `hash = sha256(prev_hash + canonical)`.
    They decode to {v, kind, chain, seq, decision, actor, reason, at, payload}; the columns
    beside them repeat those values so they can be queried (`verify_trail` checks they
    agree). Each zone-tree node has its own chain (`chain` = its coordinate), and a zone's
    decisions have its lanes ("G1.U1.P1.Z1/3", see trail.ledger); each chain is numbered
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
        db_table = "decisions_decisionevent"  # created under decisions; the name stays
        ordering = ["chain", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "seq"], name="trail_event_chain_seq_unique"),
            models.CheckConstraint(condition=models.Q(seq__gte=1), name="trail_event_seq_gte_1"),
        ]
        indexes = [
            # `?since=` exports find each chain's first event after a time.
            models.Index(fields=["chain", "created_at"], name="trail_event_chain_time"),
            # The dashboard's figures (gates.kpis): a decision's events of some kinds with
            # their times and actors from the index alone (PostgreSQL: an index-only scan),
            # and one actor's events after a time (did an agent ask again after a refusal).
            models.Index(
                fields=["decision_id", "kind", "created_at"],
                include=["actor"],
                name="trail_event_decision_kind",
            ),
            models.Index(fields=["actor", "created_at"], name="trail_event_actor_time"),
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
        db_table = "decisions_trailhead"
        ordering = ["chain"]

    def __str__(self) -> str:
        return f"{self.chain}@{self.seq}"


class TrailCheckpoint(models.Model):
    """A seal over every chain: its head seq, head hash and a digest of all its event hashes.

    Checkpoints form a hash chain of their own (`hash = sha256(prev_hash + canonical)`, seq
    from 1), so an altered or removed checkpoint shows; `prev_hash` is unique, so two runs at
    once cannot both extend the same checkpoint. Publish `hash` outside the database
    (`trail_checkpoint` prints it, the task logs it, a witness keeps it): whoever can rewrite
    the trail can rewrite this table too, but not the copy someone else kept, nor sign a
    forged row: `signature` is Ed25519 over `hash` with a key the database does not hold
    (trail.signing), `key_id` names that key; both are empty when no key is configured.
    """

    seq = models.PositiveIntegerField(unique=True)
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64, unique=True)
    hash = models.CharField(max_length=64, unique=True)
    chains = models.PositiveIntegerField()
    events = models.PositiveBigIntegerField()
    # {"type", "seq", "at", "events", "chains": {chain: {"seq", "hash", "digest"}}}
    canonical = models.BinaryField()
    # Nullable so that SQLite adds the columns in place: a NOT NULL column makes Django
    # rebuild the table, which would drop its append-only triggers.
    signature = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001
    key_id = models.CharField(max_length=16, null=True, blank=True)  # noqa: DJ001

    class Meta:
        db_table = "decisions_trailcheckpoint"
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

pgtrigger.register(*EVENT_TRIGGERS)(TrailEvent)
pgtrigger.register(*CHECKPOINT_TRIGGERS)(TrailCheckpoint)
pgtrigger.register(*HEAD_TRIGGERS)(TrailHead)


class Quarantine(models.Model):
    """A record a background run set aside after it failed, so the run went on with the rest.

    Operational, not part of the record: no hash chain, no triggers. One row per run and
    subject ("graph.feed.trail_follow", "trail_event:123"): a subject failing again updates its
    row (`count`, `last_seen`, the newest `reason`) instead of adding one, so a record that
    fails on every periodic run cannot grow the table, and "is it quarantined?" is one probe
    of the unique index. Written by `trail.quarantine`; operators read it in the admin.
    """

    run = models.CharField(max_length=64)  # the task or loop that met it
    subject = models.CharField(max_length=200)  # what it met: "<kind>:<id>"
    reason = models.TextField()  # the exception's class and message, truncated
    count = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    last_seen = models.DateTimeField()

    class Meta:
        ordering = ["-last_seen"]
        constraints = [
            models.UniqueConstraint(fields=["run", "subject"], name="trail_quarantine_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.run} {self.subject} x{self.count}"
