from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from coordinates.models import ApiToken, RoleAssignment, Zone, ZonePolicyVersion


@admin.register(Zone)
class ZoneAdmin(admin.ModelAdmin):
    list_display = ("coordinate", "level", "name", "created_at")
    list_filter = ("level",)
    search_fields = ("coordinate", "name")
    readonly_fields = ("coordinate", "level", "depth", "parent", "created_at")


@admin.register(ZonePolicyVersion)
class ZonePolicyVersionAdmin(admin.ModelAdmin):
    """History only: versions are made through the policy API, never edited here."""

    list_display = ("zone", "version", "created_by", "created_at", "reason")
    list_filter = ("zone__level",)
    search_fields = ("zone__coordinate", "reason")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(RoleAssignment)
class RoleAssignmentAdmin(admin.ModelAdmin):
    list_display = ("user", "role", "scope", "granted_by", "granted_at")
    list_filter = ("role",)
    search_fields = ("user__username", "scope")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "agent", "user", "label", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("agent", "user__username", "label", "prefix")
    readonly_fields = ("key_hash", "prefix", "user", "agent", "created_at", "last_used_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tokens are issued by `manage.py issue_token`, which shows the key once
