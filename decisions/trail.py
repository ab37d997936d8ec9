"""The trail service: append hash-chained events, export them, verify them, seal them.

Chains. An event belongs to the chain of the zone-tree node it concerns, named by that
node's coordinate ("G1" for a galaxy's policy, "G1.U1.P1.Z1" for a zone's). A decision's
events go to one of its zone's LANES lanes, chains named "G1.U1.P1.Z1/3", the lane its id
picks. Within a chain, events are numbered by `seq` from 1 and each hash covers the previous
one, so an export scoped to some zones is a set of whole chains that verify on their own;
with one global chain a scoped export would be full of gaps.

Why lanes: an append holds its chain's head row until its transaction commits, so one chain
takes one change at a time. With one chain per zone a busy zone's submissions and
validations queued on that row (bench/bench_pipeline.py: workers spent three quarters of a
validation waiting for it). A decision's own events stay in one chain, in order.

Appends run inside the caller's transaction (the state change and its event commit together
or not at all) and lock the chain's head row, so a chain never forks.

Verification hashes the stored canonical bytes and never re-serialises (`decisions.chain`).
It checks every chain, the head rows, the chain of checkpoints, and every chain against the
latest (or a named) checkpoint: that is what catches a tail, a chain or a decision's events
deleted and the rest re-linked, none of which the hash chain alone can see.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby
from operator import itemgetter
from typing import Any, Final

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError, connection, transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from coordinates.coordinate import Coordinate, CoordinateError, parse
from decisions.chain import (
    CHECKPOINT_PREFIX,
    GENESIS,
    ChainLink,
    ChainVerdict,
    canonical_json,
    chain_hash,
    verify_against_checkpoint,
    verify_chain,
)
from decisions.models import DecisionEvent, TrailCheckpoint, TrailHead

BODY_VERSION: Final = 1
SYSTEM: Final = "system"
EXPORT_FORMAT: Final = "maria-trail-export-v1"
CHECKPOINT_TYPE: Final = "trail.checkpoint"

_KIND = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+")
# Rows per fetch on the fast path: measured best here between 2,000 and 20,000.
_FAST_BATCH = 5000

Actor = AbstractBaseUser | AnonymousUser | str | None


class TrailError(Exception):
    """The trail cannot do what was asked (bad input, a race with another checkpoint)."""


class TrailBroken(TrailError):
    """Verification failed; `report` says where."""

    def __init__(self, report: TrailReport) -> None:
        super().__init__(report.summary())
        self.report = report


# --- names ------------------------------------------------------------------------------


# Lanes of a zone's decision events (see the module docstring). Lane names stay valid if
# this changes; only new decisions would be spread differently.
LANES: Final = 8
LANE_MARK: Final = "/"


def chain_for(coordinate: Coordinate | str) -> str:
    """The chain of events about `coordinate`: its zone-tree node; an agent's is its zone."""
    coord = parse(coordinate) if isinstance(coordinate, str) else coordinate
    return str(coord.zone() if coord.depth > 4 else coord)


def lane_for(zone: Coordinate | str, decision_id: int) -> str:
    """The chain of a decision's events: the lane of its zone that its id picks."""
    return f"{chain_for(zone)}{LANE_MARK}{decision_id % LANES}"


def chain_node(chain: str) -> str:
    """The zone-tree node a chain belongs to: a lane's zone, or the chain itself."""
    return chain.partition(LANE_MARK)[0]


def _check_chain(chain: str) -> None:
    node, mark, lane = chain.partition(LANE_MARK)
    if chain_for(node) != node or (mark and not (lane.isdecimal() and str(int(lane)) == lane)):
        raise ValueError(
            f"chain {chain!r} is not a zone-tree coordinate (G.U.P.Z at most), "
            f"or such a zone's lane ({node}{LANE_MARK}N)"
        )


def actor_label(actor: Actor) -> str:
    """Who acted, as the trail records it: a username, "agent:<coord>" or "system"."""
    if actor is None:
        return SYSTEM
    if isinstance(actor, str):
        if not actor.strip():
            raise ValueError("an actor label must not be empty")
        return actor
    if not actor.is_authenticated:
        raise ValueError("an anonymous user cannot act on the trail")
    # Agents act through service accounts named "agent:<coordinate>" (coordinates.services).
    return actor.get_username()


def content_hash(content: Mapping[str, Any] | bytes) -> str:
    """sha256 hex of bytes, or of a mapping's canonical JSON: what payloads carry for bundles
    and reports instead of their content."""
    data = content if isinstance(content, bytes) else canonical_json(content)
    return hashlib.sha256(data).hexdigest()


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


# --- append ------------------------------------------------------------------------------


_HEADS = TrailHead._meta.db_table


def lock(chain: str) -> TrailHead:
    """Take `chain`'s append lock until the current transaction ends; return its head.

    PostgreSQL: a row lock on the head (appends to other chains do not wait). SQLite: the
    INSERT below takes the database write lock. On SQLite call this first in a transaction
    that reads before it writes: a write after a read fails at once with "database is locked"
    when another connection committed in between (a stale read snapshot cannot be upgraded),
    while a write as the first statement waits out the busy timeout instead. A transaction
    that appends to several chains should lock them in sorted order, so two cannot deadlock.
    """
    if not connection.in_atomic_block:
        raise TrailError("trail.lock() holds until commit: call it inside transaction.atomic()")
    heads = TrailHead.objects.select_for_update()
    if connection.vendor == "postgresql":
        # The head exists but for a chain's first event: one statement, as the lock is the
        # step that every change of a lane takes in turn. In SQL: through the ORM it cost
        # 2.5 times the CPU (0.59 against 0.23 ms with its transaction, measured here).
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT seq, hash, updated_at FROM {_HEADS} WHERE chain = %s FOR UPDATE",  # noqa: S608 - our table's name
                [chain],
            )
            row = cursor.fetchone()
        if row is not None:
            return TrailHead(chain=chain, seq=row[0], hash=row[1], updated_at=row[2])
    # A write first: it creates a new chain's head (ON CONFLICT DO NOTHING, so two first
    # appends cannot both create it) and on SQLite takes the write lock before any read.
    TrailHead.objects.bulk_create([TrailHead(chain=chain)], ignore_conflicts=True)
    return heads.get(chain=chain)


