"""Tamper tooling for the trail tests, and proof that it puts the protection back.

`triggers_bypassed()` does what an attacker with database rights would: PostgreSQL
`session_replication_role = replica` (superuser; ordinary triggers do not fire), SQLite drops
the triggers and recreates them afterwards. `empty_trail()` lets a transactional test's
teardown flush run: Django's flush deletes (SQLite) or truncates (PostgreSQL) every table,
which the triggers refuse once the trail has rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connection, transaction

from tests.trail_support import TRAIL_TABLES, empty_trail, triggers_bypassed
from trail import checkpoints, ledger
from trail.models import TrailCheckpoint, TrailEvent, TrailHead

__all__ = ["TRAIL_TABLES", "empty_trail", "triggers_bypassed"]


@pytest.fixture
def committed_trail(transactional_db: None) -> Iterator[None]:
    """Real commits (transactional tests); the trail is emptied, triggers bypassed, before
    Django's flush, which the triggers would refuse. Import it into a test module to use it."""
    yield
    empty_trail()


pytestmark = pytest.mark.django_db


def _append() -> None:
    ledger.append(kind="test.event", chain="G1", actor="system", payload={"n": 1})


def test_the_bypass_lets_a_row_change_and_then_protects_it_again() -> None:
    # given an event
    _append()
    # when it is changed with the triggers bypassed
    with triggers_bypassed(), connection.cursor() as cursor:
        cursor.execute("UPDATE decisions_decisionevent SET actor = 'mallory'")
    # then the change stuck, and afterwards the table refuses changes again
    assert TrailEvent.objects.get().actor == "mallory"
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE decisions_decisionevent SET actor = 'eve'")


def test_empty_trail_removes_events_heads_and_checkpoints() -> None:
    _append()
    checkpoints.checkpoint_create()
    empty_trail()
    assert not TrailEvent.objects.exists()
    assert not TrailHead.objects.exists()
    assert not TrailCheckpoint.objects.exists()
