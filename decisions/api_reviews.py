"""The reviews export: `GET /api/v1/reviews/export/?zone=&since=`, every reviewed claim as
one JSON line, the labelled examples a team refits the claim verifier on
(`manage.py fit_verifier --corpus export.jsonl`, read by `evidence.corpora.reviews`).

Thin: the rows are the reviewers' ClaimVerdicts, scoped to the zones the caller holds a zone
admin or auditor role on; each line is cut from the decision's validation report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.http import StreamingHttpResponse
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from coordinates.coordinate import Coordinate
from coordinates.fields import coordinate_parameter
from coordinates.models import Role
from coordinates.selectors import agent_of, beneath, coordinate_from, role_scopes, within, zone_get
from decisions.models import ClaimVerdict
from evidence.models import ValidationReport
from maria.errors import ApplicationError, Forbidden
from maria.jsonlines import CONTENT_TYPE, JSONLinesRenderer, download, parse_since
from maria.openapi import error_responses

EXPORT_ROLES = (Role.ZONE_ADMIN, Role.AUDITOR)
LINE_TYPE = "review.claim"  # what evidence.corpora.read recognises the export by
CHUNK = 500  # verdicts read (and lines sent) at a time


def export_scope(user: Any, token: object, zone: Coordinate | None) -> Q:
    """The verdicts the caller may export: those of the zones they hold a zone admin or
    auditor role on (everything for a superuser), narrowed to `zone` and beneath. 403 for an
    agent, for someone holding neither role, and for a zone none of their roles touches."""
    if agent_of(token) is not None:
        raise Forbidden(gettext("agents cannot export reviews"))
    if getattr(user, "is_superuser", False):
        scopes = None
    else:
        scopes = role_scopes(user, EXPORT_ROLES)
        if not scopes:
            raise Forbidden(gettext("the reviews export is for zone admins and auditors"))
        if zone is not None and not any(scope.related(zone) for scope in scopes):
            raise Forbidden(
                gettext("%(zone)s is outside the zones you administer or audit") % {"zone": zone}
            )
    rows = within(scopes)
    if zone is not None:
        rows &= beneath(zone)
    return rows


def _best_item(claim: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The evidence item the engine's probability came from (the highest, as
    decisions.services.engine_verdict takes it); else the first kept item, else the first."""
    items = [i for i in claim.get("evidence", []) if isinstance(i, Mapping)]
    scored = [
        i for i in items if isinstance((i.get("signals") or {}).get("probability"), int | float)
    ]
    if scored:
        return max(scored, key=lambda i: float(i["signals"]["probability"]))
    return next((i for i in items if i.get("kept")), items[0] if items else None)


def aligned_span(item: Mapping[str, Any] | None) -> str:
    """The part of the item's span the claim was aligned to (`aligned` offsets into `span`),
    or the whole span when the citation named its own offsets."""
    if item is None:
        return ""
    span = str(item.get("span") or "")
    aligned = item.get("aligned")
    if isinstance(aligned, list | tuple) and len(aligned) == 2:
        start, end = (int(x) for x in aligned)
        if 0 <= start < end <= len(span):
            return span[start:end]
    return span


def review_line(verdict: ClaimVerdict, body: Mapping[str, Any]) -> dict[str, Any]:
    """One reviewed claim: the claim, the span it was checked on with the item's signals,
    the engine's verdict and probability, the reviewer's, and the model versions."""
    claims = body.get("claims") or []
    claim: Mapping[str, Any] = claims[verdict.claim] if verdict.claim < len(claims) else {}
    item = _best_item(claim)
    return {
        "type": LINE_TYPE,
        "decision": verdict.decision_id,
        "zone": verdict.zone,
        "claim_index": verdict.claim,
        "claim": str(claim.get("text") or ""),
        "span": aligned_span(item),
        "signals": dict(item.get("signals") or {}) if item is not None else {},
        "engine_probability": verdict.engine_probability,
        "engine_supported": verdict.engine_supported,
        "reviewer_supported": verdict.supported,
        "note": verdict.note,
        "reviewer": verdict.reviewer.get_username(),
        "action": verdict.action,
        "verifier": body.get("verifier"),
        "calibration": body.get("calibration"),
        "created_at": verdict.created_at.isoformat(),
    }


def review_lines(rows: Q, since: datetime | None) -> Iterator[str]:
    """The lines, oldest verdict first, read CHUNK verdicts at a time by primary key (no
    cursor held open between chunks, so it streams the same on both backends and under
    ASGI), with one read of the reports the chunk's decisions carry."""
    verdicts = ClaimVerdict.objects.filter(rows).select_related("reviewer", "decision")
    if since is not None:
        verdicts = verdicts.filter(created_at__gte=since)
    after = 0
    while True:
        chunk = list(verdicts.filter(pk__gt=after).order_by("pk")[:CHUNK])
        if not chunk:
            return
        after = chunk[-1].pk
        report_ids = {v.decision.report_id for v in chunk if v.decision.report_id is not None}
        bodies = dict(ValidationReport.objects.filter(pk__in=report_ids).values_list("pk", "body"))
        for verdict in chunk:
            report_id = verdict.decision.report_id
            body = (bodies.get(report_id) if report_id is not None else None) or {}
            line = review_line(verdict, body)
            yield json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"


class ReviewsExportView(APIView):
    renderer_classes = [JSONRenderer, JSONLinesRenderer]

    @extend_schema(
        summary="Export reviewed claims as JSON Lines (zone admins, auditors)",
        operation_id="reviews_export",
        description=(
            "One line per reviewer's verdict on a claim, oldest first: `type` review.claim, "
            "`decision`, `zone`, `claim_index`, `claim` (its text), `span` (the part of the "
            "cited paragraph the claim was aligned to), `signals` (the evidence item's), "
            "`engine_probability` (the global verifier's P(supported)), `engine_supported`, "
            "`reviewer_supported`, `note`, `reviewer`, `action` (approve or reject), "
            "`verifier` (the model version), `calibration` (the zone calibration's version, "
            "or null) and `created_at`. `manage.py fit_verifier --corpus FILE` reads it."
        ),
        parameters=[
            coordinate_parameter("zone", description="this zone-tree node and the zones beneath"),
            OpenApiParameter(
                "since",
                {
                    "anyOf": [
                        {"type": "string", "format": "date-time"},
                        {"type": "string", "format": "date"},
                        {"type": "string", "enum": [""]},
                    ]
                },
                description=(
                    "verdicts recorded at or after this time (ISO 8601; UTC when no offset is "
                    "given; a date means its midnight; empty: from the first)"
                ),
            ),
        ],
        responses={
            (200, CONTENT_TYPE): OpenApiResponse(OpenApiTypes.STR, description="JSON Lines"),
            **error_responses(400, 403, 404),
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        params = request.query_params
        zone = coordinate_from(params["zone"], field="zone") if params.get("zone") else None
        if zone is not None and zone.depth > 4:
            raise ApplicationError(
                gettext("%(zone)s is an agent; reviews are kept per zone") % {"zone": zone},
                field="zone",
            )
        since = parse_since(params["since"]) if params.get("since") else None
        rows = export_scope(request.user, request.auth, zone)
        if zone is not None:
            zone_get(zone, field="zone")  # only now: an outsider learns nothing about zones
        lines = review_lines(rows, since)
        return download(request._request, lines, f"reviews-{zone or 'all'}")
