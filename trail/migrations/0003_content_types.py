# The trail's models moved from the decisions app: their content types (and so any permission
# granted on them, such as a staff auditor's view of the admin pages) follow them instead of
# going stale. A database created after the move has no old content types: nothing to do.

from django.db import migrations

MOVED = {"decisionevent": "trailevent", "trailhead": "trailhead", "trailcheckpoint": "trailcheckpoint"}


def forwards(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for old, new in MOVED.items():
        if not content_type.objects.filter(app_label="trail", model=new).exists():
            content_type.objects.filter(app_label="decisions", model=old).update(
                app_label="trail", model=new
            )


def backwards(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for old, new in MOVED.items():
        content_type.objects.filter(app_label="trail", model=new).update(
            app_label="decisions", model=old
        )


class Migration(migrations.Migration):

    dependencies = [
        ("trail", "0002_trigger_names"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
