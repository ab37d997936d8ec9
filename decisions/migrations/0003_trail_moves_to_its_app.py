# The trail's models now belong to the trail app (trail 0001_initial): state only, the tables
# and their triggers stay.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('decisions', '0002_pipeline'),
        ('trail', '0001_initial'),
        # evidence 0008 reads the heads through this app's historical models: it runs first.
        ('evidence', '0008_graphstate_fed'),
    ]

    operations = [
        # The tables stay where they are: only Django's idea of which app owns them moves.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(
                    name='DecisionEvent',
                ),
                migrations.DeleteModel(
                    name='TrailCheckpoint',
                ),
                migrations.DeleteModel(
                    name='TrailHead',
                ),
            ],
        ),
    ]
