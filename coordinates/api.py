"""REST views for the zone tree and zone policies (thin: selectors and services do the work)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates import policy
from coordinates.coordinate import Coordinate
from coordinates.fields import coordinate_parameter
from coordinates.models import Role, Zone
from coordinates.selectors import (
    can_see,
    coordinate_from,
    effective_policy,
    has_role,
    policy_history,
    unknown_zone,
    visible_zones,
    zone_get,
    zone_tree,
)
from coordinates.services import policy_update
from maria.errors import ApplicationError, Forbidden
from maria.openapi import NOT_BLANK, error_responses

# The range of each number field of a policy, as policy.check_overrides enforces it: (low,
# high, whether low itself is refused). tests/coordinates/test_api.py holds the two to each
# other; the list fields (policy.LIST_FIELDS) are described by `_policy_list_schema`.
POLICY_RANGES: dict[str, tuple[float, float, bool]] = {
    **dict.fromkeys(
        (
            "tau",
            "delta",
            "floor",
            "refusal_floor",
            "cohesion_tau",
            "risk_threshold",
            "periodic_review_rate",
            "judge_confidence",
        ),
        (0.0, 1.0, False),
    ),
    **dict.fromkeys(policy.WEIGHT_FIELDS, (0.0, 1.0, False)),
    "gamma": (0.0, 1.0, True),
    "hops": (0, 10, False),
    "ppr_rho": (0.0, 1.0, True),
    "required_evidence": (0, 100, False),
    "min_sources": (1, 10, False),
    "approvals_required": (1, 5, False),
    "rereview_days": (1, 3650, False),
    "review_sla_hours": (0.0, 24.0 * 365, True),
}

# The fields whose high end is refused too (tests/coordinates/test_api.py).
HIGH_OPEN = frozenset({"ppr_rho"})


def _policy_list_schema(name: str, default: list[str]) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {"type": "string", "enum": list(policy.LIST_FIELDS[name])},
        "minItems": 0 if name in policy.MAY_BE_EMPTY else 1,
        "uniqueItems": True,
        "nullable": True,
        "description": (
            f"null or left out: inherited from above (default {', '.join(default)}); a list "
            "replaces the inherited one whole"
        ),
    }


def _policy_field_schema(name: str, default: Any) -> dict[str, Any]:
    if name in policy.LIST_FIELDS:
        return _policy_list_schema(name, default)
    if name in policy.CHOICE_FIELDS:
        return {
            "type": "string",
            "enum": list(policy.CHOICE_FIELDS[name]),
            "nullable": True,
            "description": f"null or left out: inherited from above (default {default})",
        }
    if name == "cohesion_tau":
        default = "none: graph_risk's tau_c, 0.05 / 0.15 / 0.30 / 0.50 from low to critical"
    low, high, low_open = POLICY_RANGES[name]
    schema: dict[str, Any] = {
        "type": "integer" if isinstance(default, int) else "number",
        "minimum": low,
        "maximum": high,
        "nullable": True,
        "description": f"null or left out: inherited from above (default {default})",
    }
    if low_open:
        schema["exclusiveMinimum"] = True
    if name in HIGH_OPEN:
        schema["exclusiveMaximum"] = True
    return schema


# A raw schema: every field's range, and no field beyond them (an unknown one is a 400).
PolicyWrite = {
    "application/json": {
        "type": "object",
        "properties": {
            "reason": {
                "type": "string",
                "pattern": NOT_BLANK,
                "description": "Why the thresholds change (kept in history).",
            },
            **{
                name: _policy_field_schema(name, default)
                for name, default in policy.SYSTEM_DEFAULT.as_dict().items()
            },
        },
        "required": ["reason"],
        "additionalProperties": False,
    }
}
PolicyRead = inline_serializer(
    "PolicyRead",
    {
        "zone": serializers.CharField(),
        "level": serializers.CharField(),
        "version": serializers.IntegerField(allow_null=True),
        "policy_label": serializers.CharField(),
        "effective": serializers.DictField(),
        "own": serializers.DictField(),
        "sources": serializers.DictField(child=serializers.CharField()),
        "history": inline_serializer(
            "PolicyVersion",
            {
                "version": serializers.IntegerField(),
                "overrides": serializers.DictField(),
                "created_by": serializers.CharField(allow_null=True),
                "created_at": serializers.DateTimeField(),
                "reason": serializers.CharField(),
            },
            many=True,
        ),
    },
)
_COORDINATE = coordinate_parameter(
    "coordinate", location=OpenApiParameter.PATH, description="a zone-tree node, G to G.U.P.Z"
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
        responses={
            200: inline_serializer(
                "ZoneTree",
                {
                    "zones": serializers.ListField(
                        child=serializers.DictField(),
                        help_text="{coordinate, level, name, children: [...]}, nested",
                    )
                },
            ),
            **error_responses(),
        },
    )
    def get(self, request: Request) -> Response:
        zones = visible_zones(request.user, token=request.auth)
        return Response({"zones": zone_tree(zones)})


class ZonePolicyView(APIView):
    def _zone(self, request: Request, coordinate: str) -> tuple[Coordinate, Zone]:
        coord = coordinate_from(coordinate)
        if coord.depth > 4:
            raise ApplicationError(
                gettext("%(coordinate)s is an agent; policies belong to zones and above")
                % {"coordinate": coord},
                field="coordinate",
            )
        if not can_see(request.user, coord, token=request.auth):
            raise unknown_zone(coord)  # as for a zone that does not exist: no oracle
        return coord, zone_get(coord)

    @extend_schema(
        summary="Effective and own policy of a zone",
        parameters=[_COORDINATE],
        responses={200: PolicyRead, **error_responses(400, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        _, zone = self._zone(request, coordinate)
        return Response(policy_representation(zone))

    @extend_schema(
        summary="Set the zone's own overrides as a new version (zone admins of its scope)",
        request=PolicyWrite,
        parameters=[_COORDINATE],
        responses={200: PolicyRead, **error_responses(400, 403, 404)},
    )
    def put(self, request: Request, coordinate: str) -> Response:
        coord, zone = self._zone(request, coordinate)
        if request.auth is not None and getattr(request.auth, "is_agent", False):
            raise _forbidden(gettext("agents cannot change policies"))
        if not has_role(request.user, [Role.ZONE_ADMIN], coord):
            raise _forbidden(
                gettext("only a zone admin of %(zone)s or above may change its policy")
                % {"zone": coord}
            )
        body = request.data
        if not isinstance(body, dict):
            raise ApplicationError(gettext("the body must be a JSON object"), field=None)
        overrides = {key: value for key, value in body.items() if key != "reason"}
        actor = request.user if isinstance(request.user, User) else None
        policy_update(zone=zone, overrides=overrides, reason=body.get("reason", ""), actor=actor)
        return Response(policy_representation(zone))
