"""Trail tooling for tests: bypass the protective triggers (the trail's and the evidence's),
and empty the database so that a transactional test's flush (which the triggers would
refuse) can run.

`triggers_bypassed()` does what an attacker with database rights would: PostgreSQL
`session_replication_role = replica` (superuser; ordinary triggers do not fire), SQLite drops
the triggers and recreates them afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management import call_command
from django.db import connection, transaction

TRAIL_TABLES = ("decisions_decisionevent", "decisions_trailcheckpoint", "decisions_trailhead")
EVIDENCE_TABLES = (
    "evidence_evidencebundle",
    "evidence_validationreport",
    "evidence_documentversion",
    "evidence_paragraph",
    "evidence_document",
)
# Every governance row is append-only or on the chain (docs/architecture.md).
GOVERNANCE_TABLES = (
    "decisions_decision",
    "decisions_approval",
    "decisions_claimverdict",
    "decisions_comment",
    "decisions_rereview",
    "decisions_periodicreview",
    "coordinates_zonepolicyversion",
    "coordinates_roleassignment",
    "evidence_zonecalibration",
    "evidence_knowledgeconflict",
)
PROTECTED_TABLES = TRAIL_TABLES + EVIDENCE_TABLES + GOVERNANCE_TABLES


@contextmanager
def triggers_bypassed() -> Iterator[None]:
    """Inside, the protective triggers do not fire (on this connection)."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = replica")
            try:
                yield
            finally:
                cursor.execute("SET LOCAL session_replication_role = origin")
            return
        names = ", ".join(f"'{table}'" for table in PROTECTED_TABLES)
        cursor.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({names})"  # noqa: S608
        )
        saved = cursor.fetchall()
        for name, _ in saved:
            cursor.execute(f'DROP TRIGGER "{name}"')
        try:
            yield
        finally:
            for _, sql in saved:
                cursor.execute(sql)


def empty_trail() -> None:
    """Delete every trail row, triggers bypassed."""
    with triggers_bypassed(), connection.cursor() as cursor:
        for table in TRAIL_TABLES:
            cursor.execute(f"DELETE FROM {table}")  # noqa: S608


def empty_database() -> None:
    """Empty every table, triggers bypassed: for a transactional test's teardown, before
    Django's own flush, which then finds nothing to refuse."""
    with triggers_bypassed():
        call_command("flush", interactive=False, verbosity=0, inhibit_post_migrate=True)
