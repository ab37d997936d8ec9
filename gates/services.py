"""The writes the reviewer pages own: a reviewer's saved queue filters."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from gates.models import SavedFilter
from maria.errors import ApplicationError, NotFound

NAME_LIMIT = 80  # SavedFilter.name
QUERY_LIMIT = 500  # SavedFilter.query


def saved_filter_save(*, user: AbstractBaseUser, name: str, query: str) -> SavedFilter:
    """Save `query` (the queue's filters as a query string) under `name`, replacing the
    user's filter of that name."""
    name = name.strip()
    if not name:
        raise ApplicationError("give the filter a name", field="name")
    if len(name) > NAME_LIMIT:
        raise ApplicationError(f"a filter name has at most {NAME_LIMIT} characters", field="name")
    if len(query) > QUERY_LIMIT:
        raise ApplicationError(f"these filters are longer than {QUERY_LIMIT} characters")
    with transaction.atomic():
        saved, _ = SavedFilter.objects.update_or_create(
            user_id=user.pk, name=name, defaults={"query": query}
        )
    return saved


def saved_filter_delete(*, user: AbstractBaseUser, filter_id: int) -> None:
    """Delete one of the user's own saved filters (another's is not found)."""
    deleted, _ = SavedFilter.objects.filter(pk=filter_id, user_id=user.pk).delete()
    if not deleted:
        raise NotFound(f"no saved filter {filter_id}")
