# django-pgtrigger names each PostgreSQL trigger (and its function) after the model it is
# registered on, "<app>.<Model>:<name>" hashed: the trail's models moved from decisions to
# this app, so the triggers installed by decisions 0001_trail are renamed to the names the
# registry now gives them (pgtrigger.ignore() and `pgtrigger ls` find triggers by name). The
# triggers themselves, and what they refuse, do not change. SQLite's triggers keep their names.

from django.db import migrations

# (table, name at decisions 0001_trail, name under trail.models)
RENAMED = [
    ("decisions_decisionevent", "pgtrigger_trail_event_append_only_4c038", "pgtrigger_trail_event_append_only_c363e"),
    ("decisions_decisionevent", "pgtrigger_trail_event_no_truncate_9c5b9", "pgtrigger_trail_event_no_truncate_8ca9e"),
    ("decisions_trailcheckpoint", "pgtrigger_trail_checkpoint_append_only_b772b", "pgtrigger_trail_checkpoint_append_only_27a35"),
    ("decisions_trailcheckpoint", "pgtrigger_trail_checkpoint_no_truncate_4c27c", "pgtrigger_trail_checkpoint_no_truncate_2ba3c"),
    ("decisions_trailhead", "pgtrigger_trail_head_no_delete_81049", "pgtrigger_trail_head_no_delete_d450e"),
    ("decisions_trailhead", "pgtrigger_trail_head_no_truncate_6761d", "pgtrigger_trail_head_no_truncate_45365"),
]


def _rename(schema_editor, pairs):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, old, new in pairs:
        schema_editor.execute(f'ALTER TRIGGER "{old}" ON "{table}" RENAME TO "{new}"')
        schema_editor.execute(f'ALTER FUNCTION "{old}"() RENAME TO "{new}"')


def forwards(apps, schema_editor):
    _rename(schema_editor, RENAMED)


def backwards(apps, schema_editor):
    _rename(schema_editor, [(table, new, old) for table, old, new in RENAMED])


class Migration(migrations.Migration):

    dependencies = [
        ("trail", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
