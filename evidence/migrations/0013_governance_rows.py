# Generated for issue 28 point 1: every governance row is append-only or on the chain
# (docs/architecture.md). PostgreSQL: the triggers compiled by django-pgtrigger, frozen here as
# its own migrations would (registered beside the models); SQLite: plain triggers, the twins.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from pgtrigger.compiler import Trigger, UpsertTriggerSql

PG_TRIGGERS = [
    Trigger(name='calibration_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='76c08e2668f4afe9d9690446825d8422cec54246', operation='DELETE', pgid='pgtrigger_calibration_no_delete_ffa0c', table='evidence_zonecalibration', when='BEFORE')),
    Trigger(name='calibration_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."zone_id" IS DISTINCT FROM (NEW."zone_id") OR OLD."version" IS DISTINCT FROM (NEW."version") OR OLD."method" IS DISTINCT FROM (NEW."method") OR OLD."params" IS DISTINCT FROM (NEW."params") OR OLD."verdicts" IS DISTINCT FROM (NEW."verdicts") OR OLD."window_from" IS DISTINCT FROM (NEW."window_from") OR OLD."window_until" IS DISTINCT FROM (NEW."window_until") OR OLD."fitted_by" IS DISTINCT FROM (NEW."fitted_by") OR OLD."reliability_before" IS DISTINCT FROM (NEW."reliability_before") OR OLD."reliability_after" IS DISTINCT FROM (NEW."reliability_after"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='e7c8fae342a5283f757d3629586a9c74a0bb1d5f', operation='UPDATE', pgid='pgtrigger_calibration_fixed_962b7', table='evidence_zonecalibration', when='BEFORE')),
    Trigger(name='calibration_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_zonecalibration) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='125b78bd99d149a641fecb933bdec2a55965c204', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_calibration_no_truncate_ba792', table='evidence_zonecalibration', when='BEFORE')),
    Trigger(name='conflict_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='f2ff7c1aea8b583edf7347d3b351bc326b4d39fb', operation='DELETE', pgid='pgtrigger_conflict_no_delete_2f22d', table='evidence_knowledgeconflict', when='BEFORE')),
    Trigger(name='conflict_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."zone" IS DISTINCT FROM (NEW."zone") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."first_id" IS DISTINCT FROM (NEW."first_id") OR OLD."second_id" IS DISTINCT FROM (NEW."second_id") OR OLD."reason" IS DISTINCT FROM (NEW."reason") OR OLD."words" IS DISTINCT FROM (NEW."words") OR OLD."found_by" IS DISTINCT FROM (NEW."found_by") OR (OLD."resolved_at" IS NOT NULL AND (OLD."resolution" IS DISTINCT FROM (NEW."resolution") OR OLD."resolution_reason" IS DISTINCT FROM (NEW."resolution_reason") OR OLD."resolved_by_id" IS DISTINCT FROM (NEW."resolved_by_id") OR OLD."resolved_at" IS DISTINCT FROM (NEW."resolved_at"))))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='e82ae82d206ba6f412c90ada7da5c1095f46d396', operation='UPDATE', pgid='pgtrigger_conflict_fixed_05349', table='evidence_knowledgeconflict', when='BEFORE')),
    Trigger(name='conflict_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_knowledgeconflict) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='a43c9a5c2b787ac7ffdf88bfdb06b1c59043d46c', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_conflict_no_truncate_b6e41', table='evidence_knowledgeconflict', when='BEFORE')),
    Trigger(name='bundle_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_evidencebundle) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='847ebf4e8f5179fb3b94a897082779f4fc944da9', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_bundle_no_truncate_2157c', table='evidence_evidencebundle', when='BEFORE')),
    Trigger(name='report_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_validationreport) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='e4cedb8a5165252d41732b5486ad7efaf952d9c2', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_report_no_truncate_0a237', table='evidence_validationreport', when='BEFORE')),
    Trigger(name='version_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_documentversion) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='84952cbbb13345bf6add39aab493ca9ff36d8a61', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_version_no_truncate_0a816', table='evidence_documentversion', when='BEFORE')),
    Trigger(name='paragraph_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_paragraph) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='6d9f12e8b52eef406faac42e039b3665fb722f90', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_paragraph_no_truncate_8219b', table='evidence_paragraph', when='BEFORE')),
    Trigger(name='document_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM evidence_document) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='e9fd1d935d041f0dc4bd243ee67bc90bb5735a07', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_document_no_truncate_e50b4', table='evidence_document', when='BEFORE')),
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

CALIBRATION_FIXED = (
    "zone_id", "version", "method", "params", "verdicts", "window_from", "window_until",
    "fitted_by", "reliability_before", "reliability_after",
)
CONFLICT_FIXED = ("zone", "kind", "first_id", "second_id", "reason", "words", "found_by")
CONFLICT_RESOLVED = ("resolution", "resolution_reason", "resolved_by_id", "resolved_at")

SQLITE_TRIGGERS = [
    _sqlite_guard("calibration_no_delete", "DELETE", "evidence_zonecalibration"),
    _sqlite_guard(
        "calibration_fixed",
        "UPDATE",
        "evidence_zonecalibration",
        _changed(CALIBRATION_FIXED),
    ),
    _sqlite_guard("conflict_no_delete", "DELETE", "evidence_knowledgeconflict"),
    _sqlite_guard(
        "conflict_fixed",
        "UPDATE",
        "evidence_knowledgeconflict",
        f"{_changed(CONFLICT_FIXED)} OR "
        f"(OLD.resolved_at IS NOT NULL AND {_changed(CONFLICT_RESOLVED)})",
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
        ("evidence", "0012_knowledge_conflict"),
    ]

    operations = [migrations.RunPython(install_triggers, remove_triggers)]
