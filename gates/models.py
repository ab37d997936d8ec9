"""A reviewer's saved queue filters (the only state the web pages own)."""

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
