"""REST views of a zone's calibrations of the claim verifier: list the versions, preview one
(what-if over the last 30 days' gates) and adopt one. Thin: `decisions.calibration` does
the work and checks who may act again."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.utils.translation import gettext
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.fields import coordinate_parameter
from coordinates.models import Zone
from coordinates.selectors import agent_of, coordinate_from
from decisions import calibration as service
from evidence.validation import adopted_calibrations
from maria.errors import ApplicationError, Forbidden, NotAuthenticated, NotFound
from maria.openapi import NOT_BLANK, error_responses, id_schema

_COORDINATE = coordinate_parameter(
    "coordinate", location=OpenApiParameter.PATH, description="a zone-tree node, G to G.U.P.Z"
)
_VERSION = OpenApiParameter(
    "version",
    id_schema(),
    OpenApiParameter.PATH,
    required=True,
    description="the zone's calibration version (1, 2, ...)",
)


class ReliabilityOut(serializers.Serializer):
    """evidence.calibration.Reliability.as_dict(): lower figures are better."""

    n = serializers.IntegerField(help_text="held-back verdicts measured")
    brier = serializers.FloatField(allow_null=True)
    log_loss = serializers.FloatField(allow_null=True)
    ece = serializers.FloatField(allow_null=True, help_text="expected calibration error")
    bins = serializers.ListField(
        child=serializers.DictField(),
        help_text="{lower, upper, count, mean_probability, observed_rate} per bin",
    )


# A pattern, not an enum: drf-spectacular makes every enum a component named after its
# field, and a second "status" enum would rename the documents' one in clients' schemas.
@extend_schema_field(
    {
        "type": "string",
        "pattern": "^(proposed|adopted|retired)$",
        "description": "proposed, adopted (judges the zone now) or retired",
    }
)
class _StatusField(serializers.CharField):
    pass


class CalibrationOut(serializers.Serializer):
    """One calibration version of a zone (decisions.calibration.calibration_json)."""

    zone = serializers.CharField()
    version = serializers.IntegerField()
    status = _StatusField()
    method = serializers.CharField()
    params = serializers.DictField(
        child=serializers.FloatField(), help_text="p' = sigmoid(a*logit(p) + b)"
    )
    verdicts = serializers.IntegerField(help_text="reviewer verdicts it was fitted on")
    window_from = serializers.DateTimeField()
    window_until = serializers.DateTimeField()
    fitted_by = serializers.CharField()
    reliability_before = ReliabilityOut(help_text="the global probability")
    reliability_after = ReliabilityOut(help_text="calibrated")
    adopted_at = serializers.DateTimeField(allow_null=True)
    adopted_by = serializers.CharField(allow_null=True)
    adopt_reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


CalibrationList = inline_serializer(
    "ZoneCalibrationList",
    {
        "zone": serializers.CharField(),
        "in_force": inline_serializer(
            "CalibrationInForce",
            {"zone": serializers.CharField(), "version": serializers.IntegerField()},
            allow_null=True,
            help_text="the calibration judging the zone's answers now (its own or an "
            "ancestor's); null: the global model alone",
        ),
        "versions": CalibrationOut(many=True),
    },
)
PreviewOut = inline_serializer(
    "CalibrationPreview",
    {
        "zone": serializers.CharField(),
        "version": serializers.IntegerField(),
        "days": serializers.IntegerField(),
        "decisions": serializers.IntegerField(help_text="decisions replayed"),
        "changed": serializers.IntegerField(help_text="decisions whose gate would change"),
        "stricter": serializers.IntegerField(),
        "looser": serializers.IntegerField(),
        "old": serializers.DictField(child=serializers.IntegerField()),
        "new": serializers.DictField(child=serializers.IntegerField()),
        "moves": serializers.ListField(
            child=serializers.DictField(), help_text="{from, to, count} per change of gate"
        ),
        "changed_decisions": serializers.ListField(child=serializers.IntegerField()),
    },
)
AdoptIn = {
    "application/json": {
        "type": "object",
        "properties": {
            "reason": {
                "type": "string",
                "pattern": NOT_BLANK,
                "maxLength": service.REASON_LIMIT,
                "description": "Why this calibration should judge the zone's answers (on the "
                "trail).",
            }
        },
        "required": ["reason"],
    }
}


def _person(request: Request) -> User:
    if not isinstance(request.user, User):
        raise NotAuthenticated(gettext("sign in first"))
    if agent_of(request.auth) is not None:
        raise Forbidden(gettext("agents have no say in calibrations"))
    return request.user


def _zone(request: Request, coordinate: str) -> Zone:
    """The zone, when the user may read its calibrations; otherwise 404, as for a zone that
    does not exist (another zone's coordinate says nothing about it)."""
    coord = coordinate_from(coordinate)
    if coord.depth > 4:
        raise ApplicationError(
            gettext("%(coordinate)s is an agent, not a zone") % {"coordinate": coord},
            field="coordinate",
        )
    person = _person(request)  # first: an agent is refused alike whether the zone exists
    zone = Zone.objects.filter(coordinate=str(coord)).first()
    if zone is None or not service.may_read(person, zone):
        raise NotFound(
            gettext("unknown zone %(zone)s") % {"zone": coord},
            code="unknown_zone",
            field="coordinate",
        )
    return zone


def calibration_list_json(zone: Zone) -> dict[str, Any]:
    current = adopted_calibrations([zone.coordinate]).get(zone.coordinate)
    return {
        "zone": zone.coordinate,
        "in_force": current.as_dict() if current is not None else None,
        "versions": [service.calibration_json(row) for row in service.calibration_versions(zone)],
    }


class ZoneCalibrationListView(APIView):
    @extend_schema(
        summary="The zone's calibration versions (zone admins and auditors of it or above)",
        parameters=[_COORDINATE],
        responses={200: CalibrationList, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        return Response(calibration_list_json(_zone(request, coordinate)))


class ZoneCalibrationPreviewView(APIView):
    @extend_schema(
        summary="What-if: how the last 30 days' gates would change with this version",
        request=None,
        parameters=[_COORDINATE, _VERSION],
        responses={200: PreviewOut, **error_responses(400, 403, 404)},
    )
    def post(self, request: Request, coordinate: str, version: int) -> Response:
        zone = _zone(request, coordinate)
        preview = service.calibration_preview(zone=zone, version=version, user=request.user)
        return Response(preview.as_dict())


class ZoneCalibrationAdoptView(APIView):
    @extend_schema(
        summary="Adopt this version for the zone (zone admins of it or above; a reason)",
        request=AdoptIn,
        parameters=[_COORDINATE, _VERSION],
        responses={200: CalibrationOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request: Request, coordinate: str, version: int) -> Response:
        zone = _zone(request, coordinate)
        body = request.data
        if not isinstance(body, dict):
            raise ApplicationError(gettext("the body must be a JSON object"), field=None)
        row = service.calibration_adopt(
            zone=zone, version=version, user=_person(request), reason=body.get("reason", "")
        )
        return Response(service.calibration_json(row))
