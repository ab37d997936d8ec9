"""Queries over the document store: documents a caller may see, citation resolution."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from coordinates.coordinate import Coordinate
from coordinates.models import Role, Zone
from coordinates.selectors import AnyUser, agent_of, role_scopes
from evidence.models import Document
from evidence.retrieval import in_view
from trail.models import Quarantine

READ_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN, Role.AUDITOR)


def reader_scopes(user: AnyUser, token: object = None) -> list[Coordinate] | None:
    """The coordinate prefixes whose documents a caller may read; None means everything."""
    if getattr(user, "is_superuser", False):
        return None
    agent = agent_of(token)
    if agent is not None:
        return [agent.zone()]
    return role_scopes(user, READ_ROLES)


def document_readable(node: str, scopes: list[Coordinate] | None) -> bool:
    """A document of tree node `node` is readable under `scopes` (reader_scopes) when it
    lies in one of them or on a level above one: zones inherit their levels' documents.
    Overridden ones included: reading one is no citing it (evidence.retrieval.overrides)."""
    return in_view(node, None if scopes is None else [str(scope) for scope in scopes])


def document_exists(*, zone: Zone, key: str) -> bool:
    """Whether the zone holds a document of this key, in any version (document_ingest)."""
    return Document.objects.filter(zone=zone, key=key).exists()


def documents_visible(user: AnyUser, token: object = None) -> QuerySet[Document]:
    documents = Document.objects.select_related("zone").order_by("zone__coordinate", "key")
    scopes = reader_scopes(user, token)
    if scopes is None:
        return documents
    nodes = set(Document.objects.order_by().values_list("zone__coordinate", flat=True).distinct())
    visible = [node for node in nodes if document_readable(node, scopes)]
    return documents.filter(zone__coordinate__in=visible)


def versions_set_aside(version_ids: Iterable[int]) -> dict[int, list[Quarantine]]:
    """The background work set aside on these versions (a scan that failed or timed out
    twice, an embedding that kept failing), by version id: for their zone admins to see."""
    subjects = {f"version:{pk}": pk for pk in version_ids}
    found: dict[int, list[Quarantine]] = {}
    for row in Quarantine.objects.filter(subject__in=list(subjects)).order_by("-last_seen"):
        found.setdefault(subjects[row.subject], []).append(row)
    return found
