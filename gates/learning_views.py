"""What a zone's answers teach it (`gates.learning`): `GET /api/v1/zones/{coordinate}/learning/`
and the page `/zones/{coordinate}/learning/`, for the zone's admins and auditors (on it or
above). Thin: the figures come from `gates.learning.zone_learning`."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.fields import coordinate_parameter
from coordinates.selectors import coordinate_from
from gates import kpis, learning
from gates.dashboard import page_window, zone_readable
from maria.errors import ApplicationError
from maria.openapi import error_responses

TYPE_WORDS = {
    "fabrication": gettext_lazy("Fabrication: cites nothing that exists"),
    "distortion": gettext_lazy("Distortion: real source, misstated"),
    "extrapolation": gettext_lazy("Extrapolation: beyond what the source says"),
}
_WINDOW = " (ISO 8601 date or date and time; UTC when no offset is given)"


class ZoneLearningView(APIView):
    @extend_schema(
        summary="What the zone's answers teach it: hallucination types, agents, gaps, sources",
        description=(learning.__doc__ or "").split("\n\n", 1)[-1],
        parameters=[
            coordinate_parameter(
                "coordinate", location="path", description="a zone-tree node, G to G.U.P.Z"
            ),
            OpenApiParameter("since", OpenApiTypes.STR, description="From" + _WINDOW),
            OpenApiParameter(
                "until", OpenApiTypes.STR, description="Up to, not including" + _WINDOW
            ),
        ],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        coord = coordinate_from(coordinate)
        if coord.depth > 4:
            raise ApplicationError(
                gettext("%(coordinate)s is an agent, not a zone") % {"coordinate": coord},
                field="coordinate",
            )
        zone_readable(request.user, coord)
        return Response(learning.zone_learning(coord, kpis.window_from(request.query_params)))


@require_GET
@login_required
def zone_learning_page(request: HttpRequest, coordinate: str) -> HttpResponse:
    coord, zone, window, problem = page_window(request, coordinate)
    report = learning.zone_learning(coord, window)
    context = {
        "zone": zone,
        "report": report,
        "types": [
            (
                kind,
                TYPE_WORDS[kind],
                report["hallucinations"]["by_type"][kind],
                report["hallucinations"]["shares"][kind],
                (report["hallucinations"]["model_shares"] or {}).get(kind),
            )
            for kind in learning.TYPES
        ],
        "since": request.GET.get("since", ""),
        "until": request.GET.get("until", ""),
        "problem": problem,
    }
    return render(request, "zone_admin/learning.html", context, status=400 if problem else 200)
