# The knowledge graph's models now belong to the graph app (graph 0001_initial): state only,
# the tables stay.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('evidence', '0008_graphstate_fed'),
        ('graph', '0001_initial'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app owns them moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='GraphChange',
                ),
                migrations.RemoveField(
                    model_name='graphedge',
                    name='document',
                ),
                migrations.RemoveField(
                    model_name='graphedge',
                    name='source',
                ),
                migrations.RemoveField(
                    model_name='graphedge',
                    name='target',
                ),
                migrations.RemoveField(
                    model_name='graphriskflag',
                    name='resolved_by',
                ),
                migrations.DeleteModel(
                    name='GraphState',
                ),
                migrations.DeleteModel(
                    name='GraphEdge',
                ),
                migrations.DeleteModel(
                    name='GraphNode',
                ),
                migrations.DeleteModel(
                    name='GraphRiskFlag',
                ),
            ],
        ),
    ]
