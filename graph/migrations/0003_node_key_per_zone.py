# A node's key is unique within its zone, no longer across the graph (issue 28 point 7): a
# global key told a zone admin which keys other zones hold. Existing rows are unique per key,
# so they are unique per (zone, key) as they stand.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('graph', '0002_content_types'),
    ]

    operations = [
        migrations.AlterField(
            model_name='graphnode',
            name='key',
            field=models.CharField(db_index=True, max_length=200),
        ),
        migrations.AddConstraint(
            model_name='graphnode',
            constraint=models.UniqueConstraint(fields=('zone', 'key'), name='graph_node_unique_zone_key'),
        ),
    ]
