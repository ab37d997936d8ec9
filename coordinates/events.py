"""What can happen to the zone tree, its policies and roles: one function per trail event.

The ledger (the `trail` app) sits above this app, so the functions write through the ledger
it registers at start-up (`trail.apps`, `ledger_use`) instead of importing it. Each runs
inside the caller's transaction: the change and its event commit together or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

    from coordinates.coordinate import Coordinate
    from coordinates.models import RoleAssignment, Zone, ZonePolicyVersion


class Kind(StrEnum):
    POLICY_CHANGED = "policy.changed"
    ZONE_CREATED = "zone.created"
    ROLE_GRANTED = "role.granted"
    ROLE_REVOKED = "role.revoked"


class Ledger(Protocol):
    """The part of `trail.ledger` this app writes through."""

    def chain_for(self, coordinate: Coordinate | str) -> str: ...

    def lock(self, chain: str) -> Any: ...

    def append(
        self,
        *,
        kind: str,
        chain: str,
        actor: AbstractBaseUser | None,
        payload: Mapping[str, Any],
        reason: str = "",
    ) -> Any: ...  # the trail's TrailEvent


_ledger: Ledger | None = None


def ledger_use(ledger: Ledger) -> None:
    """Called once by the trail app when Django starts."""
    global _ledger
    _ledger = ledger


def _the_ledger() -> Ledger:
    # Never drop an audit event silently: without the trail app nothing here may be written.
    if _ledger is None:
        raise ImproperlyConfigured("no ledger registered: is 'trail' in INSTALLED_APPS?")
    return _ledger


def zone_lock(coordinate: Coordinate | str) -> None:
    """Hold the zone chain's append lock until the transaction ends (serialises its edits)."""
    ledger = _the_ledger()
    ledger.lock(ledger.chain_for(coordinate))


def _append(
    kind: Kind,
    coordinate: Coordinate | str,
    *,
    actor: AbstractBaseUser | None,
    payload: Mapping[str, Any],
    reason: str = "",
) -> Any:
    ledger = _the_ledger()
    return ledger.append(
        kind=kind, chain=ledger.chain_for(coordinate), actor=actor, reason=reason, payload=payload
    )


def policy_changed(
    version: ZonePolicyVersion,
    *,
    actor: AbstractBaseUser | None,
    previous: ZonePolicyVersion | None = None,
) -> Any:
    """A zone's own thresholds became a new version (the reason is the editor's)."""
    zone = version.zone
    return _append(
        Kind.POLICY_CHANGED,
        zone.coordinate,
        actor=actor,
        reason=version.reason,
        payload={
            "zone": zone.coordinate,
            "version": version.version,
            # Small and what an auditor wants to read: the thresholds themselves.
            "overrides": dict(version.overrides),
            "previous_version": previous.version if previous is not None else None,
        },
    )


def zone_created(zone: Zone, *, actor: AbstractBaseUser | None = None) -> Any:
    """A node joined the zone tree (galaxy, universe, planet or zone)."""
    return _append(
        Kind.ZONE_CREATED,
        zone.coordinate,
        actor=actor,
        payload={
            "zone": zone.coordinate,
            "level": zone.level,
            "name": zone.name,
            "parent": zone.parent.coordinate if zone.parent is not None else None,
        },
    )


def role_granted(assignment: RoleAssignment, *, actor: AbstractBaseUser | None = None) -> Any:
    """Someone may now act as reviewer, zone admin or auditor on a scope and beneath it."""
    return _append(
        Kind.ROLE_GRANTED,
        assignment.scope,
        actor=actor,
        payload={
            "user": assignment.user.get_username(),
            "role": assignment.role,
            "scope": assignment.scope,
        },
    )


def role_revoked(
    *, user: AbstractBaseUser, role: str, scope: str, actor: AbstractBaseUser | None = None
) -> Any:
    """Someone may no longer act in that role on that scope (their socket closes too)."""
    return _append(
        Kind.ROLE_REVOKED,
        scope,
        actor=actor,
        payload={"user": user.get_username(), "role": role, "scope": scope},
    )
