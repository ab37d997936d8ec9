"""The PostgreSQL fast path of `verify_trail`: the server hashes its share of the events, this
process the rest, batches are checked whole; every tampering still gets the reference walk's
verdict, whatever the share and wherever the batches are cut."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection, transaction

from tests.trail.test_trail import OTHER, ZONE, _relink, event, fill
from tests.trail.test_trail_bypass import triggers_bypassed
from trail import checkpoints, verify
from trail.chain import BatchChecker
from trail.models import TrailEvent, TrailHead

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture(
    params=[(0, 256, True), (3, 256, True), (3, 3, True), (8, 5, True), (3, 3, False)],
    ids=[
        "all hashed here",
        "3 in 8 by the server",
        "3 in 8, blocks of 3 ids",
        "all by the server, blocks of 5 ids",
        "server-side cursor, blocks of 3 ids",
    ],
)
def fast_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The share of events the server hashes, the ids per block (one block a batch when
    small), and whether the blocks are streamed (libpq 17+) or fetched from a server-side
    cursor."""
    eighths, block, streamed = request.param
    monkeypatch.setattr(verify, "_SERVER_EIGHTHS", eighths)
    monkeypatch.setattr(verify, "_FAST_BLOCK", block)
    if block < 10:
        monkeypatch.setattr(verify, "_FAST_BATCH", block)
    if not streamed:
        monkeypatch.setattr(psycopg.capabilities, "has_stream_chunked", lambda: False)


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every row the fast path hands to the checker."""
    rows: list[tuple[Any, ...]] = []
    feed = BatchChecker.feed

    def spy(self: BatchChecker, batch: Iterable[tuple[Any, ...]]) -> None:
        batch = list(batch)
        rows.extend(batch)
        feed(self, batch)

    monkeypatch.setattr(BatchChecker, "feed", spy)
    return rows


def _tamperings() -> Iterator[tuple[str, Callable[[], None]]]:
    def flip() -> None:
        target = event(ZONE, 7)
        body = bytes(target.canonical).replace(b"step", b"stop", 1)
        TrailEvent.objects.filter(pk=target.pk).update(canonical=body)

    def hash_column() -> None:
        TrailEvent.objects.filter(chain=ZONE, seq=5).update(hash="f" * 64)

    def upper_hash() -> None:
        target = event(ZONE, 6)
        TrailEvent.objects.filter(pk=target.pk).update(hash=target.hash.upper())

    def short_prev() -> None:
        # a prev_hash one character short, its last character moved into the body
        target = event(ZONE, 5)
        body = target.prev_hash[-1].encode() + bytes(target.canonical)
        TrailEvent.objects.filter(pk=target.pk).update(
            prev_hash=target.prev_hash[:-1], canonical=body
        )

    def deleted() -> None:
        TrailEvent.objects.filter(chain=ZONE, seq=3).delete()

    def swapped_pair() -> None:
        third, fourth = event(ZONE, 3), event(ZONE, 4)
        TrailEvent.objects.filter(pk=third.pk).update(seq=1000)
        TrailEvent.objects.filter(pk=fourth.pk).update(seq=3)
        TrailEvent.objects.filter(pk=third.pk).update(seq=4)

    def swapped_contents() -> None:
        second, third = event(ZONE, 2), event(ZONE, 3)
        fields = ("prev_hash", "hash", "canonical")
        TrailEvent.objects.filter(pk=second.pk).update(hash="0" * 64)
        TrailEvent.objects.filter(pk=third.pk).update(
            **{name: getattr(second, name) for name in fields}
        )
        TrailEvent.objects.filter(pk=second.pk).update(
            **{name: getattr(third, name) for name in fields}
        )

    def wrong_seq() -> None:
        TrailEvent.objects.filter(chain=ZONE, seq=9).update(seq=20)

    def moved() -> None:
        # another chain's event moved to the end of this one
        TrailEvent.objects.filter(chain=OTHER, seq=2).update(chain=ZONE, seq=13)
        TrailHead.objects.filter(chain=ZONE).update(seq=13)

    def truncated() -> None:
        kept = event(ZONE, 10)
        TrailEvent.objects.filter(chain=ZONE, seq__gt=10).delete()
        TrailHead.objects.filter(chain=ZONE).update(seq=10, hash=kept.hash)

    def relinked() -> None:
        _relink(ZONE, lambda stored: stored.seq not in {4, 5})

    def head_hash() -> None:
        TrailHead.objects.filter(chain=ZONE).update(hash="1" * 64)

    yield from {
        "flip": flip,
        "hash_column": hash_column,
        "upper_hash": upper_hash,
        "short_prev": short_prev,
        "deleted": deleted,
        "swapped_pair": swapped_pair,
        "swapped_contents": swapped_contents,
        "wrong_seq": wrong_seq,
        "moved": moved,
        "truncated": truncated,
        "relinked": relinked,
        "head_hash": head_hash,
    }.items()


@pytest.mark.usefixtures("fast_path")
@pytest.mark.parametrize(("name", "tamper"), list(_tamperings()))
def test_every_tampering_gets_the_reference_verdict(name: str, tamper: Callable[[], None]) -> None:
    # given two interleaved chains sealed by a checkpoint, then one edit behind the triggers
    for _ in range(3):
        fill(ZONE, 4)
        fill(OTHER, 2)
    checkpoints.checkpoint_create()
    with triggers_bypassed():
        tamper()
    # when the trail is verified by the fast path and by the reference walk
    fast, reference = verify.verify_database(), verify.verify_database(fast=False)
    # then both name the same event for the same reason
    assert [r.describe() for r in fast.chains] == [r.describe() for r in reference.chains]
    assert not fast.intact
    assert any(r.chain == ZONE for r in fast.broken)


@pytest.mark.usefixtures("fast_path")
def test_an_intact_trail_gets_the_reference_verdict_and_digests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given two chains sealed by a checkpoint, then three more events
    for _ in range(3):
        fill(ZONE, 4)
        fill(OTHER, 2)
    checkpoints.checkpoint_create()
    fill(ZONE, 3)
    # when the fast path verifies it, never handing a chain to the reference walk
    walk = verify._verify_reference
    walked: list[str | None] = []

    def spy(*args: Any, only: str | None = None, **kwargs: Any) -> dict[str, verify.ChainResult]:
        walked.append(only)
        return walk(*args, only=only, **kwargs)

    monkeypatch.setattr(verify, "_verify_reference", spy)
    fast = verify.verify_database(digests=True)
    assert walked == []
    # then it reaches the reference walk's verdict and digests
    reference = verify.verify_database(digests=True, fast=False)
    assert fast.intact
    assert [(r.describe(), r.digest) for r in fast.chains] == [
        (r.describe(), r.digest) for r in reference.chains
    ]


def test_the_server_hashes_its_share_and_sends_the_other_bodies(
    fed: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given 24 events
    fill(ZONE, 16)
    fill(OTHER, 8)
    monkeypatch.setattr(verify, "_SERVER_EIGHTHS", 3)
    # when the fast path reads them
    assert verify.verify_database().intact
    # then each came once, text as bytes: with the digest of its stored bytes and prev_hash
    # alone when its id % 8 < 3, with prev_hash + canonical to hash here otherwise
    stored = {(row.chain.encode(), row.seq): row for row in TrailEvent.objects.order_by("id")}
    assert sorted(row[:2] for row in fed) == sorted(stored)
    server = 0
    for chain, seq, event_hash, hashed, digest in fed:
        row = stored[chain, seq]
        prev, body = row.prev_hash.encode(), bytes(row.canonical)
        assert event_hash == row.hash.encode()
        if row.id % 8 < 3:
            server += 1
            assert (hashed, digest) == (prev, hashlib.sha256(prev + body).digest())
        else:
            assert (hashed, digest) == (prev + body, None)
    assert 0 < server < len(fed)


@pytest.mark.usefixtures("fast_path")
def test_ids_left_unused_by_rolled_back_appends_are_skipped_over() -> None:
    # given events, then appends rolled back (their ids stay used), then more events
    fill(ZONE, 3)
    with contextlib.suppress(RuntimeError), transaction.atomic():
        fill(OTHER, 7)
        raise RuntimeError("rolled back")
    fill(ZONE, 3)
    # then every event is read and the chain verifies
    (result,) = verify.verify_database().chains
    assert (result.chain, result.intact, result.verdict.checked) == (ZONE, True, 6)


@pytest.mark.parametrize("edge", [9_223_372_036_854_775_807, -9_223_372_036_854_775_807])
def test_an_id_moved_to_the_end_of_bigint_is_left_to_the_reference_walk(edge: int) -> None:
    # given a trail, one event's id moved (ids are not hashed: the chain is still intact)
    fill(ZONE, 6)
    with triggers_bypassed():
        TrailEvent.objects.filter(pk=event(ZONE, 4).pk).update(id=edge)
    # then the block arithmetic overflows on the server and the reference walk answers
    fast, reference = verify.verify_database(), verify.verify_database(fast=False)
    assert fast.intact
    assert [r.describe() for r in fast.chains] == [r.describe() for r in reference.chains]


@pytest.mark.usefixtures("fast_path")
def test_the_fast_path_leaves_the_connection_usable() -> None:
    fill(ZONE, 3)
    assert verify.verify_database().intact
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_cursors WHERE name = 'maria_trail_verify'")
        assert cursor.fetchone() == (0,)
    assert TrailEvent.objects.count() == 3


def test_a_check_that_raises_stops_the_read_and_leaves_the_connection_usable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given more events than one batch, and a check that fails on the first batch
    fill(ZONE, 30)
    monkeypatch.setattr(verify, "_FAST_BLOCK", 4)
    monkeypatch.setattr(verify, "_FAST_BATCH", 4)

    def broken(self: BatchChecker, rows: list[tuple[Any, ...]]) -> None:
        raise RuntimeError("check failed")

    monkeypatch.setattr(BatchChecker, "feed", broken)
    # when the fast path runs, the error comes through
    with pytest.raises(RuntimeError, match="check failed"):
        verify.verify_database()
    # and the connection still answers (the stream was cancelled and drained)
    assert TrailEvent.objects.count() == 30
