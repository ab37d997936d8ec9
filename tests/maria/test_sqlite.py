"""The embedded database (SQLite, as `make run` configures it) under concurrent requests.

The ASGI server's threads and eager Celery tasks write to one SQLite file at once. A
transaction that reads and then writes must wait for the other writer, never fail with
"database is locked" (which a reviewer would see as a 500).
"""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection, transaction

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _sqlite_only() -> None:
    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        pytest.skip("the embedded database; PostgreSQL locks rows")


def test_the_embedded_database_is_a_wal_file() -> None:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA database_list")
        files = {name: path for _, name, path in cursor.fetchall()}
    assert files["main"].endswith(".sqlite3")  # a file, not shared-cache memory


def test_a_transaction_that_read_before_another_write_committed_still_writes() -> None:
    Group.objects.create(name="reviewers")
    read_done, errors = threading.Event(), []

    def other_writer() -> None:
        try:
            read_done.wait(10)
            Group.objects.create(name="auditors")  # commits at once (autocommit)
        except BaseException as error:  # asserted on in the test's thread
            errors.append(error)
        finally:
            connection.close()

    other = threading.Thread(target=other_writer)
    other.start()
    # given a transaction that has read (as a transition reads the decision it changes)
    with transaction.atomic():
        assert Group.objects.filter(name="reviewers").exists()
        read_done.set()
        # when another connection tries to write meanwhile (it waits for this one's lock;
        # in a deferred transaction it would commit first and this write would then fail)
        other.join(0.5)
        # then this transaction's own write goes through
        Group.objects.filter(name="reviewers").update(name="senior reviewers")
    other.join(30)
    # and so does the other one, after it
    assert errors == []
    assert sorted(Group.objects.values_list("name", flat=True)) == ["auditors", "senior reviewers"]
