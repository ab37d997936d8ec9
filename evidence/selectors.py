"""Queries over the document store: documents a caller may see, citation resolution."""

from __future__ import annotations

from django.db.models import QuerySet

from coordinates.coordinate import Coordinate
from coordinates.models import Role
from coordinates.selectors import AnyUser, agent_of, in_scopes, role_scopes
from evidence.models import Document

READ_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN, Role.AUDITOR)


def reader_scopes(user: AnyUser, token: object = None) -> list[Coordinate] | None:
    """The coordinate prefixes whose documents a caller may read; None means everything."""
    if getattr(user, "is_superuser", False):
        return None
    agent = agent_of(token)
    if agent is not None:
        return [agent.zone()]
    return role_scopes(user, READ_ROLES)


def documents_visible(user: AnyUser, token: object = None) -> QuerySet[Document]:
    documents = Document.objects.select_related("zone").order_by("zone__coordinate", "key")
    scopes = reader_scopes(user, token)
    if scopes is None:
        return documents
    visible = [z for z in {d.zone.coordinate for d in documents} if in_scopes(z, scopes)]
    return documents.filter(zone__coordinate__in=visible)
