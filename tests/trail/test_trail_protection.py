"""The trail is append-only in the database: UPDATE, DELETE (and TRUNCATE on PostgreSQL) are
refused by triggers, through the ORM and through raw SQL alike."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import DatabaseError, connection, transaction

from trail import checkpoints, ledger
from trail.models import TrailCheckpoint, TrailEvent, TrailHead

pytestmark = pytest.mark.django_db

ZONE = "G1.U1.P1.Z1"
REFUSED = r"append-only|Cannot (update or )?delete"


def _append(n: int = 2) -> TrailEvent:
    last = None
    for i in range(n):
        last = ledger.append(kind="test.event", chain=ZONE, actor="system", payload={"i": i})
    assert last is not None
    return last


def _refused(action: Callable[[], object]) -> None:
    # A savepoint per attempt: on PostgreSQL a failed statement spoils the transaction.
    with pytest.raises(DatabaseError, match=REFUSED), transaction.atomic():
        action()


def _sql(statement: str) -> Callable[[], object]:
    def run() -> None:
        with connection.cursor() as cursor:
            cursor.execute(statement)

    return run


def test_orm_updates_of_an_event_are_refused() -> None:
    event = _append()
    event.actor = "mallory"
    _refused(event.save)
    _refused(lambda: TrailEvent.objects.update(reason="rewritten"))
    _refused(lambda: TrailEvent.objects.filter(pk=event.pk).update(canonical=b"{}"))


def test_orm_deletes_of_an_event_are_refused() -> None:
    event = _append()
    _refused(event.delete)
    _refused(TrailEvent.objects.all().delete)
    assert TrailEvent.objects.count() == 2


def test_raw_sql_updates_and_deletes_of_events_are_refused() -> None:
    _append()
    _refused(_sql("UPDATE decisions_decisionevent SET actor = 'mallory'"))
    _refused(_sql("DELETE FROM decisions_decisionevent WHERE seq = 2"))
    _refused(_sql("DELETE FROM decisions_decisionevent"))
    assert TrailEvent.objects.count() == 2


def test_checkpoints_cannot_be_updated_or_deleted() -> None:
    _append()
    checkpoint = checkpoints.checkpoint_create()
    _refused(lambda: TrailCheckpoint.objects.update(events=0))
    _refused(checkpoint.delete)
    _refused(_sql("UPDATE decisions_trailcheckpoint SET hash = 'x'"))
    _refused(_sql("DELETE FROM decisions_trailcheckpoint"))


def test_heads_move_with_appends_but_cannot_be_deleted() -> None:
    _append()
    _refused(TrailHead.objects.all().delete)
    _refused(_sql("DELETE FROM decisions_trailhead"))
    # the update every append makes is allowed
    assert _append(1).seq == 3
    assert TrailHead.objects.get(chain=ZONE).seq == 3


@pytest.mark.postgres
@pytest.mark.parametrize(
    "table", ["decisions_decisionevent", "decisions_trailcheckpoint", "decisions_trailhead"]
)
def test_truncate_is_refused_on_postgresql(table: str) -> None:
    _append()
    checkpoints.checkpoint_create()
    _refused(_sql(f"TRUNCATE {table} CASCADE"))
    assert TrailEvent.objects.count() == 2


@pytest.mark.postgres
def test_truncating_an_empty_trail_is_allowed_so_test_flushes_work() -> None:
    # Django's flush truncates every table; an empty trail has nothing to lose.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("TRUNCATE decisions_decisionevent, decisions_trailhead")


@pytest.mark.postgres
def test_the_postgresql_triggers_are_the_pgtrigger_ones_registered_on_the_models() -> None:
    import pgtrigger

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'decisions_decisionevent'::regclass"
            " AND NOT tgisinternal"
        )
        installed = {name for (name,) in cursor.fetchall()}
    registered = {
        trigger.get_pgid(model) for model, trigger in pgtrigger.registered() if model is TrailEvent
    }
    assert installed == registered
    assert len(installed) == 2
