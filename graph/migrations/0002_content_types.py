# The knowledge graph's models moved from the evidence app: their content types (and any
# permission granted on them) follow them instead of going stale.

from django.db import migrations

MOVED = ["graphnode", "graphedge", "graphstate", "graphchange", "graphriskflag"]


def forwards(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not content_type.objects.filter(app_label="graph", model=model).exists():
            content_type.objects.filter(app_label="evidence", model=model).update(
                app_label="graph"
            )


def backwards(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="graph", model__in=MOVED).update(app_label="evidence")


class Migration(migrations.Migration):

    dependencies = [
        ("graph", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
