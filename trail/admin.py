"""Read-only admin pages for the trail: it is written by services and never edited."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from trail.models import Quarantine, TrailCheckpoint, TrailEvent, TrailHead


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the database refuses it anyway; no button that can only fail


def _pretty(body: dict[str, Any]) -> str:
    return format_html("<pre>{}</pre>", json.dumps(body, ensure_ascii=False, indent=2))


@admin.register(TrailEvent)
class TrailEventAdmin(_ReadOnly):
    list_display = ("id", "chain", "seq", "kind", "actor", "decision_id", "created_at")
    list_filter = ("kind",)
    search_fields = ("chain", "hash", "actor")
    exclude = ("canonical",)
    readonly_fields = ("hashed_body",)

    @admin.display(description="hashed body")
    def hashed_body(self, obj: TrailEvent) -> str:
        return _pretty(obj.body)


@admin.register(TrailCheckpoint)
class TrailCheckpointAdmin(_ReadOnly):
    list_display = ("seq", "created_at", "chains", "events", "hash")
    exclude = ("canonical",)
    readonly_fields = ("hashed_body",)

    @admin.display(description="hashed body")
    def hashed_body(self, obj: TrailCheckpoint) -> str:
        return _pretty(obj.body)


@admin.register(TrailHead)
class TrailHeadAdmin(_ReadOnly):
    list_display = ("chain", "seq", "hash", "updated_at")
    search_fields = ("chain",)


@admin.register(Quarantine)
class QuarantineAdmin(_ReadOnly):
    """What the background runs set aside (trail.quarantine), newest first, for operators."""

    list_display = ("last_seen", "run", "subject", "count", "reason", "created_at")
    list_filter = ("run",)
    search_fields = ("subject", "reason")
