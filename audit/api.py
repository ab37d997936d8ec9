"""The trail export: `GET /api/v1/trail/?zone=&since=`, JSON Lines for auditors.

Thin: the scope comes from the auditor's role assignments (coordinates.selectors), the lines
from `trail.export.export_lines`. The file verifies offline with `verify_trail --file`.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit import integrity
from coordinates.coordinate import Coordinate
from coordinates.fields import coordinate_parameter
from coordinates.models import Role
from coordinates.selectors import agent_of, coordinate_from, has_role, role_scopes, zone_get
from maria.errors import ApplicationError, Forbidden, NotFound
from maria.jsonlines import CONTENT_TYPE, JSONLinesRenderer, download, parse_since
from trail import export, signing


def _forbidden(message: str) -> ApplicationError:
    return Forbidden(message)


def _scopes(request: Request, zone: Coordinate | None) -> list[Coordinate] | None:
    """The chains this auditor may export: None means all of them (superusers)."""
    user = request.user
    if agent_of(request.auth) is not None:
        raise _forbidden(gettext("agents cannot read the trail"))
    superuser = bool(getattr(user, "is_superuser", False))
    scopes = None if superuser else role_scopes(user, [Role.AUDITOR])
    if scopes is not None and not scopes:
        raise _forbidden(gettext("the trail is for auditors; you hold no auditor role"))
    if zone is None:
        return scopes
    if not has_role(user, [Role.AUDITOR], zone):
        raise _forbidden(gettext("%(zone)s is outside your auditor scope") % {"zone": zone})
    return [zone]


class TrailExportView(APIView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @extend_schema(
        summary="Export the trail as JSON Lines (auditors, scoped to their zones)",
        description=(
            "Lines: a trail.export header, the latest checkpoint's entries for the exported "
            "chains, every trail.event (chain, seq, prev_hash, hash and the exact hashed "
            "bytes as `canonical`), and a trail.end line. Verify offline with "
            "`manage.py verify_trail --file EXPORT`."
        ),
        parameters=[
            coordinate_parameter(
                "zone",
                description="A zone-tree coordinate: its chain and every chain beneath it",
            ),
            OpenApiParameter(
                "include",
                OpenApiTypes.STR,
                enum=["evidence"],
                description=(
                    "`evidence`: after the events, the bundles, reports and cited paragraphs "
                    "(with their versions' hashes) the exported events name, so that "
                    "`verify_trail --file` re-hashes them offline."
                ),
            ),
            OpenApiParameter(
                "since",
                OpenApiTypes.DATETIME,
                description=(
                    "Each chain from its first event at or after this time (ISO 8601; UTC "
                    "when no offset is given; a date means its midnight)."
                ),
            ),
        ],
        responses={
            (200, CONTENT_TYPE): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines"),
            400: OpenApiResponse(description="bad zone or since"),
            403: OpenApiResponse(description="not an auditor of that zone"),
            404: OpenApiResponse(description="unknown zone"),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        zone: Coordinate | None = None
        # Empty (`?zone=`) is left out, as every other zone filter reads it
        # (coordinates.fields.coordinate_parameter); it was a 400 the schema allowed.
        zone_text = request.query_params.get("zone")
        if zone_text:
            zone = coordinate_from(zone_text, field="zone")
            if zone.depth > 4:
                raise ApplicationError(
                    gettext("%(zone)s is an agent; the trail is kept per zone-tree node")
                    % {"zone": zone},
                    field="zone",
                )
        since_text = request.query_params.get("since")
        since = parse_since(since_text) if since_text is not None else None
        include = request.query_params.get("include")
        if include not in (None, "evidence"):
            raise ApplicationError(gettext("include takes one value: evidence"), field="include")
        scopes = _scopes(request, zone)
        if zone is not None:
            zone_get(zone, field="zone")  # only now: an outsider learns nothing about zones
        if zone is not None:
            label = str(zone)
        else:
            label = "all" if scopes is None else ",".join(map(str, scopes))
        lines = export.export_lines(
            scopes=scopes,
            since=since,
            label=label,
            appendix=integrity.evidence_records if include == "evidence" else None,
        )
        return download(request._request, lines, f"trail-{zone or 'all'}")


class TrailPublicKeyView(APIView):
    """The key that verifies the checkpoints' signatures: public, for auditors to keep."""

    permission_classes = [AllowAny]

    @extend_schema(
        summary="The public key that verifies the trail's checkpoint signatures",
        description=(
            "Ed25519, the 32 raw bytes in base64, and the key id each signed checkpoint "
            "names. Keep a copy outside this system and pass it to "
            "`manage.py verify_trail --public-key`. 404 when checkpoints are not signed."
        ),
        responses={
            200: inline_serializer(
                "TrailPublicKey",
                {
                    "algorithm": serializers.CharField(),
                    "key_id": serializers.CharField(),
                    "public_key": serializers.CharField(),
                },
            ),
            404: OpenApiResponse(description="no signing key is configured"),
        },
    )
    def get(self, request: Request) -> Response:
        key = signing.public_key()
        if key is None:
            raise NotFound(gettext("checkpoints are not signed here (no MARIA_TRAIL_SIGNING_KEY)"))
        return Response(
            {"algorithm": signing.ALGORITHM, "key_id": key.key_id, "public_key": key.text}
        )
