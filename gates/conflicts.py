"""Knowledge-base conflicts as the zone admin's work: the page `/zones/{coordinate}/conflicts/`
and `GET /api/v1/zones/{coordinate}/conflicts/`, `POST /api/v1/conflicts/{id}/resolve/`.

Each conflict shows both paragraphs (document, version, the disagreeing words marked) and the
decisions that cited either side; resolving it is `evidence.knowledge.conflict_resolve`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.fields import coordinate_parameter
from coordinates.selectors import beneath, coordinate_from
from decisions.models import Decision
from evidence.knowledge import CITED_WITHIN_DAYS, conflict_resolve
from evidence.models import KnowledgeConflict, Paragraph
from gates import selectors
from gates.presenters import marked
from maria.errors import ApplicationError, Forbidden, NotFound
from maria.openapi import error_responses, path_id
from maria.strict import StrictSerializer


@dataclass(frozen=True, slots=True)
class Side:
    document: int
    version: int
    paragraph: int
    title: str
    text: str
    current: bool
    parts: list[tuple[str, bool]]  # the text in pieces, True where a disagreeing word is


@dataclass(frozen=True, slots=True)
class ConflictRow:
    conflict: KnowledgeConflict
    first: Side
    second: Side
    cited_by: list[int]  # decision ids, newest first


def _side(paragraph: Paragraph, words: list[str]) -> Side:
    version = paragraph.version
    return Side(
        document=version.document_id,
        version=version.version,
        paragraph=paragraph.number,
        title=version.title,
        text=paragraph.text,
        current=paragraph.current,
        parts=marked(paragraph.text, words),
    )


def _cites(claims: Any, side: Side) -> bool:
    for claim in claims or ():
        for citation in claim.get("citations", ()) if isinstance(claim, dict) else ():
            if not isinstance(citation, dict) or citation.get("document") != side.document:
                continue
            if citation.get("version") not in (None, side.version):
                continue
            if citation.get("paragraph") in (None, side.paragraph):
                return True
    return False


def conflict_rows(zone: str, *, state: str = "open") -> list[ConflictRow]:
    """The zone's conflicts (and those beneath it), each with the decisions of the last
    CITED_WITHIN_DAYS days that cited either side."""
    rows = KnowledgeConflict.objects.filter(beneath(zone)).select_related(
        "first__version", "second__version", "resolved_by"
    )
    rows = rows.filter(resolved_at__isnull=state == "open").order_by("kind", "-created_at")
    conflicts = list(rows[:200])
    if not conflicts:
        return []
    since = timezone.now() - timedelta(days=CITED_WITHIN_DAYS)
    recent = (
        Decision.objects.filter(beneath(zone), created_at__gte=since)
        .order_by("-created_at")
        .values_list("pk", "bundle__claims")
    )
    cited = [(pk, claims) for pk, claims in recent.iterator(chunk_size=500) if claims]
    out = []
    for conflict in conflicts:
        first, second = (
            _side(conflict.first, conflict.words),
            _side(conflict.second, conflict.words),
        )
        citing = [pk for pk, claims in cited if _cites(claims, first) or _cites(claims, second)]
        out.append(ConflictRow(conflict, first, second, citing))
    return out


def _side_json(side: Side) -> dict[str, Any]:
    out = asdict(side)
    del out["parts"]
    return out


def _row_json(row: ConflictRow) -> dict[str, Any]:
    c = row.conflict
    return {
        "id": c.pk,
        "zone": c.zone,
        "kind": c.kind,
        "reason": c.reason,
        "words": c.words,
        "found_by": c.found_by,
        "created_at": c.created_at.isoformat(),
        "first": _side_json(row.first),
        "second": _side_json(row.second),
        "cited_by": row.cited_by,
        "resolution": c.resolution or None,
        "resolution_reason": c.resolution_reason or None,
        "resolved_by": c.resolved_by.get_username() if c.resolved_by else None,
        "resolved_at": c.resolved_at.isoformat() if c.resolved_at else None,
    }


def _state(value: Any) -> str:
    state = value or "open"
    if state not in ("open", "resolved"):
        raise ApplicationError(_("state must be open or resolved"), field="state")
    return str(state)


# --- the API ---------------------------------------------------------------------------------


class ZoneConflictsView(APIView):
    @extend_schema(
        summary="The zone's knowledge-base conflicts, with both sides and the decisions citing "
        "them (zone admins)",
        parameters=[
            coordinate_parameter(
                "coordinate", location="path", description="a zone-tree node, G to G.U.P.Z"
            ),
            OpenApiParameter("state", OpenApiTypes.STR, enum=["open", "resolved"]),
        ],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        coordinate_from(coordinate)
        zone = selectors.zone_for_admin(request.user, coordinate)
        state = _state(request.query_params.get("state"))
        rows = conflict_rows(zone.coordinate, state=state)
        return Response(
            {"zone": zone.coordinate, "state": state, "conflicts": [_row_json(r) for r in rows]}
        )


class ResolveIn(StrictSerializer):
    resolution = serializers.ChoiceField(choices=KnowledgeConflict.Resolution.choices)
    reason = serializers.CharField(max_length=2000)


class ConflictResolveView(APIView):
    @extend_schema(
        summary="Say which side of a knowledge-base conflict governs, with a reason (zone "
        "admins; on the trail)",
        parameters=[path_id(description="the conflict")],
        request=ResolveIn,
        responses={
            200: inline_serializer(
                "ConflictResolved",
                {"id": serializers.IntegerField(), "resolution": serializers.CharField()},
            ),
            **error_responses(400, 403, 404, 409),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        body = ResolveIn(data=request.data)
        body.is_valid(raise_exception=True)
        conflict = conflict_resolve(
            conflict_id=pk,
            user=request.user,  # type: ignore[arg-type]  # authenticated by the API's settings
            resolution=body.validated_data["resolution"],
            reason=body.validated_data["reason"],
        )
        return Response({"id": conflict.pk, "resolution": conflict.resolution})


# --- the page --------------------------------------------------------------------------------


@login_required
@require_GET
def zone_conflicts(request: HttpRequest, coordinate: str) -> HttpResponse:
    zone = selectors.zone_for_admin(request.user, coordinate)
    state = request.GET.get("state") or "open"
    if state not in ("open", "resolved"):
        state = "open"
    rows = conflict_rows(zone.coordinate, state=state)
    return render(
        request,
        "zone_admin/conflicts.html",
        {
            "zone": zone,
            "state": state,
            "rows": rows,
            "resolutions": KnowledgeConflict.Resolution.choices,
        },
    )


@login_required
@require_POST
def conflict_resolve_page(request: HttpRequest, coordinate: str, pk: int) -> HttpResponse:
    zone = selectors.zone_for_admin(request.user, coordinate)
    # Only a conflict of this zone or beneath it: another zone's ids say nothing here.
    get_object_or_404(KnowledgeConflict.objects.filter(beneath(zone.coordinate)), pk=pk)
    resolution = request.POST.get("resolution", "")
    try:
        if not resolution:
            # Nothing is preset (the first side was once the default, and the superseded one):
            # a form sent without a choice says so.
            raise ApplicationError(
                _("Choose a resolution: which paragraph governs, or why it is none."),
                field="resolution",
            )
        conflict_resolve(
            conflict_id=pk,
            user=request.user,  # type: ignore[arg-type]  # login_required
            resolution=resolution,
            reason=request.POST.get("reason", ""),
        )
    except (Forbidden, NotFound):
        raise  # the page answers 403 or 404 for what the person may not do here
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Conflict resolved."))
    return redirect("zone-conflicts", coordinate=zone.coordinate)


def open_count(zone: str) -> int:
    """Open conflicts of a zone and beneath it: the zone page's link says how many."""
    return KnowledgeConflict.objects.filter(beneath(zone), Q(resolved_at__isnull=True)).count()
