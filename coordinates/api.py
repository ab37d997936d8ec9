"""REST views for the zone tree and zone policies (thin: selectors and services do the work)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates import policy
from coordinates.coordinate import Coordinate
from coordinates.models import Role, Zone
from coordinates.selectors import (
    can_see,
    coordinate_from,
    effective_policy,
    has_role,
    policy_history,
    visible_zones,
    zone_get,
    zone_tree,
)
from coordinates.services import policy_update
from maria.errors import ApplicationError, Forbidden

_POLICY_FIELDS = {
    name: (
        serializers.IntegerField(required=False, allow_null=True)
        if isinstance(default, int)
        else serializers.FloatField(required=False, allow_null=True)
    )
    for name, default in policy.SYSTEM_DEFAULT.as_dict().items()
}
PolicyWrite = inline_serializer(
    "PolicyWrite",
    {
        "reason": serializers.CharField(help_text="Why the thresholds change (kept in history)."),
        **_POLICY_FIELDS,
    },
)
PolicyRead = inline_serializer(
    "PolicyRead",
    {
        "zone": serializers.CharField(),
        "version": serializers.IntegerField(allow_null=True),
        "policy_label": serializers.CharField(),
        "effective": serializers.DictField(),
        "own": serializers.DictField(),
        "sources": serializers.DictField(child=serializers.CharField()),
        "history": serializers.ListField(child=serializers.DictField()),
    },
)


def _forbidden(message: str) -> ApplicationError:
    return Forbidden(message)


def policy_representation(zone: Zone) -> dict[str, Any]:
    current = effective_policy(zone.coord)
    return {
        "zone": zone.coordinate,
        "level": zone.level,
        "version": current.own_version,
        "policy_label": current.label,
        "effective": current.values.as_dict(),
        "own": current.own,
        "sources": current.sources,
        "history": [
            {
                "version": row.version,
                "overrides": row.overrides,
                "created_by": row.created_by.get_username() if row.created_by else None,
                "created_at": row.created_at.isoformat(),
                "reason": row.reason,
            }
            for row in policy_history(zone)
        ],
    }


class ZoneTreeView(APIView):
    @extend_schema(
        summary="The zone tree you can see",
        responses=inline_serializer("ZoneTree", {"zones": serializers.ListField()}),
    )
    def get(self, request: Request) -> Response:
        zones = visible_zones(request.user, token=request.auth)
        return Response({"zones": zone_tree(zones)})


class ZonePolicyView(APIView):
    def _zone(self, request: Request, coordinate: str) -> tuple[Coordinate, Zone]:
        coord = coordinate_from(coordinate)
        if coord.depth > 4:
            raise ApplicationError(
                f"{coord} is an agent; policies belong to zones and above", field="coordinate"
            )
        zone = zone_get(coord)
        if not can_see(request.user, coord, token=request.auth):
            raise _forbidden(f"you have no role on or around {coord}")
        return coord, zone

    @extend_schema(summary="Effective and own policy of a zone", responses=PolicyRead)
    def get(self, request: Request, coordinate: str) -> Response:
        _, zone = self._zone(request, coordinate)
        return Response(policy_representation(zone))

    @extend_schema(
        summary="Set the zone's own overrides as a new version (zone admins of its scope)",
        request=PolicyWrite,
        responses={200: PolicyRead, 400: OpenApiResponse(description="invalid value")},
    )
    def put(self, request: Request, coordinate: str) -> Response:
        coord, zone = self._zone(request, coordinate)
        if request.auth is not None and getattr(request.auth, "is_agent", False):
            raise _forbidden("agents cannot change policies")
        if not has_role(request.user, [Role.ZONE_ADMIN], coord):
            raise _forbidden(f"only a zone admin of {coord} or above may change its policy")
        body = request.data
        if not isinstance(body, dict):
            raise ApplicationError("the body must be a JSON object", field=None)
        overrides = {key: value for key, value in body.items() if key != "reason"}
        actor = request.user if isinstance(request.user, User) else None
        policy_update(zone=zone, overrides=overrides, reason=body.get("reason", ""), actor=actor)
        return Response(policy_representation(zone))