# A change's events, each with the payload its body will carry, waiting to be linked and
# written together when the change's `holding` block ends.
_Held = list[tuple[DecisionEvent, Mapping[str, Any]]]

# .chains: chain -> its held events while a `holding` block is open in this thread
_holding = threading.local()


def _held(chain: str) -> _Held | None:
    chains: dict[str, _Held] | None = getattr(_holding, "chains", None)
    return None if chains is None else chains.setdefault(chain, [])


@contextlib.contextmanager
def holding(chain: str) -> Iterator[None]:
    """Collect the events a change (one state change, inside the caller's transaction)
    appends, to `chain` or any other chain (a decision's lane), and write each chain's
    together at the end of the block: one head read, one multi-row insert and one head
    update per chain, instead of all three for every event.

    On PostgreSQL the chains' locks are taken only then, at the end, in sorted order: a
    zone's changes do their own work side by side (each holds its decision's row) and take
    turns only for the few statements that link and write their events. On SQLite `chain`
    is locked at once, because the first write must take the database's write lock (see
    `lock`); SQLite runs one writer at a time anyway.

    Events appended inside the block are linked (seq, time, hashes) only when it ends.
    An exception leaving the block discards them (the caller's transaction rolls back
    anyway). Don't catch an exception raised by an append inside the block and go on.
    """
    if getattr(_holding, "chains", None) is not None:  # held further out: it writes them
        yield
        return
    _check_chain(chain)
    if connection.vendor != "postgresql":
        lock(chain)
    chains: dict[str, _Held] = {}
    _holding.chains = chains
    try:
        yield
    finally:
        _holding.chains = None
    for name in sorted(chains):  # every one holds at least one event
        _write_held(name, chains[name])


def _write_held(chain: str, events: _Held) -> None:
    head = lock(chain)
    seq, prev = head.seq, head.hash
    now = timezone.now()  # under the lock, so times never go backwards along a chain
    for event, payload in events:
        seq, prev = seq + 1, _seal(event, seq + 1, prev, now, payload)
    DecisionEvent.objects.bulk_create([event for event, _ in events])
    _advance(chain, seq, prev, now)


def _advance(chain: str, seq: int, head_hash: str, now: datetime) -> None:
    """Move the locked head of `chain` to its newest event."""
    if connection.vendor == "postgresql":  # in SQL, as in `lock`
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {_HEADS} SET seq = %s, hash = %s, updated_at = %s WHERE chain = %s",  # noqa: S608 - our table's name
                [seq, head_hash, now, chain],
            )
        return
    TrailHead.objects.filter(chain=chain).update(seq=seq, hash=head_hash, updated_at=now)


def append(
    *,
    kind: str,
    chain: str,
    actor: Actor,
    payload: Mapping[str, Any],
    reason: str = "",
    decision_id: int | None = None,
) -> DecisionEvent:
    """Append one event to `chain`, inside the caller's transaction when there is one.

    The canonical body is {v, kind, chain, seq, decision, actor, reason, at, payload}; keep
    payloads small and put the content hash of anything big (`content_hash`). Inside a
    `holding` block for the chain the event is linked and written when the block ends.
    """
    if not _KIND.fullmatch(kind) or len(kind) > 64:
        raise ValueError(f"event kind {kind!r} must look like 'decision.approved'")
    if not isinstance(reason, str):
        raise TypeError("reason must be a string")
    _check_chain(chain)
    label = actor_label(actor)
    # Refuse a payload that is not JSON before anything is written: an error after the
    # writes below would leave the caller's transaction unusable.
    canonical_json(payload)
    event = DecisionEvent(
        chain=chain, kind=kind, decision_id=decision_id, actor=label, reason=reason
    )
    held = _held(chain)
    if held is not None:
        held.append((event, dict(payload)))
        return event
    # No savepoint: if anything here fails, the caller's whole change must roll back anyway.
    with transaction.atomic(savepoint=False):
        head = lock(chain)
        now = timezone.now()  # under the lock, so times never go backwards along a chain
        _seal(event, head.seq + 1, head.hash, now, payload)
        event.save(force_insert=True)
        _advance(chain, event.seq, event.hash, now)
    return event


def _seal(
    event: DecisionEvent, seq: int, prev: str, now: datetime, payload: Mapping[str, Any]
) -> str:
    """Link `event` after (seq - 1, prev): its number, time, exact body bytes and hash (the
    hash returned). Call it under the chain's lock."""
    body = canonical_json(
        {
            "v": BODY_VERSION,
            "kind": event.kind,
            "chain": event.chain,
            "seq": seq,
            "decision": event.decision_id,
            "actor": event.actor,
            "reason": event.reason,
            "at": _iso(now),
            "payload": dict(payload),
        }
    )
    event.seq, event.created_at, event.canonical = seq, now, body
    event.prev_hash, event.hash = prev, chain_hash(prev, body)
    return event.hash


