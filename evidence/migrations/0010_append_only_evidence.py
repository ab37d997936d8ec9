# Evidence is append-only in the database, as the trail is (evidence.models, "database
# protection"). PostgreSQL: the triggers compiled by django-pgtrigger, frozen here as its own
# migrations would freeze them. SQLite: plain triggers with the same conditions.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from pgtrigger.compiler import Trigger, UpsertTriggerSql

PG_TRIGGERS = [
    Trigger(name='bundle_append_only', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='ba5a5093f8ee3f5bed9b73488431b4241016e025', operation='UPDATE OR DELETE', pgid='pgtrigger_bundle_append_only_fa1d9', table='evidence_evidencebundle', when='BEFORE')),
    Trigger(name='report_append_only', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='8f1fef0a4af738332c357726237787aa7fca4529', operation='UPDATE OR DELETE', pgid='pgtrigger_report_append_only_65d24', table='evidence_validationreport', when='BEFORE')),
    Trigger(name='version_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='ea0a8070de9758338bb7cb5ed9e2a0a3a9b3ce7a', operation='DELETE', pgid='pgtrigger_version_no_delete_84432', table='evidence_documentversion', when='BEFORE')),
    Trigger(name='version_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."document_id" IS DISTINCT FROM (NEW."document_id") OR OLD."version" IS DISTINCT FROM (NEW."version") OR OLD."title" IS DISTINCT FROM (NEW."title") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."status" IS DISTINCT FROM (NEW."status") OR OLD."effective_date" IS DISTINCT FROM (NEW."effective_date") OR OLD."format" IS DISTINCT FROM (NEW."format") OR OLD."text" IS DISTINCT FROM (NEW."text") OR OLD."content_hash" IS DISTINCT FROM (NEW."content_hash") OR OLD."supersedes_id" IS DISTINCT FROM (NEW."supersedes_id") OR OLD."created_by_id" IS DISTINCT FROM (NEW."created_by_id") OR OLD."created_at" IS DISTINCT FROM (NEW."created_at") OR (OLD."superseded_at" IS DISTINCT FROM (NEW."superseded_at") AND OLD."superseded_at" IS NOT NULL))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='304a9c2ae10029f5b30b5269cecee248b8e2985a', operation='UPDATE', pgid='pgtrigger_version_fixed_187ec', table='evidence_documentversion', when='BEFORE')),
    Trigger(name='paragraph_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='629d8c293e0c63afbf7d024754bbc3806562edbf', operation='DELETE', pgid='pgtrigger_paragraph_no_delete_dc2be', table='evidence_paragraph', when='BEFORE')),
    Trigger(name='paragraph_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."version_id" IS DISTINCT FROM (NEW."version_id") OR OLD."number" IS DISTINCT FROM (NEW."number") OR OLD."section" IS DISTINCT FROM (NEW."section") OR OLD."start" IS DISTINCT FROM (NEW."start") OR OLD."end" IS DISTINCT FROM (NEW."end") OR OLD."text" IS DISTINCT FROM (NEW."text") OR OLD."text_hash" IS DISTINCT FROM (NEW."text_hash") OR OLD."zone" IS DISTINCT FROM (NEW."zone") OR (NEW."current" AND NOT OLD."current"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='3601c509d1793df46ed9a8f4d72f9e8dcdf69bfb', operation='UPDATE', pgid='pgtrigger_paragraph_fixed_0330f', table='evidence_paragraph', when='BEFORE')),
    Trigger(name='document_no_delete', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='57e14e46ce7421e81cdf277d06e55478f1da9439', operation='DELETE', pgid='pgtrigger_document_no_delete_3e7e1', table='evidence_document', when='BEFORE')),
    Trigger(name='document_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."zone_id" IS DISTINCT FROM (NEW."zone_id") OR OLD."key" IS DISTINCT FROM (NEW."key") OR OLD."created_at" IS DISTINCT FROM (NEW."created_at"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='9559d986705de628e59944418f75fa9b00ec1b0a', operation='UPDATE', pgid='pgtrigger_document_fixed_4e1f1', table='evidence_document', when='BEFORE')),
]

VERSION_FIXED = (
    "document_id", "version", "title", "kind", "status", "effective_date", "format", "text",
    "content_hash", "supersedes_id", "created_by_id", "created_at",
)
PARAGRAPH_FIXED = ("version_id", "number", "section", "start", "end", "text", "text_hash", "zone")
DOCUMENT_FIXED = ("zone_id", "key", "created_at")


def _changed(fields: tuple[str, ...]) -> str:
    return " OR ".join(f'OLD."{name}" IS NOT NEW."{name}"' for name in fields)


def _sqlite_guard(name: str, operation: str, table: str, when: str = "") -> tuple[str, str]:
    condition = f" WHEN {when}" if when else ""
    create = (
        f"CREATE TRIGGER {name} BEFORE {operation} ON {table}{condition} BEGIN "
        f"SELECT RAISE(ABORT, 'evidence is append-only: cannot {operation.lower()} {table}'); END;"
    )
    return create, f"DROP TRIGGER IF EXISTS {name};"


SQLITE_TRIGGERS = [
    _sqlite_guard("bundle_no_update", "UPDATE", "evidence_evidencebundle"),
    _sqlite_guard("bundle_no_delete", "DELETE", "evidence_evidencebundle"),
    _sqlite_guard("report_no_update", "UPDATE", "evidence_validationreport"),
    _sqlite_guard("report_no_delete", "DELETE", "evidence_validationreport"),
    _sqlite_guard("version_no_delete", "DELETE", "evidence_documentversion"),
    _sqlite_guard(
        "version_fixed",
        "UPDATE",
        "evidence_documentversion",
        f"{_changed(VERSION_FIXED)} OR (OLD.superseded_at IS NOT NULL "
        "AND OLD.superseded_at IS NOT NEW.superseded_at)",
    ),
    _sqlite_guard("paragraph_no_delete", "DELETE", "evidence_paragraph"),
    _sqlite_guard(
        "paragraph_fixed",
        "UPDATE",
        "evidence_paragraph",
        f"{_changed(PARAGRAPH_FIXED)} OR (NEW.current AND NOT OLD.current)",
    ),
    _sqlite_guard("document_no_delete", "DELETE", "evidence_document"),
    _sqlite_guard("document_fixed", "UPDATE", "evidence_document", _changed(DOCUMENT_FIXED)),
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
        ("evidence", "0009_graph_moves_to_its_app"),
    ]

    operations = [migrations.RunPython(install_triggers, remove_triggers)]
