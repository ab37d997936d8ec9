"""Zones (the G.U.P.Z tree), versioned zone policies, role assignments and agent tokens."""

from __future__ import annotations

import urllib.parse
from typing import Any

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from coordinates.coordinate import Coordinate, Level
from maria import triggers


class Zone(models.Model):
    """A node of the organisational tree: galaxy, universe, planet or zone."""

    coordinate = models.CharField(max_length=64, unique=True)
    level = models.CharField(max_length=16, choices=[(lv.value, lv.value) for lv in Level])
    depth = models.PositiveSmallIntegerField()
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    name = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["depth", "coordinate"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(depth__gte=1, depth__lte=4), name="zone_depth_1_to_4"
            ),
        ]

    def __str__(self) -> str:
        return self.coordinate

    @property
    def coord(self) -> Coordinate:
        return Coordinate.parse(self.coordinate)


class ZonePolicyVersion(models.Model):
    """One immutable edit of a zone's own policy overrides; the newest version is in force."""

    zone = models.ForeignKey(Zone, on_delete=models.PROTECT, related_name="policy_versions")
    version = models.PositiveIntegerField()
    overrides = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    reason = models.TextField()

    class Meta:
        ordering = ["zone_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["zone", "version"], name="policy_version_unique"),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="policy_version_gte_1"),
        ]

    def __str__(self) -> str:
        return f"{self.zone.coordinate}@{self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Versions are history: an edit is a new row, never an update of an old one.
        if self.pk is not None:
            raise ValueError("a policy version is immutable; make a new version instead")
        super().save(*args, **kwargs)


class Role(models.TextChoices):
    REVIEWER = "reviewer", _("Reviewer")
    ZONE_ADMIN = "zone_admin", _("Zone admin")
    AUDITOR = "auditor", _("Auditor")


class RoleAssignment(models.Model):
    """A role on a coordinate prefix; it applies to everything beneath the prefix."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="role_assignments"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    scope = models.CharField(max_length=64)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["user_id", "role", "scope"]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "role", "scope"], name="role_assignment_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.role} on {self.scope}"


# --- database protection ------------------------------------------------------------------
#
# Every governance row is append-only or on the chain (docs/architecture.md): a policy
# version never changes; a role assignment is granted and revoked (deleted) with an event on
# its scope's chain, never edited (only `granted_by` may empty when that user goes), and
# `verify_trail` replays the grants and revocations against the rows (audit.rows).
# PostgreSQL: compiled by django-pgtrigger and installed by migration 0003; SQLite: the
# twins in that migration.

POLICY_VERSION_TRIGGERS = triggers.append_only("policy_version")
ROLE_ASSIGNMENT_TRIGGERS = (
    pgtrigger.Protect(
        name="role_assignment_fixed",
        operation=pgtrigger.Update,
        condition=triggers.changed(("user_id", "role", "scope", "granted_at")),
    ),
)

pgtrigger.register(*POLICY_VERSION_TRIGGERS)(ZonePolicyVersion)
pgtrigger.register(*ROLE_ASSIGNMENT_TRIGGERS)(RoleAssignment)


def is_webhook_url(url: str) -> bool:
    """An absolute http(s) URL with a host: the only kind a webhook may be sent to."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url


class ApiToken(models.Model):
    """A bearer token, stored as its SHA-256 only: an agent's (bound to one agent coordinate)
    or a person's personal token."""

    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=16)  # shown in lists so a token can be recognised
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    agent = models.CharField(max_length=64, blank=True)  # agent coordinate; empty for people
    label = models.CharField(max_length=200, blank=True)
    webhook_url = models.URLField(blank=True)
    # The HMAC key that signs webhooks to this agent; both sides must know it, so it is kept.
    webhook_secret = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        owner = self.agent or self.user.get_username()
        return f"{self.prefix}… ({owner})"

    @property
    def is_agent(self) -> bool:
        return bool(self.agent)

    @property
    def agent_coordinate(self) -> Coordinate | None:
        return Coordinate.parse(self.agent) if self.agent else None
