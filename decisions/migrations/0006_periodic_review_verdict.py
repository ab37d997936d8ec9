# Periodic review gains its verdict, note and claim lock (issue 18 point 1).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("decisions", "0005_claim_verdict"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="periodicreview",
            name="claimed_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="periodicreview",
            name="claimed_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="periodicreview",
            name="note",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="periodicreview",
            name="verdict",
            field=models.CharField(
                blank=True, choices=[("ok", "OK"), ("wrong", "Wrong")], max_length=8, null=True
            ),
        ),
        migrations.AddIndex(
            model_name="periodicreview",
            index=models.Index(
                condition=models.Q(("verdict__isnull", True)),
                fields=["zone", "created_at"],
                name="periodic_review_open",
            ),
        ),
        migrations.AddConstraint(
            model_name="periodicreview",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("verdict__isnull", True),
                    models.Q(
                        ("reviewed_at__isnull", False),
                        ("reviewed_by__isnull", False),
                        ("verdict__in", ["ok", "wrong"]),
                    ),
                    _connector="OR",
                ),
                name="periodic_review_closed_by_someone",
            ),
        ),
        migrations.AddConstraint(
            model_name="periodicreview",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("verdict", "wrong"), _negated=True),
                    models.Q(("note", ""), _negated=True),
                    _connector="OR",
                ),
                name="periodic_review_wrong_has_note",
            ),
        ),
    ]
