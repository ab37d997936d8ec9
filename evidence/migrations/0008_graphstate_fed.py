from django.db import migrations, models


def start_at_the_heads(apps: object, schema_editor: object) -> None:
    """An existing graph already holds what the trail says so far (it was fed per event):
    follow on from today's heads rather than replay all history."""
    graph_state = apps.get_model("evidence", "GraphState")  # type: ignore[attr-defined]
    trail_head = apps.get_model("decisions", "TrailHead")  # type: ignore[attr-defined]
    heads = dict(trail_head.objects.values_list("chain", "seq"))
    if heads and graph_state.objects.filter(pk=1).exists():
        graph_state.objects.filter(pk=1).update(fed=heads)


class Migration(migrations.Migration):
    dependencies = [
        ("evidence", "0007_paragraph_vector_storage"),
        ("decisions", "0002_pipeline"),
    ]
    operations = [
        migrations.AddField(
            model_name="graphstate", name="fed", field=models.JSONField(default=dict)
        ),
        migrations.RunPython(start_at_the_heads, migrations.RunPython.noop),
    ]
