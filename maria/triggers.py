"""The pieces of the governance tables' database triggers (docs/architecture.md, "Every
governance row is append-only or on the chain"): each app registers its triggers with
django-pgtrigger beside its models and freezes them, with their SQLite twins, in a migration.
"""

from __future__ import annotations

import pgtrigger


def changed(fields: tuple[str, ...]) -> pgtrigger.Q:
    """OLD.f IS DISTINCT FROM NEW.f, for any of `fields`."""
    condition = pgtrigger.Q()
    for name in fields:
        condition |= pgtrigger.Q(**{f"old__{name}__df": pgtrigger.F(f"new__{name}")})
    return condition


def truncate_guard(name: str) -> pgtrigger.Trigger:
    """Refuse TRUNCATE of a table with rows (PostgreSQL; SQLite has no TRUNCATE).

    pgtrigger's Protect has no TRUNCATE form, so this is a plain statement trigger. Emptying
    an empty table loses nothing, and Django's test flush truncates every table, so only a
    table with rows is refused.
    """
    return pgtrigger.Trigger(
        name=name,
        when=pgtrigger.Before,
        operation=pgtrigger.Truncate,
        level=pgtrigger.Statement,
        func=pgtrigger.Func(
            "IF EXISTS (SELECT 1 FROM {meta.db_table}) THEN "
            "RAISE EXCEPTION 'governance rows are append-only: cannot truncate %', "
            "TG_TABLE_NAME; END IF; RETURN NULL;"
        ),
    )


def append_only(prefix: str) -> tuple[pgtrigger.Trigger, ...]:
    """No UPDATE, DELETE or TRUNCATE: a row once written stays as written."""
    return (
        pgtrigger.Protect(
            name=f"{prefix}_append_only", operation=pgtrigger.Update | pgtrigger.Delete
        ),
        truncate_guard(f"{prefix}_no_truncate"),
    )


def fixed(prefix: str, fields: tuple[str, ...], *, once: pgtrigger.Q | None = None) -> tuple:
    """No DELETE or TRUNCATE; UPDATE may not touch `fields`, nor any column of a row that
    `once` (a condition on OLD) says is closed."""
    condition = changed(fields)
    if once is not None:
        condition |= once
    return (
        pgtrigger.Protect(name=f"{prefix}_no_delete", operation=pgtrigger.Delete),
        pgtrigger.Protect(name=f"{prefix}_fixed", operation=pgtrigger.Update, condition=condition),
        truncate_guard(f"{prefix}_no_truncate"),
    )
