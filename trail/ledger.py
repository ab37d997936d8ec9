"""Appending to the ledger: chains and lanes, the append lock, `holding` and `append`.

Verifying is in `trail.verify`, sealing in `trail.checkpoints`, exporting in `trail.export`.

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

Verification hashes the stored canonical bytes and never re-serialises (`trail.chain`).
It checks every chain, the head rows, the chain of checkpoints, and every chain against the
latest (or a named) checkpoint: that is what catches a tail, a chain or a decision's events
deleted and the rest re-linked, none of which the hash chain alone can see.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import connection, transaction
from django.utils import timezone

from coordinates.coordinate import Coordinate, parse
from trail.chain import (
    canonical_json,
    chain_hash,
)
from trail.models import TrailEvent, TrailHead
from trail.signals import events_committed

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


def iso_time(moment: datetime) -> str:
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
_Held = list[tuple[TrailEvent, Mapping[str, Any]]]

# .chains: chain -> its held events while a `holding` block is open in this thread
_holding = threading.local()


def _held(chain: str) -> _Held | None:
    chains: dict[str, _Held] | None = getattr(_holding, "chains", None)
    return None if chains is None else chains.setdefault(chain, [])


@contextlib.contextmanager
def holding(chain: str) -> Iterator[None]:
    """Collect the events a change (one state change, inside the caller's transaction)
    appends, to `chain` or any other chain (a decision's lane), and write each chain's
    together at the end of the block: per chain, one locking head read and one statement
    that inserts the events and moves the head (`_write`; on SQLite an insert and an
    update), instead of all of them for every event.

    On PostgreSQL the chains' locks are taken only then, at the end, in sorted order: a
    zone's changes do their own work side by side (each holds its decision's row) and take
    turns only for the two statements that link and write their events. On SQLite `chain`
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
    _announce({event.kind for events in chains.values() for event, _ in events})


def _write_held(chain: str, events: _Held) -> None:
    head = lock(chain)
    seq, prev = head.seq, head.hash
    now = timezone.now()  # under the lock, so times never go backwards along a chain
    for event, payload in events:
        seq, prev = seq + 1, _seal(event, seq + 1, prev, now, payload)
    _write([event for event, _ in events], chain, seq, prev, now)


# The columns an append writes (all but the id, which the database gives).
_EVENT_FIELDS = [f for f in TrailEvent._meta.concrete_fields if not f.primary_key]
_EVENTS = TrailEvent._meta.db_table
_INSERT_AND_ADVANCE = (
    "WITH written AS (INSERT INTO {events} ({columns}) VALUES {rows} RETURNING id),"
    " head AS (UPDATE {heads} SET seq = %s, hash = %s, updated_at = %s WHERE chain = %s)"
    " SELECT id FROM written"
)


def _write(events: list[TrailEvent], chain: str, seq: int, head_hash: str, now: datetime) -> None:
    """Insert the sealed `events` and move the locked head of `chain` to the last of them.

    PostgreSQL: one statement for both (a data-modifying WITH), so a lane's lock is held
    for two statements per change (this and `lock`'s), not three. Both run in the caller's
    transaction, as before: a failure rolls back the events and the head together.
    """
    if connection.vendor != "postgresql":
        TrailEvent.objects.bulk_create(events)
        _advance(chain, seq, head_hash, now)
        return
    row = "({})".format(", ".join(["%s"] * len(_EVENT_FIELDS)))
    sql = _INSERT_AND_ADVANCE.format(
        events=_EVENTS,
        columns=", ".join(connection.ops.quote_name(f.column) for f in _EVENT_FIELDS),
        rows=", ".join([row] * len(events)),
        heads=_HEADS,
    )
    values = [
        f.get_db_prep_save(getattr(event, f.attname), connection)
        for event in events
        for f in _EVENT_FIELDS
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, seq, head_hash, now, chain])
        ids = [row_id for (row_id,) in cursor.fetchall()]
    # Rows come back in the order of VALUES, as Django's bulk_create relies on too.
    for event, row_id in zip(events, ids, strict=True):
        event.pk = row_id
        event._state.adding, event._state.db = False, connection.alias


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
) -> TrailEvent:
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
    event = TrailEvent(chain=chain, kind=kind, decision_id=decision_id, actor=label, reason=reason)
    held = _held(chain)
    if held is not None:
        held.append((event, dict(payload)))
        return event
    # No savepoint: if anything here fails, the caller's whole change must roll back anyway.
    with transaction.atomic(savepoint=False):
        head = lock(chain)
        now = timezone.now()  # under the lock, so times never go backwards along a chain
        _seal(event, head.seq + 1, head.hash, now, payload)
        _write([event], chain, event.seq, event.hash, now)
    _announce({kind})
    return event


def _announce(kinds: set[str]) -> None:
    """Send `events_committed` once the caller's transaction commits (trail.signals)."""
    if kinds:
        committed = frozenset(kinds)
        transaction.on_commit(lambda: events_committed.send(sender=TrailEvent, kinds=committed))


def _seal(event: TrailEvent, seq: int, prev: str, now: datetime, payload: Mapping[str, Any]) -> str:
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
            "at": iso_time(now),
            "payload": dict(payload),
        }
    )
    event.seq, event.created_at, event.canonical = seq, now, body
    event.prev_hash, event.hash = prev, chain_hash(prev, body)
    return event.hash
