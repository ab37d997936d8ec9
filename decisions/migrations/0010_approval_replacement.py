# Issue 30 point 1: the answer a reviewer writes in place of the agent's (decisions.delivery).
# Nullable, so SQLite adds the column in place and the append-only triggers of 0009 stay.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0009_governance_rows"),
    ]

    operations = [
        migrations.AddField(
            model_name="approval",
            name="replacement",
            field=models.TextField(blank=True, null=True),
        ),
    ]
