"""A change's events reach the trail in two statements per chain on PostgreSQL: the lock
of the chain's head, then one statement that inserts the events and moves the head. Every
change of a zone's lane takes that lock in turn (bench/bench_pipeline.py), so what runs
under it is what bounds a lane; what is written is exactly what three statements wrote:
the chain verifies, the head names the last event, each event has its id."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from trail import ledger, verify
from trail.models import TrailEvent, TrailHead

LANE = "G1.U1.P1.Z1/3"


def _change(kinds: list[str]) -> tuple[list[TrailEvent], list[str]]:
    """One change appending `kinds` to the lane: its events and the statements asked."""
    with CaptureQueriesContext(connection) as asked, transaction.atomic(), ledger.holding(LANE):
        made = [
            ledger.append(kind=kind, chain=LANE, actor=None, payload={"n": n})
            for n, kind in enumerate(kinds)
        ]
    return made, [q["sql"] for q in asked.captured_queries]


@pytest.mark.django_db
def test_a_change_s_events_are_written_under_the_lock_in_one_statement_and_verify() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's write lock is the database's: an insert and an update")
    _change(["decision.proposed"])  # the lane's first change creates its head
    made, asked = _change(["decision.validated", "decision.approved", "decision.executed"])

    writes = [sql for sql in asked if not sql.startswith(("SAVEPOINT", "RELEASE"))]
    assert len(writes) == 2, "\n".join(writes)
    assert "FOR UPDATE" in writes[0]
    stored = list(TrailEvent.objects.filter(chain=LANE).order_by("seq"))
    assert [e.seq for e in stored] == [1, 2, 3, 4]
    assert [e.pk for e in made] == [e.pk for e in stored[1:]]
    assert [e.hash for e in made] == [e.hash for e in stored[1:]]
    head = TrailHead.objects.get(chain=LANE)
    assert (head.seq, head.hash) == (4, stored[-1].hash)
    assert verify.verify_database().intact


@pytest.mark.django_db
def test_an_append_outside_a_change_is_stored_with_its_id_and_moves_the_head() -> None:
    with transaction.atomic():
        first = ledger.append(kind="decision.proposed", chain=LANE, actor=None, payload={})
        second = ledger.append(kind="decision.validated", chain=LANE, actor=None, payload={})
    stored = TrailEvent.objects.get(pk=second.pk)
    assert (stored.seq, stored.prev_hash, stored.hash) == (2, first.hash, second.hash)
    assert TrailHead.objects.get(chain=LANE).hash == second.hash
    assert verify.verify_database().intact
