# Generated for issue 28 point 1: every governance row is append-only or on the chain
# (docs/architecture.md). PostgreSQL: the triggers compiled by django-pgtrigger, frozen here as
# its own migrations would (registered beside the models); SQLite: plain triggers, the twins.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from pgtrigger.compiler import Trigger, UpsertTriggerSql

PG_TRIGGERS = [
    Trigger(name='policy_version_append_only', sql=UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;", hash='20b8106f88dd6b429b5ebb0d2ae17038cf074b56', operation='UPDATE OR DELETE', pgid='pgtrigger_policy_version_append_only_57f32', table='coordinates_zonepolicyversion', when='BEFORE')),
    Trigger(name='policy_version_no_truncate', sql=UpsertTriggerSql(func="IF EXISTS (SELECT 1 FROM coordinates_zonepolicyversion) THEN RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', TG_TABLE_NAME; END IF; RETURN NULL;", hash='02626f7f6aef2c09cd2ddb788f604cd7ee75e76c', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_policy_version_no_truncate_13d70', table='coordinates_zonepolicyversion', when='BEFORE')),
    Trigger(name='role_assignment_fixed', sql=UpsertTriggerSql(condition='WHEN (OLD."user_id" IS DISTINCT FROM (NEW."user_id") OR OLD."role" IS DISTINCT FROM (NEW."role") OR OLD."scope" IS DISTINCT FROM (NEW."scope") OR OLD."granted_at" IS DISTINCT FROM (NEW."granted_at"))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='17585eefd6cd7fe430a5ae0415cd20027baa5456', operation='UPDATE', pgid='pgtrigger_role_assignment_fixed_4a651', table='coordinates_roleassignment', when='BEFORE')),
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

SQLITE_TRIGGERS = [
    _sqlite_guard("policy_version_no_update", "UPDATE", "coordinates_zonepolicyversion"),
    _sqlite_guard("policy_version_no_delete", "DELETE", "coordinates_zonepolicyversion"),
    _sqlite_guard(
        "role_assignment_fixed",
        "UPDATE",
        "coordinates_roleassignment",
        _changed(("user_id", "role", "scope", "granted_at")),
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
        ("coordinates", "0002_token_webhook_secret"),
    ]

    operations = [migrations.RunPython(install_triggers, remove_triggers)]
