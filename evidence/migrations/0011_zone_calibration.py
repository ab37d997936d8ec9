# The per-zone calibrations of the claim verifier (evidence.models.ZoneCalibration).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coordinates", "0002_token_webhook_secret"),
        ("evidence", "0010_append_only_evidence"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ZoneCalibration",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("version", models.PositiveIntegerField()),
                ("method", models.CharField(max_length=32)),
                ("params", models.JSONField()),
                ("verdicts", models.PositiveIntegerField()),
                ("window_from", models.DateTimeField()),
                ("window_until", models.DateTimeField()),
                ("fitted_by", models.CharField(max_length=150)),
                ("reliability_before", models.JSONField()),
                ("reliability_after", models.JSONField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("proposed", "Proposed"),
                            ("adopted", "Adopted"),
                            ("retired", "Retired"),
                        ],
                        default="proposed",
                        max_length=16,
                    ),
                ),
                ("adopted_at", models.DateTimeField(blank=True, null=True)),
                ("adopt_reason", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "adopted_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "zone",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="calibrations",
                        to="coordinates.zone",
                    ),
                ),
            ],
            options={
                "ordering": ["zone_id", "-version"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("zone", "version"), name="calibration_version_unique"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("version__gte", 1)), name="calibration_version_gte_1"
                    ),
                    models.UniqueConstraint(
                        condition=models.Q(("status", "adopted")),
                        fields=("zone",),
                        name="calibration_one_adopted",
                    ),
                ],
            },
        ),
    ]