# --- verification results ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CheckpointEntry:
    """One chain as a checkpoint sealed it."""

    seq: int
    hash: str
    digest: str


@dataclass(frozen=True, slots=True)
class ChainResult:
    chain: str
    verdict: ChainVerdict
    first_seq: int = 1  # where verification began; > 1 for a `since` export
    trusted_prev: str | None = None  # the prev_hash taken on trust at a mid-chain start
    checkpoint: CheckpointEntry | None = None
    checkpoint_checked: bool = False
    digest: str | None = None  # digest of all the chain's hashes, when asked for
    event_id: int | None = None  # the broken event's id, when it exists

    @property
    def intact(self) -> bool:
        return self.verdict.intact

    def describe(self) -> str:
        verdict = self.verdict
        if not verdict.intact:
            where = f"event {verdict.broken_seq}"
            if self.event_id is not None:
                where += f" (id {self.event_id})"
            return f"chain {self.chain}: BROKEN at {where}: {verdict.reason}"
        if verdict.head_seq is None:
            span = "no events"
        else:
            span = f"events {self.first_seq}..{verdict.head_seq}"
        text = f"chain {self.chain}: intact, {span}, head {verdict.head_hash[:16]}"
        if self.trusted_prev is not None:
            text += (
                f"; starts mid-chain at seq {self.first_seq}, trusting its prev_hash "
                f"{self.trusted_prev[:16]}"
            )
        if self.checkpoint is not None:
            if self.checkpoint_checked:
                text += f"; matches the checkpoint at seq {self.checkpoint.seq}"
            else:
                text += (
                    f"; the checkpoint at seq {self.checkpoint.seq} lies before this export "
                    "and cannot be checked"
                )
        return text


