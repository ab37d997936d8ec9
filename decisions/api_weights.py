"""REST views of a zone's learned confidence weights w1..w4 (seed 000 §4.5): the proposal
(a fit with held-back figures), adopt it, roll back to an earlier version's weights. Thin:
`decisions.confidence_weights` does the work and checks who may act again."""

from __future__ import annotations

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.models import ZonePolicyVersion
from decisions import confidence_weights as service
from decisions.api_calibration import _COORDINATE, _person, _zone
from decisions.calibration import REASON_LIMIT
from maria.errors import ApplicationError
from maria.openapi import NOT_BLANK, error_responses


def _figures(name: str) -> serializers.Serializer:  # type: ignore[type-arg]
    fields: dict[str, serializers.Field] = {  # type: ignore[type-arg]
        "n": serializers.IntegerField(help_text="held-back verdicts measured"),
        "brier": serializers.FloatField(allow_null=True),
        "log_loss": serializers.FloatField(allow_null=True),
        "accuracy": serializers.FloatField(allow_null=True, help_text="p >= 0.5 agrees"),
    }
    return inline_serializer(name, fields)


_WEIGHTS = serializers.DictField(child=serializers.FloatField(), help_text="w1..w4")
ProposalOut = inline_serializer(
    "ConfidenceWeightsProposal",
    {
        "zone": serializers.CharField(),
        "verdicts": serializers.IntegerField(help_text="verdicts on claims with evidence"),
        "fingerprint": serializers.CharField(help_text="give it back to adopt this fit"),
        "why_not": serializers.CharField(allow_null=True, help_text="why there is no fit"),
        "window_from": serializers.DateTimeField(allow_null=True),
        "window_until": serializers.DateTimeField(allow_null=True),
        "fit": inline_serializer(
            "ConfidenceWeightsFit",
            {
                "method": serializers.CharField(),
                "weights": _WEIGHTS,
                "current": _WEIGHTS,
                "fitted_on": serializers.IntegerField(),
                "held_back_before": _figures("WeightsFiguresBefore"),
                "held_back_after": _figures("WeightsFiguresAfter"),
            },
            allow_null=True,
        ),
    },
)
PolicyVersionOut = inline_serializer(
    "ConfidenceWeightsPolicyVersion",
    {
        "zone": serializers.CharField(),
        "version": serializers.IntegerField(),
        "overrides": serializers.DictField(),
        "reason": serializers.CharField(),
    },
)


def _body(request: Request) -> dict[str, object]:
    if not isinstance(request.data, dict):
        raise ApplicationError(gettext("the body must be a JSON object"), field=None)
    return request.data


def _reason_schema(extra: dict[str, object], required: list[str]) -> dict[str, object]:
    return {
        "application/json": {
            "type": "object",
            "properties": {
                "reason": {"type": "string", "pattern": NOT_BLANK, "maxLength": REASON_LIMIT},
                **extra,
            },
            "required": ["reason", *required],
        }
    }


class ConfidenceWeightsView(APIView):
    @extend_schema(
        summary="A fit of the zone's confidence weights from its reviewers' verdicts, with "
        "held-back figures beside the current weights' (zone admins and auditors)",
        parameters=[_COORDINATE],
        responses={200: ProposalOut, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        zone = _zone(request, coordinate)
        return Response(service.weights_propose(zone=zone, user=request.user).as_dict())


def _version_json(row: ZonePolicyVersion) -> dict[str, object]:
    return {
        "zone": row.zone.coordinate,
        "version": row.version,
        "overrides": row.overrides,
        "reason": row.reason,
    }


class ConfidenceWeightsAdoptView(APIView):
    @extend_schema(
        summary="Make the proposed weights the zone's own (a new policy version; zone admins)",
        request=_reason_schema({"fingerprint": {"type": "string"}}, ["fingerprint"]),
        parameters=[_COORDINATE],
        responses={200: PolicyVersionOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request: Request, coordinate: str) -> Response:
        zone = _zone(request, coordinate)
        body = _body(request)
        row = service.weights_adopt(
            zone=zone,
            user=_person(request),
            reason=body.get("reason"),
            fingerprint=body.get("fingerprint"),
        )
        return Response(_version_json(row))


class ConfidenceWeightsRollbackView(APIView):
    @extend_schema(
        summary="Weights as in an earlier policy version of the zone (a new version)",
        request=_reason_schema({"version": {"type": "integer", "minimum": 1}}, ["version"]),
        parameters=[_COORDINATE],
        responses={200: PolicyVersionOut, **error_responses(400, 403, 404)},
    )
    def post(self, request: Request, coordinate: str) -> Response:
        zone = _zone(request, coordinate)
        body = _body(request)
        row = service.weights_rollback(
            zone=zone, user=_person(request), reason=body.get("reason"), version=body.get("version")
        )
        return Response(_version_json(row))
