"""Queries over decisions: which a caller may see."""

from __future__ import annotations

from django.db.models import QuerySet

from coordinates.selectors import AnyUser, agent_of, role_scopes, within
from decisions.models import Decision


def visible_decisions(user: AnyUser, token: object = None) -> QuerySet[Decision]:
    """An agent sees the decisions it proposed; a person those of the zones they hold a role
    on (or beneath them); a superuser all."""
    decisions = Decision.objects.select_related("claimed_by")
    if getattr(user, "is_superuser", False):
        return decisions
    if agent_of(token) is not None:
        return decisions.filter(proposed_by=user)
    scopes = role_scopes(user)
    if not scopes:
        return decisions.none()
    return decisions.filter(within(scopes))