@dataclass(slots=True)
class TrailReport:
    source: str
    chains: list[ChainResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # not tied to one event
    checkpoint: str = "no checkpoint"
    seconds: float = 0.0

    @property
    def events(self) -> int:
        return sum(result.verdict.checked for result in self.chains)

    @property
    def intact(self) -> bool:
        return not self.problems and all(result.intact for result in self.chains)

    @property
    def broken(self) -> list[ChainResult]:
        return [result for result in self.chains if not result.intact]

    def lines(self) -> list[str]:
        return [
            f"source: {self.source}",
            f"checkpoint: {self.checkpoint}",
            *(result.describe() for result in self.chains),
            *(f"PROBLEM: {problem}" for problem in self.problems),
        ]

    def summary(self) -> str:
        rate = f"{self.events / self.seconds:,.0f} events/s" if self.seconds > 0 else "-"
        counts = (
            f"{len(self.chains)} chains, {self.events:,} events in {self.seconds:.2f} s ({rate})"
        )
        if self.intact:
            return f"trail intact: {counts}"
        first = self.broken[0].describe() if self.broken else f"PROBLEM: {self.problems[0]}"
        return (
            f"trail BROKEN ({len(self.broken)} chains, {len(self.problems)} other problems); "
            f"first: {first}; {counts}"
        )


# --- verifying one chain (any source) ----------------------------------------------------


def _verify_segment(
    chain: str,
    links: Iterable[ChainLink],
    *,
    checkpoint: CheckpointEntry | None,
    trusted_start: bool = False,
    digest_all: bool = False,
) -> ChainResult:
    """Verify one chain's links in seq order against its checkpoint.

    A full chain starts at seq 1 from GENESIS. With `trusted_start` (a `since` export) it may
    start later, taking its first prev_hash on trust; the checkpoint is then checked by the
    hash at its seq, when the segment reaches back that far.
    """
    iterator = iter(links)
    first = next(iterator, None)
    if first is None:
        if checkpoint is None:
            return ChainResult(chain, ChainVerdict(True, 0, None, GENESIS))
        verdict = verify_against_checkpoint([], checkpoint.seq, checkpoint.digest)
        return ChainResult(chain, verdict, checkpoint=checkpoint, checkpoint_checked=True)

    digest = hashlib.sha256() if digest_all else None
    seen: dict[str, str] = {}

    def stream() -> Iterator[ChainLink]:
        # Side effects while the verifier pulls: the all-hashes digest for a new checkpoint,
        # and the hash at the checkpoint's seq for a mid-chain start.
        link: ChainLink | None = first
        watch = checkpoint.seq if checkpoint is not None else -1
        while link is not None:
            if link.seq == watch:
                seen["at_checkpoint"] = link.hash
            yield link
            link = next(iterator, None)

    def digesting(source: Iterator[ChainLink]) -> Iterator[ChainLink]:
        if digest is None:
            yield from source
            return
        # The same digest as chain.checkpoint_digest, fed as the verifier walks.
        digest.update(CHECKPOINT_PREFIX)
        for link in source:
            digest.update(link.hash.encode())
            yield link

    mid_chain = trusted_start and first.seq > 1
    if not mid_chain:
        if checkpoint is not None:
            verdict = verify_against_checkpoint(
                digesting(stream()), checkpoint.seq, checkpoint.digest
            )
            return ChainResult(
                chain,
                verdict,
                checkpoint=checkpoint,
                checkpoint_checked=True,
                digest=digest.hexdigest() if digest is not None and verdict.intact else None,
            )
        verdict = verify_chain(digesting(stream()))
        return ChainResult(
            chain,
            verdict,
            digest=digest.hexdigest() if digest is not None and verdict.intact else None,
        )

    verdict = verify_chain(stream(), prev_hash=first.prev_hash, first_seq=first.seq)
    checked = False
    if verdict.intact and checkpoint is not None and checkpoint.seq >= first.seq:
        checked = True
        head = verdict.head_seq or 0
        if head < checkpoint.seq:
            verdict = ChainVerdict(
                False,
                verdict.checked,
                verdict.head_seq,
                verdict.head_hash,
                broken_seq=head + 1,
                reason=(
                    f"truncated: the export ends at event {head} but the checkpoint covers "
                    f"events 1..{checkpoint.seq}"
                ),
            )
        elif seen.get("at_checkpoint") != checkpoint.hash:
            verdict = ChainVerdict(
                False,
                verdict.checked,
                verdict.head_seq,
                verdict.head_hash,
                broken_seq=checkpoint.seq,
                reason="hash differs from the checkpoint's (the chain was re-linked)",
            )
    return ChainResult(
        chain,
        verdict,
        first_seq=first.seq,
        trusted_prev=first.prev_hash,
        checkpoint=checkpoint,
        checkpoint_checked=checked,
    )


@dataclass(slots=True)
class _Mismatch:
    seq: int | None = None
    reason: str = ""


def _columns_checked(
    rows: Iterable[tuple[ChainLink, Mapping[str, Any]]], mismatch: _Mismatch
) -> Iterator[ChainLink]:
    """Pass links through, recording the first whose indexed columns disagree with its body."""
    for link, columns in rows:
        if mismatch.seq is None and columns:
            try:
                body = json.loads(link.canonical)
            except ValueError:
                body = None  # not JSON at all: the hash check reports it as altered
            if isinstance(body, dict):
                for name, value in columns.items():
                    if body.get(name) != value:
                        mismatch.seq = link.seq
                        mismatch.reason = (
                            f"the {name!r} column says {value!r} but the hashed body says "
                            f"{body.get(name)!r}"
                        )
                        break
        yield link


def _with_mismatch(result: ChainResult, mismatch: _Mismatch) -> ChainResult:
    """Report a column mismatch when it comes before any break in the chain itself."""
    if mismatch.seq is None:
        return result
    broken = result.verdict.broken_seq
    if not result.intact and broken is not None and broken <= mismatch.seq:
        return result
    verdict = ChainVerdict(
        False,
        result.verdict.checked,
        result.verdict.head_seq,
        result.verdict.head_hash,
        broken_seq=mismatch.seq,
        reason=mismatch.reason,
    )
    return ChainResult(
        result.chain,
        verdict,
        first_seq=result.first_seq,
        trusted_prev=result.trusted_prev,
        checkpoint=result.checkpoint,
        checkpoint_checked=result.checkpoint_checked,
    )


# --- checkpoints -------------------------------------------------------------------------


def checkpoint_entries(checkpoint: TrailCheckpoint) -> dict[str, CheckpointEntry]:
    chains: dict[str, Any] = checkpoint.body.get("chains", {})
    return {
        name: CheckpointEntry(int(entry["seq"]), str(entry["hash"]), str(entry["digest"]))
        for name, entry in chains.items()
    }


def _checkpoint_problems(checkpoints: Sequence[TrailCheckpoint]) -> list[str]:
    """Checkpoints form their own hash chain: altered, removed or re-ordered ones show."""
    verdict = verify_chain(cp.link for cp in checkpoints)
    if verdict.intact:
        return []
    return [f"checkpoint {verdict.broken_seq}: {verdict.reason}"]


def _pick_checkpoint(
    checkpoints: Sequence[TrailCheckpoint], wanted: str | None
) -> tuple[TrailCheckpoint | None, list[str]]:
    if wanted is None:
        return (checkpoints[-1] if checkpoints else None), []
    for checkpoint in checkpoints:
        if checkpoint.hash == wanted:
            return checkpoint, []
    return None, [
        f"no checkpoint has the hash {wanted} (it was removed, altered, or never existed)"
    ]


# --- verifying the database --------------------------------------------------------------


def verify_database(
    *,
    deep: bool = False,
    checkpoint_hash: str | None = None,
    digests: bool = False,
    fast: bool | None = None,
) -> TrailReport:
    """Verify every chain in the database, its head row and the chosen checkpoint.

    `deep` also decodes every body and checks the indexed columns agree with it (slow).
    `digests` computes each chain's all-hashes digest (for a new checkpoint). `fast` forces
    the PostgreSQL fast path on or off (default: on PostgreSQL unless `deep`).
    """
    started = time.perf_counter()
    report = TrailReport(source="database")
    use_fast = (connection.vendor == "postgresql" and not deep) if fast is None else fast
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and outermost:
            # One snapshot for checkpoints, heads and events alike, so appends committed
            # while this runs cannot look like a mismatch between them.
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        checkpoints = list(TrailCheckpoint.objects.order_by("seq"))
        report.problems.extend(_checkpoint_problems(checkpoints))
        chosen, problems = _pick_checkpoint(checkpoints, checkpoint_hash)
        report.problems.extend(problems)
        entries: dict[str, CheckpointEntry] = {}
        if chosen is not None:
            try:
                entries = checkpoint_entries(chosen)
            except (ValueError, KeyError, TypeError, AttributeError):
                # Its hash already fails the checkpoint chain; nothing in it can be used.
                report.problems.append(f"checkpoint {chosen.seq}: unreadable body")
            report.checkpoint = (
                f"#{chosen.seq} of {chosen.created_at.isoformat()}, {chosen.chains} chains, "
                f"{chosen.events} events, hash {chosen.hash}"
            )
        heads = {head.chain: head for head in TrailHead.objects.all()}

        if use_fast:
            results = _verify_fast(entries, digests=digests)
        else:
            results = _verify_reference(entries, deep=deep, digests=digests)
        for chain in sorted(set(entries) - set(results)):
            # A chain the checkpoint sealed that has no events left at all.
            results[chain] = _verify_segment(chain, [], checkpoint=entries[chain])
        for chain in sorted(set(heads) - set(results)):
            results[chain] = _verify_segment(chain, [], checkpoint=None)
        report.chains = [
            _with_event_id(_check_head(results[chain], heads.get(chain)))
            for chain in sorted(results)
        ]
    report.seconds = time.perf_counter() - started
    return report


def _with_event_id(result: ChainResult) -> ChainResult:
    seq = result.verdict.broken_seq
    if result.intact or seq is None:
        return result
    event_id = (
        DecisionEvent.objects.filter(chain=result.chain, seq=seq)
        .values_list("pk", flat=True)
        .first()
    )
    if event_id is None:
        return result
    return ChainResult(
        result.chain,
        result.verdict,
        first_seq=result.first_seq,
        trusted_prev=result.trusted_prev,
        checkpoint=result.checkpoint,
        checkpoint_checked=result.checkpoint_checked,
        digest=result.digest,
        event_id=event_id,
    )


def _check_head(result: ChainResult, head: TrailHead | None) -> ChainResult:
    """The head row moves with every append: a head past the last event means the tail was
    deleted (caught even before the next checkpoint)."""
    if not result.intact:
        return result
    verdict = result.verdict
    last_seq = verdict.head_seq or 0
    if head is None:
        if last_seq == 0:
            return result
        reason = "the chain has no head row (deleted?)"
        broken = last_seq
    elif head.seq == last_seq and head.hash == verdict.head_hash:
        return result
    elif head.seq > last_seq:
        missing = (
            f"event {head.seq} is"
            if head.seq == last_seq + 1
            else f"events {last_seq + 1}..{head.seq} are"
        )
        reason = f"truncated: the head row records seq {head.seq} but {missing} missing"
        broken = last_seq + 1
    else:
        reason = f"the head row records seq {head.seq} {head.hash[:16]}, not the last event"
        broken = last_seq
    return ChainResult(
        result.chain,
        ChainVerdict(False, verdict.checked, verdict.head_seq, verdict.head_hash, broken, reason),
        first_seq=result.first_seq,
        checkpoint=result.checkpoint,
        checkpoint_checked=result.checkpoint_checked,
    )


def _db_links(chain: str | None, *, deep: bool) -> Iterator[tuple[str, ChainLink, dict[str, Any]]]:
    rows = DecisionEvent.objects.order_by("chain", "seq")
    if chain is not None:
        rows = rows.filter(chain=chain)
    fields = ["chain", "seq", "prev_hash", "hash", "canonical"]
    if deep:
        fields += ["kind", "decision_id", "actor", "reason", "created_at"]
    for row in rows.values_list(*fields).iterator(chunk_size=5000):
        link = ChainLink(row[1], row[2], row[3], bytes(row[4]))
        columns: dict[str, Any] = {}
        if deep:
            columns = {
                "chain": row[0],
                "seq": row[1],
                "kind": row[5],
                "decision": row[6],
                "actor": row[7],
                "reason": row[8],
                "at": _iso(row[9]),
            }
        yield row[0], link, columns


def _verify_reference(
    entries: Mapping[str, CheckpointEntry],
    *,
    deep: bool,
    digests: bool,
    only: str | None = None,
) -> dict[str, ChainResult]:
    """The plain walk (decisions.chain) over every chain, or `only` one."""
    results: dict[str, ChainResult] = {}
    for chain, group in groupby(_db_links(only, deep=deep), key=itemgetter(0)):
        mismatch = _Mismatch()
        links = _columns_checked(((link, columns) for _, link, columns in group), mismatch)
        result = _verify_segment(chain, links, checkpoint=entries.get(chain), digest_all=digests)
        # Drain what the verifier left after a break, so groupby moves to the next chain.
        for _ in links:
            pass
        results[chain] = _with_mismatch(result, mismatch) if deep else result
    return results


# --- the PostgreSQL fast path ------------------------------------------------------------
#
# The reference walk builds a ChainLink per event and takes ~7 s per million. The fast path
# reads every event in id order in one streamed query and checks the raw values as they come
# (chain.BatchChecker): no Python object per event beyond what the hashing needs.
#
# Id order, not (chain, seq): it reads the table in the order it was written (0.6 s instead
# of 2 s per million rows on the server when zones interleave), and within a chain it is seq
# order, because a chain's next append takes its id only after the previous append
# committed (the head lock). A chain whose rows come otherwise, or fail any check, is walked
# again in seq order by the reference verifier, which names the event and the reason: the
# fast path only has to be exactly as strict, never as eloquent (tests compare the two on
# every kind of tampering).
#
# What costs, per million events, measured here (bench/bench_trail.py): hashing ~0.5 CPU-s in
# this process but ~1.3 on the server (sha256 through SQL sets OpenSSL up per call); a row
# per event costs this process ~0.8 CPU-s in tuples and generator steps alone, so the server
# packs the events of each block of _FAST_BLOCK ids into one row of arrays (in id order),
# which costs it less than that saves here. With every event hashed here this process is the
# slower side, so the server hashes the events with id % 8 < _SERVER_EIGHTHS and sends
# prev_hash and their 32-byte digest instead of prev_hash + canonical. Streaming (libpq 17+)
# lets the server send the next blocks while these are checked, where a server-side cursor
# waits for each FETCH; text columns arrive as their UTF-8 bytes, exactly the bytes hashed.
#
# A digest from the server is still a real verification: the server recomputes sha256 from
# the stored prev_hash and canonical bytes, and this process compares it with the stored hash
# and checks every seq, link, head row and checkpoint itself; a failing chain goes to the
# reference walk, which hashes here again. What it does not guard against is someone who
# controls the database server itself: against that, `verify_trail --file` checks an export
# offline with nothing but Python's hashlib, and `verify_trail --deep` hashes every event here.

_SERVER_EIGHTHS = 1
_FAST_BLOCK = 256  # ids per block
_FAST_SQL = (
    # Each block starts at the first id at or after the end of the previous one, so a gap in
    # the ids costs one index probe.
    "WITH RECURSIVE start (first) AS (SELECT min(id) FROM {table} UNION ALL "
    "SELECT (SELECT min(id) FROM {table} WHERE id >= start.first + {block}) "
    "FROM start WHERE start.first IS NOT NULL) "
    "SELECT block.* FROM start, LATERAL (SELECT array_agg(chain) AS chains, "
    "array_agg(seq) AS seqs, array_agg(hash) AS hashes, array_agg(hashed) AS hashed, "
    "array_agg(digest) AS digests FROM (SELECT chain, seq, hash, "
    # prev_hash + canonical to hash here, or prev_hash alone with the server's digest; NULL,
    # failing the chain, when prev_hash is not 64 bytes (so `hashed` starts with exactly it).
    "CASE WHEN octet_length(prev_hash) = 64 THEN CASE WHEN id % 8 < {eighths} "
    "THEN pg_catalog.convert_to(prev_hash, 'UTF8') "
    "ELSE pg_catalog.convert_to(prev_hash, 'UTF8') || canonical END END AS hashed, "
    "CASE WHEN id % 8 < {eighths} THEN "
    "pg_catalog.sha256(pg_catalog.convert_to(prev_hash, 'UTF8') || canonical) END AS digest "
    "FROM {table} WHERE id >= start.first AND id < start.first + {block} ORDER BY id"
    ") AS event) AS block WHERE start.first IS NOT NULL"
)


@contextlib.contextmanager
def _fast_rows(batch_size: int) -> Iterator[Iterator[Iterable[tuple[Any, ...]]]]:
    """The events as (chain, seq, hash, hashed, digest) rows, a block at a time, in id order,
    text columns as their UTF-8 bytes."""
    import psycopg
    from psycopg.types.string import ByteaBinaryLoader

    connection.ensure_connection()
    raw = connection.connection
    table = connection.ops.quote_name(DecisionEvent._meta.db_table)
    sql = _FAST_SQL.format(eighths=int(_SERVER_EIGHTHS), block=int(_FAST_BLOCK), table=table)
    blocks_per_batch = max(1, batch_size // _FAST_BLOCK)
    if not psycopg.capabilities.has_stream_chunked():  # libpq before 17
        with raw.cursor(name="maria_trail_verify", binary=True) as server_cursor:
            _text_as_bytes(server_cursor, ByteaBinaryLoader)
            server_cursor.itersize = blocks_per_batch
            server_cursor.execute(sql)
            yield (zip(*block, strict=True) for block in server_cursor)
        return
    with psycopg.Cursor(raw) as cursor:
        _text_as_bytes(cursor, ByteaBinaryLoader)
        # One query the server answers without pausing: it sends the next blocks while these
        # are checked (the socket buffers them), where a server-side cursor would wait for
        # each FETCH.
        blocks: Any = cursor.stream(sql, binary=True, size=blocks_per_batch)
        try:
            yield (zip(*block, strict=True) for block in blocks)
        finally:
            blocks.close()  # stopped early: psycopg cancels the query and drains it


def _text_as_bytes(cursor: Any, loader: type) -> None:
    for text in ("varchar", "text"):
        cursor.adapters.register_loader(text, loader)


def _verify_fast(
    entries: Mapping[str, CheckpointEntry], *, digests: bool
) -> dict[str, ChainResult]:
    import psycopg
    from django.db import DatabaseError

    from decisions.chain import BatchChecker

    checker = BatchChecker(
        {chain.encode(): entry.seq for chain, entry in entries.items()}, digest_all=digests
    )
    # A million rows would trigger full collections that scan every live object again and
    # again; nothing here makes reference cycles.
    collecting = gc.isenabled()
    gc.disable()
    try:
        # A savepoint: ids edited to the ends of bigint make the block arithmetic overflow,
        # and then the reference walk, which needs no ids, checks the whole trail instead.
        with transaction.atomic(), _fast_rows(_FAST_BATCH) as batches:
            for rows in batches:
                checker.feed(rows)
    except (DatabaseError, psycopg.Error):
        return _verify_reference(entries, deep=False, digests=digests)
    finally:
        if collecting:
            gc.enable()

    results: dict[str, ChainResult] = {}
    for name, progress in checker.chains.items():
        chain = name.decode()
        checkpoint = entries.get(chain)
        head_seq = progress.head_seq
        short_of_checkpoint = checkpoint is not None and (
            head_seq < checkpoint.seq or progress.checkpoint_digest != checkpoint.digest
        )
        if progress.failed or short_of_checkpoint:
            # Let the reference walk say where and why.
            walked = _verify_reference(entries, deep=False, digests=digests, only=chain)
            results[chain] = walked[chain]
            continue
        digest = progress.digest.hexdigest() if digests and progress.digest is not None else None
        results[chain] = ChainResult(
            chain,
            ChainVerdict(True, head_seq, head_seq or None, progress.prev.decode()),
            checkpoint=checkpoint,
            checkpoint_checked=checkpoint is not None,
            digest=digest,
        )
    return results


# --- sealing -----------------------------------------------------------------------------


def checkpoint_create() -> TrailCheckpoint:
    """Verify the whole trail, then seal every chain's head and all-hashes digest.

    Refuses (TrailBroken) when the trail does not verify: a checkpoint must never bless a
    tampered trail. Events appended while this runs are left for the next checkpoint.
    """
    report = verify_database(digests=True)
    if not report.intact:
        raise TrailBroken(report)
    chains: dict[str, dict[str, Any]] = {}
    for result in report.chains:
        if result.verdict.head_seq is None:
            continue  # a head row with no events yet: nothing to seal
        if result.digest is None:  # unreachable: digests were asked for
            raise TrailError(f"no digest for chain {result.chain}")
        chains[result.chain] = {
            "seq": result.verdict.head_seq,
            "hash": result.verdict.head_hash,
            "digest": result.digest,
        }
    with transaction.atomic():
        previous = TrailCheckpoint.objects.order_by("-seq").first()
        seq = previous.seq + 1 if previous is not None else 1
        prev_hash = previous.hash if previous is not None else GENESIS
        now = timezone.now()
        events = sum(int(entry["seq"]) for entry in chains.values())
        body = canonical_json(
            {
                "type": CHECKPOINT_TYPE,
                "seq": seq,
                "at": _iso(now),
                "events": events,
                "chains": chains,
            }
        )
        try:
            # A savepoint, so a lost race leaves the caller's transaction usable.
            with transaction.atomic():
                return TrailCheckpoint.objects.create(
                    seq=seq,
                    created_at=now,
                    prev_hash=prev_hash,
                    hash=chain_hash(prev_hash, body),
                    chains=len(chains),
                    events=events,
                    canonical=body,
                )
        except IntegrityError as error:
            # seq and prev_hash are unique: another run sealed the same predecessor first.
            raise TrailError("another checkpoint was sealed at the same time") from error


# --- export ------------------------------------------------------------------------------


def _scope_filter(scopes: Sequence[Coordinate] | None) -> Q:
    if scopes is None:
        return Q()
    condition = Q(pk__in=[])
    for scope in scopes:
        condition |= (
            Q(chain=str(scope))
            | Q(chain__startswith=f"{scope}.")
            | Q(chain__startswith=f"{scope}{LANE_MARK}")
        )
    return condition


def _in_scope(chain: str, scopes: Sequence[Coordinate] | None) -> bool:
    if scopes is None:
        return True
    try:
        coordinate = parse(chain_node(chain))
    except CoordinateError:
        return False
    return any(scope.covers(coordinate) for scope in scopes)


def _json_line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def export_lines(
    *,
    scopes: Sequence[Coordinate] | None,
    since: datetime | None = None,
    label: str = "",
) -> Iterator[str]:
    """The trail as JSON Lines: a header, the latest checkpoint's entries for these chains,
    every event (whole chains, or each chain from its first event at or after `since`), an
    end line with the count. `verify_trail --file` checks it without the database.

    Each event line carries chain, seq, prev_hash, hash and `canonical`: the exact hashed
    bytes as a JSON string, which round-trips to the same UTF-8 bytes.
    """
    yield _json_line(
        {
            "type": "trail.export",
            "format": EXPORT_FORMAT,
            "scope": label or "all",
            "since": _iso(since) if since is not None else None,
            "exported_at": _iso(timezone.now()),
        }
    )
    checkpoint = TrailCheckpoint.objects.order_by("-seq").first()
    if checkpoint is not None:
        for chain, entry in sorted(checkpoint_entries(checkpoint).items()):
            if _in_scope(chain, scopes):
                yield _json_line(
                    {
                        "type": CHECKPOINT_TYPE,
                        "checkpoint": checkpoint.seq,
                        "checkpoint_hash": checkpoint.hash,
                        "created_at": _iso(checkpoint.created_at),
                        "chain": chain,
                        "seq": entry.seq,
                        "hash": entry.hash,
                        "digest": entry.digest,
                    }
                )
    rows = DecisionEvent.objects.filter(_scope_filter(scopes))
    if since is not None:
        first_since = (
            DecisionEvent.objects.filter(chain=OuterRef("chain"), created_at__gte=since)
            .order_by("seq")
            .values("seq")[:1]
        )
        # From each chain's first event since then on, so every chain is one whole segment.
        rows = rows.filter(seq__gte=Subquery(first_since))
    count = 0
    columns = ("pk", "chain", "seq", "prev_hash", "hash", "canonical")
    for pk, chain, seq, prev_hash, event_hash, canonical in (
        rows.order_by("chain", "seq").values_list(*columns).iterator(chunk_size=2000)
    ):
        count += 1
        yield _json_line(
            {
                "type": "trail.event",
                "id": pk,
                "chain": chain,
                "seq": seq,
                "prev_hash": prev_hash,
                "hash": event_hash,
                # Stored bytes are UTF-8 by construction; bytes that are not were tampered
                # with, and any stand-in fails the hash check just as well.
                "canonical": bytes(canonical).decode("utf-8", errors="replace"),
            }
        )
    yield _json_line({"type": "trail.end", "events": count})


# --- verifying an export -----------------------------------------------------------------


class _ExportFormatError(ValueError):
    pass


def _records(lines: Iterable[str | bytes]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            raise _ExportFormatError(f"line {number}: not JSON ({error})") from None
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            raise _ExportFormatError(f"line {number}: not a trail record")
        yield number, record


def _event_link(number: int, record: Mapping[str, Any]) -> tuple[str, ChainLink]:
    try:
        chain, seq = record["chain"], record["seq"]
        prev_hash, event_hash, canonical = record["prev_hash"], record["hash"], record["canonical"]
    except KeyError as error:
        raise _ExportFormatError(f"line {number}: event without {error.args[0]!r}") from None
    if not (
        isinstance(chain, str)
        and isinstance(seq, int)
        and isinstance(prev_hash, str)
        and isinstance(event_hash, str)
        and isinstance(canonical, str)
    ):
        raise _ExportFormatError(f"line {number}: an event field has the wrong type")
    # surrogatepass: escapes such as \ud800 in a doctored file become bytes that simply fail
    # the hash check instead of stopping the verifier.
    body = canonical.encode("utf-8", errors="surrogatepass")
    return chain, ChainLink(seq, prev_hash, event_hash, body)


@dataclass(slots=True)
class _ExportState:
    trusted_start: bool = False
    entries: dict[str, CheckpointEntry] = field(default_factory=dict)
    checkpoints: set[tuple[Any, Any]] = field(default_factory=set)
    events: int = 0
    end: dict[str, Any] | None = None


def _export_events(
    records: Iterator[tuple[int, dict[str, Any]]], state: _ExportState
) -> Iterator[tuple[str, ChainLink, dict[str, Any]]]:
    """Event links in file order; checkpoint and end records update `state` on the way."""
    for number, record in records:
        kind = record["type"]
        if state.end is not None:
            raise _ExportFormatError(f"line {number}: records after the end line")
        if kind == CHECKPOINT_TYPE:
            if state.events:
                raise _ExportFormatError(f"line {number}: a checkpoint after the events")
            try:
                entry = CheckpointEntry(
                    int(record["seq"]), str(record["hash"]), str(record["digest"])
                )
                state.entries[str(record["chain"])] = entry
            except (KeyError, TypeError, ValueError):
                raise _ExportFormatError(f"line {number}: malformed checkpoint") from None
            state.checkpoints.add((record.get("checkpoint"), record.get("checkpoint_hash")))
        elif kind == "trail.event":
            chain, link = _event_link(number, record)
            state.events += 1
            # The line's chain and seq are what the verifier groups and orders by; the body
            # is what was hashed. They must agree, or a renamed chain would verify.
            yield chain, link, {"chain": chain, "seq": link.seq}
        elif kind == "trail.end":
            state.end = record
        else:
            raise _ExportFormatError(f"line {number}: unknown record type {kind!r}")


def verify_export(lines: Iterable[str | bytes], *, source: str) -> TrailReport:
    """Verify a JSON Lines export offline (no database): every chain segment, the body's
    own chain and seq against the line's, the checkpoint entries it carries, and the end
    line's count (a cut-off file has none).

    A `since` export starts chains mid-way: their first prev_hash is taken on trust and the
    report says so. A full export must start every chain at seq 1. The checkpoint entries
    come from the server that made the export: compare the checkpoint hash in the report
    with one you kept.
    """
    started = time.perf_counter()
    report = TrailReport(source=source)
    state = _ExportState()
    records = _records(lines)
    done: set[str] = set()
    try:
        first = next(records, None)
        if first is None or first[1]["type"] != "trail.export":
            raise _ExportFormatError("line 1: not a trail export (no trail.export header)")
        header = first[1]
        if header.get("format") != EXPORT_FORMAT:
            raise _ExportFormatError(f"line 1: unknown format {header.get('format')!r}")
        state.trusted_start = header.get("since") is not None
        for chain, group in groupby(_export_events(records, state), key=itemgetter(0)):
            if chain in done:
                report.problems.append(f"chain {chain} appears in more than one place")
                for _ in group:
                    pass
                continue
            done.add(chain)
            mismatch = _Mismatch()
            links = _columns_checked(((link, cols) for _, link, cols in group), mismatch)
            result = _verify_segment(
                chain,
                links,
                checkpoint=state.entries.get(chain),
                trusted_start=state.trusted_start,
            )
            for _ in links:
                pass
            report.chains.append(_with_mismatch(result, mismatch))
        for chain in sorted(set(state.entries) - done):
            entry = state.entries[chain]
            if state.trusted_start:
                # Nothing happened in this chain since then: nothing to check it against.
                empty = ChainVerdict(True, 0, None, GENESIS)
                report.chains.append(ChainResult(chain, empty, checkpoint=entry))
            else:
                # A full export claims a checkpoint for a chain but carries none of its events.
                report.chains.append(_verify_segment(chain, [], checkpoint=entry))
        if len(state.checkpoints) > 1:
            report.problems.append("the export mixes entries of different checkpoints")
        elif state.checkpoints:
            number, checkpoint_hash = next(iter(state.checkpoints))
            report.checkpoint = f"#{number} hash {checkpoint_hash} (as the export states it)"
        if state.end is None:
            report.problems.append("the export has no end line (cut off?)")
        elif state.end.get("events") != state.events:
            report.problems.append(
                f"the end line counts {state.end.get('events')} events, "
                f"the export has {state.events}"
            )
    except _ExportFormatError as error:
        report.problems.append(str(error))
    report.chains.sort(key=lambda result: result.chain)
    report.seconds = time.perf_counter() - started
    return report
