"""A reviewer's saved queue filters and the dashboard's settled days (the state the web pages
own)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SavedFilter(models.Model):
    """A named set of queue filters, kept as the query string the queue page reads."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_filters"
    )
    name = models.CharField(max_length=80)
    query = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="saved_filter_name_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"


class KpiDay(models.Model):
    """A settled day of a zone's governance figures (`gates.kpis`): the counts of the
    decisions proposed that day in `coordinate` or beneath it, once none of them can change
    any more (none open, the requery hour past). Written when a read first finds the day
    settled; later reads take it from here instead of the trail. Overrides, which may come
    any day, are not kept here: they are counted at every read."""

    coordinate = models.CharField(max_length=64)
    day = models.DateField()
    counts = models.JSONField()  # gates.kpis._Day as JSON
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["coordinate", "day"], name="kpi_day_unique")]

    def __str__(self) -> str:
        return f"{self.coordinate} {self.day}"
