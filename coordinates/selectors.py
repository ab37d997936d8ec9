"""Queries about zones, their effective policies and who may act where."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from coordinates import policy
from coordinates.coordinate import Coordinate, CoordinateError, Level, parse
from coordinates.models import ApiToken, RoleAssignment, Zone, ZonePolicyVersion
from maria.errors import ApplicationError, NotFound

AnyUser: TypeAlias = AbstractBaseUser | AnonymousUser


# --- "this scope or anything beneath it" ----------------------------------------------------
# A coordinate covers the ones that extend it by whole levels: G1.U1 covers G1.U1 and
# G1.U1.P2, never G1.U10. Every query and check of that rule goes through these three.


def beneath(scope: Coordinate | str, field: str = "zone") -> Q:
    """Rows whose `field` is `scope` or a coordinate beneath it."""
    return Q(**{field: str(scope)}) | Q(**{f"{field}__startswith": f"{scope}."})


def within(scopes: Sequence[Coordinate] | None, field: str = "zone") -> Q:
    """Rows whose `field` lies on or beneath one of `scopes`; None means everything, and no
    scope at all means nothing."""
    if scopes is None:
        return Q()
    q = Q(pk__in=[])
    for scope in scopes:
        q |= beneath(scope, field)
    return q


def in_scopes(zone: str, scopes: Sequence[Coordinate] | None) -> bool:
    """`within` for one value in hand: `zone` is one of `scopes` or beneath one."""
    if scopes is None:
        return True
    return any(zone == str(scope) or zone.startswith(f"{scope}.") for scope in scopes)


def coordinate_from(
    text: Any, *, field: str = "coordinate", level: Level | None = None
) -> Coordinate:
    """Parse client input, turning a bad coordinate into a 400 that names the field."""
    try:
        return parse(text, level=level)
    except CoordinateError as error:
        raise ApplicationError(str(error), code="invalid_coordinate", field=field) from error


def unknown_zone(coordinate: Coordinate, *, field: str = "coordinate") -> NotFound:
    """The answer for a zone that does not exist, and the same for one the caller may not
    see: a different one (a 403) would tell who has no role there which zones exist."""
    return NotFound(f"unknown zone {coordinate}", code="unknown_zone", field=field)


def zone_get(coordinate: Coordinate, *, field: str = "coordinate") -> Zone:
    try:
        return Zone.objects.get(coordinate=str(coordinate))
    except Zone.DoesNotExist:
        raise unknown_zone(coordinate, field=field) from None


@dataclass(frozen=True, slots=True)
class EffectivePolicy:
    """The values that judge a zone's answers, and which versions they came from."""

    zone: str
    values: policy.PolicyValues
    own: dict[str, Any]
    own_version: int | None
    sources: dict[str, str]
    chain: tuple[tuple[str, int], ...]  # (coordinate, version) of every level that set a value

    @property
    def label(self) -> str:
        """A stable name of this exact policy, recorded on every decision it judges."""
        return (
            "/".join(f"{coordinate}@{version}" for coordinate, version in self.chain) or "default"
        )


def person_exists(username: str) -> bool:
    return get_user_model().objects.filter(username=username).exists()


def zone_has_own_policy(zone: Zone) -> bool:
    """Whether the zone's own policy was ever set (even back to inheriting everything)."""
    return zone.policy_versions.exists()


def latest_versions(coordinates: Iterable[str]) -> dict[str, ZonePolicyVersion]:
    latest: dict[str, ZonePolicyVersion] = {}
    rows = (
        ZonePolicyVersion.objects.filter(zone__coordinate__in=list(coordinates))
        .select_related("zone")
        .order_by("zone__depth", "-version")
    )
    for row in rows:
        latest.setdefault(row.zone.coordinate, row)
    return latest


def effective_policy(
    coordinate: Coordinate, *, replace: tuple[str, dict[str, Any]] | None = None
) -> EffectivePolicy:
    """Merge the lineage's newest overrides; `replace` tries new overrides for one level."""
    lineage = [str(c) for c in coordinate.lineage() if c.depth <= 4]
    latest = latest_versions(lineage)
    chain: list[tuple[str, dict[str, Any]]] = []
    versions: list[tuple[str, int]] = []
    for level in lineage:
        row = latest.get(level)
        overrides = row.overrides if row else {}
        if replace is not None and replace[0] == level:
            overrides = replace[1]
        elif row is not None:
            versions.append((level, row.version))
        if overrides:
            chain.append((level, overrides))
    zone = lineage[-1]
    own_row = latest.get(zone)
    return EffectivePolicy(
        zone=zone,
        values=policy.merge([overrides for _, overrides in chain]),
        own=dict(own_row.overrides) if own_row else {},
        own_version=own_row.version if own_row else None,
        sources=policy.sources(chain),
        chain=tuple(versions),
    )


def policy_history(zone: Zone, *, limit: int = 50) -> list[ZonePolicyVersion]:
    return list(zone.policy_versions.select_related("created_by").order_by("-version")[:limit])


def zone_tree(visible: Iterable[Zone]) -> list[dict[str, Any]]:
    """Nest zones under their parents; a zone whose parent is hidden becomes a root."""
    zones = sorted(visible, key=lambda z: (z.depth, z.coordinate))
    nodes: dict[int, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for zone in zones:
        node = {
            "coordinate": zone.coordinate,
            "level": zone.level,
            "name": zone.name,
            "children": [],
        }
        nodes[zone.pk] = node
        parent = nodes.get(zone.parent_id) if zone.parent_id else None
        (parent["children"] if parent else roots).append(node)
    return roots


# --- who may act where ------------------------------------------------------------------


def role_scopes(user: AnyUser, roles: Iterable[str] | None = None) -> list[Coordinate]:
    if not user.is_authenticated:
        return []
    rows = RoleAssignment.objects.filter(user_id=user.pk)
    if roles is not None:
        rows = rows.filter(role__in=list(roles))
    return [Coordinate.parse(scope) for scope in rows.values_list("scope", flat=True)]


def has_role(user: AnyUser, roles: Iterable[str], coordinate: Coordinate) -> bool:
    """True when one of `roles` is granted on a prefix that covers `coordinate`."""
    if getattr(user, "is_superuser", False):
        return True
    return any(scope.covers(coordinate) for scope in role_scopes(user, roles))


def agent_of(token: object) -> Coordinate | None:
    """The agent coordinate a request authenticated as, if it used an agent token."""
    if isinstance(token, ApiToken) and token.is_agent:
        return token.agent_coordinate
    return None


def can_see(user: AnyUser, coordinate: Coordinate, *, token: object = None) -> bool:
    """Anyone with a role above, on or below a zone may read it; an agent its own lineage."""
    if getattr(user, "is_superuser", False):
        return True
    agent = agent_of(token)
    if agent is not None:
        return coordinate.covers(agent)
    return any(scope.related(coordinate) for scope in role_scopes(user))


def visible_zones(user: AnyUser, *, token: object = None) -> list[Zone]:
    zones = list(Zone.objects.all())
    if getattr(user, "is_superuser", False):
        return zones
    return [z for z in zones if can_see(user, z.coord, token=token)]
