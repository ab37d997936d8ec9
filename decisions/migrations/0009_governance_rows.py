# Generated for issue 28 point 1: every governance row is append-only or on the chain
# (docs/architecture.md). PostgreSQL: the triggers compiled by django-pgtrigger, frozen here as
# its own migrations would (registered beside the models); SQLite: plain triggers, the twins.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from pgtrigger.compiler import Trigger, UpsertTriggerSql

PG_TRIGGERS = [
    Trigger(name='decision_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='3fa4d690a20b24ec153740c763f473e3e01a2c89', operation='DELETE', pgid='pgtrigger_decision_no_delete_33c4b', table='decisions_decision', when='BEFORE')),
    Trigger(name='decision_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."question" IS DISTINCT FROM (NEW."question") OR OLD."answer" IS DISTINCT FROM (NEW."answer") OR OLD."zone" IS DISTINCT FROM (NEW."zone") OR OLD."agent" IS DISTINCT FROM (NEW."agent") OR OLD."proposed_by_id" IS DISTINCT FROM (NEW."proposed_by_id") OR OLD."bundle_id" IS DISTINCT FROM (NEW."bundle_id") OR OLD."idempotency_key" IS DISTINCT FROM (NEW."idempotency_key") OR OLD."request_hash" IS DISTINCT FROM (NEW."request_hash"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='ff16163cab393e3b5cc3a6861a2236da5a14f690', operation='UPDATE', pgid='pgtrigger_decision_fixed_9231d', table='decisions_decision', when='BEFORE')),
    Trigger(name='decision_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM decisions_decision) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='4b4128c10dc27434697a581d1a175afe1598e7d0', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_decision_no_truncate_7fe9c', table='decisions_decision', when='BEFORE')),
    Trigger(name='approval_append_only', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='f2c2230e81c690f26435ea8aa3e079eec35d7eb0', operation='UPDATE OR DELETE', pgid='pgtrigger_approval_append_only_de76c', table='decisions_approval', when='BEFORE')),
    Trigger(name='approval_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM decisions_approval) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='c4e2f36300769728e9d80a0d0c7e9d202f3bb9c5', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_approval_no_truncate_f0c13', table='decisions_approval', when='BEFORE')),
    Trigger(name='claim_verdict_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='5e86fc8822a7380e0a1518a3b673ac3405d4c1a1', operation='DELETE', pgid='pgtrigger_claim_verdict_no_delete_a1380', table='decisions_claimverdict', when='BEFORE')),
    Trigger(name='claim_verdict_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."decision_id" IS DISTINCT FROM (NEW."decision_id") OR OLD."reviewer_id" IS DISTINCT FROM (NEW."reviewer_id") OR OLD."claim" IS DISTINCT FROM (NEW."claim") OR OLD."engine_supported" IS DISTINCT FROM (NEW."engine_supported") OR OLD."engine_probability" IS DISTINCT FROM (NEW."engine_probability") OR OLD."zone" IS DISTINCT FROM (NEW."zone"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='0c02d3962fd405f2c3767c0d46d40a11920932c9', operation='UPDATE', pgid='pgtrigger_claim_verdict_fixed_b3a5c', table='decisions_claimverdict', when='BEFORE')),
    Trigger(name='claim_verdict_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM decisions_claimverdict) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='28dfe2bb482b860c3cb1fee20e561736e0e292c9', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_claim_verdict_no_truncate_30dc3', table='decisions_claimverdict', when='BEFORE')),
    Trigger(name='comment_append_only', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='789375973ccc432ce36d6dd29091dfd70bde686d', operation='UPDATE OR DELETE', pgid='pgtrigger_comment_append_only_cafe8', table='decisions_comment', when='BEFORE')),
    Trigger(name='comment_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM decisions_comment) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='5826595f651acba4c1166be187970c43e57dba60', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_comment_no_truncate_25fc4', table='decisions_comment', when='BEFORE')),
    Trigger(name='rereview_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='c45a50b66a22231dc7e2ab690197bf96742f881a', operation='DELETE', pgid='pgtrigger_rereview_no_delete_98246', table='decisions_rereview', when='BEFORE')),
    Trigger(name='rereview_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."decision_id" IS DISTINCT FROM (NEW."decision_id") OR OLD."zone" IS DISTINCT FROM (NEW."zone") OR OLD."cause" IS DISTINCT FROM (NEW."cause") OR OLD."old_paragraph_id" IS DISTINCT FROM (NEW."old_paragraph_id") OR OLD."new_paragraph_id" IS DISTINCT FROM (NEW."new_paragraph_id") OR OLD."conflict_id" IS DISTINCT FROM (NEW."conflict_id") OR (OLD."closed_at" IS NOT NULL AND (OLD."verdict" IS DISTINCT FROM (NEW."verdict") OR OLD."note" IS DISTINCT FROM (NEW."note") OR OLD."closed_by_id" IS DISTINCT FROM (NEW."closed_by_id") OR OLD."closed_at" IS DISTINCT FROM (NEW."closed_at"))))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='7d2fd3c520684bb4798f17d027b34ce2de97e0f9', operation='UPDATE', pgid='pgtrigger_rereview_fixed_ea125', table='decisions_rereview', when='BEFORE')),
    Trigger(name='rereview_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM decisions_rereview) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='f32e251a478777be9fb765f31b413bb2a1db92d0', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_rereview_no_truncate_41ee4', table='decisions_rereview', when='BEFORE')),
    Trigger(name='periodic_review_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='0d7a7a77d4d570d532b5e7617487a9a79b4946c6', operation='DELETE', pgid='pgtrigger_periodic_review_no_delete_b0117', table='decisions_periodicreview', when='BEFORE')),
    Trigger(name='periodic_review_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."decision_id" IS DISTINCT FROM (NEW."decision_id") OR OLD."zone" IS DISTINCT FROM (NEW."zone") OR OLD."reason" IS DISTINCT FROM (NEW."reason") OR (OLD."verdict" IS NOT NULL AND (OLD."verdict" IS DISTINCT FROM (NEW."verdict") OR OLD."note" IS DISTINCT FROM (NEW."note") OR OLD."reviewed_at" IS DISTINCT FROM (NEW."reviewed_at") OR OLD."reviewed_by_id" IS DISTINCT FROM (NEW."reviewed_by_id"))))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='6d5590f949867476a3eacd11f22f936026413746', operation='UPDATE', pgid='pgtrigger_periodic_review_fixed_57380', table='decisions_periodicreview', when='BEFORE')),
    Trigger(name='periodic_review_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM decisions_periodicreview) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='093361676421016d70b758c468f7f29006e4ec3e', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_periodic_review_no_truncate_20fab', table='decisions_periodicreview', when='BEFORE')),
]


def _changed(fields: tuple[str, ...]) -> str:
    return "(" + " OR ".join(f'OLD."{name}" IS NOT NEW."{name}"' for name in fields) + ")"


def _sqlite_guard(name: str, operation: str, table: str, when: str = "") -> tuple[str, str]:
    condition = f" WHEN {when}" if when else ""
    create = (
        f"CREATE TRIGGER {name} BEFORE {operation} ON {table}{condition} BEGIN "
        f"SELECT RAISE(ABORT, 'governance rows are append-only: cannot {operation.lower()} "
        f"{table}'); END;"
    )
    return create, f"DROP TRIGGER IF EXISTS {name};"

DECISION_FIXED = (
    "question", "answer", "zone", "agent", "proposed_by_id", "bundle_id", "idempotency_key",
    "request_hash",
)
REREVIEW_FIXED = (
    "decision_id", "zone", "cause", "old_paragraph_id", "new_paragraph_id", "conflict_id",
)
REREVIEW_CLOSED = ("verdict", "note", "closed_by_id", "closed_at")
PERIODIC_FIXED = ("decision_id", "zone", "reason")
PERIODIC_CLOSED = ("verdict", "note", "reviewed_at", "reviewed_by_id")

SQLITE_TRIGGERS = [
    _sqlite_guard("decision_no_delete", "DELETE", "decisions_decision"),
    _sqlite_guard("decision_fixed", "UPDATE", "decisions_decision", _changed(DECISION_FIXED)),
    _sqlite_guard("approval_no_update", "UPDATE", "decisions_approval"),
    _sqlite_guard("approval_no_delete", "DELETE", "decisions_approval"),
    _sqlite_guard(
        "claim_verdict_fixed",
        "UPDATE",
        "decisions_claimverdict",
        _changed(
            ("decision_id", "reviewer_id", "claim", "engine_supported", "engine_probability", "zone")
        ),
    ),
    _sqlite_guard("claim_verdict_no_delete", "DELETE", "decisions_claimverdict"),
    _sqlite_guard("comment_no_update", "UPDATE", "decisions_comment"),
    _sqlite_guard("comment_no_delete", "DELETE", "decisions_comment"),
    _sqlite_guard("rereview_no_delete", "DELETE", "decisions_rereview"),
    _sqlite_guard(
        "rereview_fixed",
        "UPDATE",
        "decisions_rereview",
        f"{_changed(REREVIEW_FIXED)} OR "
        f"(OLD.closed_at IS NOT NULL AND {_changed(REREVIEW_CLOSED)})",
    ),
    _sqlite_guard("periodic_review_no_delete", "DELETE", "decisions_periodicreview"),
    _sqlite_guard(
        "periodic_review_fixed",
        "UPDATE",
        "decisions_periodicreview",
        f"{_changed(PERIODIC_FIXED)} OR (OLD.verdict IS NOT NULL AND {_changed(PERIODIC_CLOSED)})",
    ),
]


def install_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        for trigger in PG_TRIGGERS:
            # Interpolated SQL: params=None keeps the '%' of RAISE from being read as a placeholder.
            schema_editor.execute(trigger.install_sql, params=None)
    elif vendor == "sqlite":
        for create, _ in SQLITE_TRIGGERS:
            schema_editor.execute(create, params=None)


def remove_triggers(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        for trigger in PG_TRIGGERS:
            schema_editor.execute(trigger.uninstall_sql, params=None)
    elif vendor == "sqlite":
        for _, drop in SQLITE_TRIGGERS:
            schema_editor.execute(drop, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ("decisions", "0008_assignment_and_comments"),
    ]

    operations = [migrations.RunPython(install_triggers, remove_triggers)]
