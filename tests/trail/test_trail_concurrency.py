"""200 concurrent appends to one chain leave one consistent chain: seq 1..200, every link
intact, the head on the last event.

Threads in this process (40 connections, as many as PostgreSQL allows next to everyone
else), racing from the very first append, which also creates the chain's head. On SQLite the
test database is a file configured like `make run` (WAL, busy timeout, IMMEDIATE
transactions), so the writers queue for its write lock as they would there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, transaction

from tests.trail.test_trail_bypass import committed_trail  # noqa: F401
from trail import ledger, verify
from trail.chain import verify_chain
from trail.models import TrailEvent, TrailHead

CHAIN = "G1.U1.P1.Z1"
APPENDS = 200


def _race(threads: int, work: Callable[[int], None]) -> list[BaseException]:
    """Run work(0..threads-1) in threads that start together, each on its own connection;
    the errors they raised."""
    start = threading.Barrier(threads)
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            start.wait()
            work(worker)
        except BaseException as error:  # collected for the caller to assert on
            errors.append(error)
        finally:
            connection.close()

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return errors


@pytest.mark.usefixtures("committed_trail")
def test_concurrent_appends_leave_one_consistent_chain() -> None:
    threads, per_thread = 40, APPENDS // 40

    def work(worker: int) -> None:
        for k in range(per_thread):
            with transaction.atomic():
                ledger.append(
                    kind="test.concurrent",
                    chain=CHAIN,
                    actor=f"worker{worker}",
                    payload={"worker": worker, "k": k},
                )

    assert _race(threads, work) == []
    events = list(TrailEvent.objects.filter(chain=CHAIN).order_by("seq"))
    assert [e.seq for e in events] == list(range(1, APPENDS + 1))
    assert verify_chain(e.link for e in events).intact
    head = TrailHead.objects.get(chain=CHAIN)
    assert (head.seq, head.hash) == (APPENDS, events[-1].hash)
    assert verify.verify_database().intact


@pytest.mark.usefixtures("committed_trail")
def test_concurrent_changes_over_a_zone_s_lanes_neither_deadlock_nor_fork() -> None:
    # Each change appends to two lanes, in an order of its own, and to the zone's chain; the
    # held events are written at the block's end chain by chain in sorted order, so two
    # changes never wait on each other's lanes in opposite orders (a deadlock here).
    threads, changes = 24, 5
    lanes = [ledger.lane_for(CHAIN, n) for n in range(ledger.LANES)]

    def work(worker: int) -> None:
        for k in range(changes):
            first = lanes[(worker + k) % len(lanes)]
            second = lanes[(3 * worker + k + 1) % len(lanes)]
            order = (second, first) if worker % 2 else (first, second)
            with transaction.atomic(), ledger.holding(CHAIN):
                for chain in (*order, CHAIN):
                    ledger.append(
                        kind="test.concurrent",
                        chain=chain,
                        actor=f"worker{worker}",
                        payload={"worker": worker, "k": k},
                    )

    assert _race(threads, work) == []
    events = TrailEvent.objects.filter(kind="test.concurrent")
    assert events.count() == threads * changes * 3
    for chain in {CHAIN, *lanes}:
        seqs = list(events.filter(chain=chain).order_by("seq").values_list("seq", flat=True))
        assert seqs == list(range(1, len(seqs) + 1)), chain
        assert TrailHead.objects.get(chain=chain).seq == len(seqs)
    assert verify.verify_database().intact
