# A decision keeps the graph evidence its agent submitted (0011), like the rest of what was
# asked: validation reads the column to make the gate stricter, so a straight-SQL edit before
# then would change the verdict unseen. The decision_fixed trigger of 0009 gains the column;
# PostgreSQL: pgtrigger's compiled form of decisions.models.DECISION_TRIGGERS, frozen here as
# 0009 froze it (installing replaces the trigger and its function); SQLite: the twin, dropped
# and created again. Backwards, 0009's form comes back, so that 0011 can drop the column.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from pgtrigger.compiler import Trigger, UpsertTriggerSql

PG_BEFORE = Trigger(name='decision_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."question" IS DISTINCT FROM (NEW."question") OR OLD."answer" IS DISTINCT FROM (NEW."answer") OR OLD."zone" IS DISTINCT FROM (NEW."zone") OR OLD."agent" IS DISTINCT FROM (NEW."agent") OR OLD."proposed_by_id" IS DISTINCT FROM (NEW."proposed_by_id") OR OLD."bundle_id" IS DISTINCT FROM (NEW."bundle_id") OR OLD."idempotency_key" IS DISTINCT FROM (NEW."idempotency_key") OR OLD."request_hash" IS DISTINCT FROM (NEW."request_hash"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='ff16163cab393e3b5cc3a6861a2236da5a14f690', operation='UPDATE', pgid='pgtrigger_decision_fixed_9231d', table='decisions_decision', when='BEFORE'))
PG_AFTER = Trigger(name='decision_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."question" IS DISTINCT FROM (NEW."question") OR OLD."answer" IS DISTINCT FROM (NEW."answer") OR OLD."zone" IS DISTINCT FROM (NEW."zone") OR OLD."agent" IS DISTINCT FROM (NEW."agent") OR OLD."proposed_by_id" IS DISTINCT FROM (NEW."proposed_by_id") OR OLD."bundle_id" IS DISTINCT FROM (NEW."bundle_id") OR OLD."idempotency_key" IS DISTINCT FROM (NEW."idempotency_key") OR OLD."request_hash" IS DISTINCT FROM (NEW."request_hash") OR OLD."graph_evidence" IS DISTINCT FROM (NEW."graph_evidence"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='69dab502125077965d086ff59fc589d76ca685c8', operation='UPDATE', pgid='pgtrigger_decision_fixed_9231d', table='decisions_decision', when='BEFORE'))

FIXED_BEFORE = (
    "question", "answer", "zone", "agent", "proposed_by_id", "bundle_id", "idempotency_key",
    "request_hash",
)
FIXED_AFTER = (*FIXED_BEFORE, "graph_evidence")


def _sqlite_decision_fixed(fields: tuple[str, ...]) -> str:
    """The SQLite twin, word for word as 0009's `_sqlite_guard` writes it."""
    changed = " OR ".join(f'OLD."{name}" IS NOT NEW."{name}"' for name in fields)
    return (
        f"CREATE TRIGGER decision_fixed BEFORE UPDATE ON decisions_decision WHEN ({changed}) "
        "BEGIN SELECT RAISE(ABORT, 'governance rows are append-only: cannot update "
        "decisions_decision'); END;"
    )


def _replace(pg: Trigger, fields: tuple[str, ...], schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        # Interpolated SQL: params=None keeps the '%' of RAISE from being read as a placeholder.
        schema_editor.execute(pg.install_sql, params=None)
    elif vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS decision_fixed;", params=None)
        schema_editor.execute(_sqlite_decision_fixed(fields), params=None)


def freeze_graph_evidence(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _replace(PG_AFTER, FIXED_AFTER, schema_editor)


def thaw_graph_evidence(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _replace(PG_BEFORE, FIXED_BEFORE, schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ("decisions", "0011_decision_graph_evidence"),
    ]

    operations = [migrations.RunPython(freeze_graph_evidence, thaw_graph_evidence)]
