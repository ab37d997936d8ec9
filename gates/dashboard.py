"""The governance dashboard of a zone: `GET /api/v1/zones/{coordinate}/kpis/` and the page
`/zones/{coordinate}/dashboard/` with every figure of `gates.kpis` and its series drawn as
server-rendered SVG (no script, no inline style: the nonce-based CSP holds). Thin: the
figures come from `gates.kpis.zone_kpis`, scoped by `gates.kpis.may_read`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

from coordinates.coordinate import Coordinate, CoordinateError, parse
from coordinates.fields import coordinate_parameter
from coordinates.models import Zone
from coordinates.selectors import coordinate_from
from gates import kpis
from maria.errors import ApplicationError, NotFound
from maria.openapi import error_responses


def zone_readable(user: Any, coordinate: Coordinate) -> Zone:
    """The zone, when the user may read its figures; otherwise 404, as for a zone that does
    not exist (another zone's coordinate says nothing about it)."""
    zone = Zone.objects.filter(coordinate=str(coordinate)).first()
    if zone is None or not kpis.may_read(user, coordinate):
        raise NotFound(
            gettext("unknown zone %(zone)s") % {"zone": coordinate},
            code="unknown_zone",
            field="coordinate",
        )
    return zone


def _window_parameter(name: str, meaning: str) -> OpenApiParameter:
    return OpenApiParameter(
        name,
        OpenApiTypes.STR,
        description=(
            f"{meaning} (ISO 8601 date or date and time; UTC when no offset is given; a date "
            "alone means its whole day)."
        ),
    )


class ZoneKpisView(APIView):
    @extend_schema(
        summary="The zone's governance figures, each with one value a day (admins, auditors)",
        description=(kpis.__doc__ or "").split("\n\n", 1)[-1],
        parameters=[
            coordinate_parameter(
                "coordinate", location="path", description="a zone-tree node, G to G.U.P.Z"
            ),
            _window_parameter("since", f"From (default: {kpis.DEFAULT_DAYS} days before until)"),
            _window_parameter("until", "Up to, not including (default: now)"),
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
        window = kpis.window_from(request.query_params)
        return Response(kpis.zone_kpis(coord, window))


# --- the page ----------------------------------------------------------------------------

WIDTH, HEIGHT, PAD = 320.0, 64.0, 4.0


@dataclass(frozen=True, slots=True)
class Chart:
    """A series drawn in a WIDTH x HEIGHT box: polyline point lists (a gap where a day has no
    value) and dots, with the top of the scale."""

    lines: list[str]
    dots: list[tuple[float, float]]
    top: float
    first: str
    last: str


def chart(points: list[tuple[str, float | None]]) -> Chart:
    """Day i at x = PAD + i*(WIDTH-2*PAD)/(n-1), value v at y = HEIGHT-PAD - v/top*(HEIGHT-2*PAD),
    where top is the largest value (1 when all are 0)."""
    values = [v for _, v in points if v is not None]
    top = max(values, default=0.0) or 1.0
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)
    lines: list[str] = []
    dots: list[tuple[float, float]] = []
    current: list[str] = []
    for i, (_, value) in enumerate(points):
        if value is None:
            if current:
                lines.append(" ".join(current))
            current = []
            continue
        x = PAD + i * step
        y = HEIGHT - PAD - (value / top) * (HEIGHT - 2 * PAD)
        current.append(f"{x:.1f},{y:.1f}")
        dots.append((round(x, 1), round(y, 1)))
    if current:
        lines.append(" ".join(current))
    return Chart(
        lines=lines,
        dots=dots,
        top=round(top, 3),
        first=points[0][0] if points else "",
        last=points[-1][0] if points else "",
    )


# (figure, label, how the value reads)
FIGURE_ROWS = (
    ("auto_ratio", gettext_lazy("Auto ratio"), "share"),
    ("human_ratio", gettext_lazy("Human ratio"), "share"),
    ("first_pass_approval_rate", gettext_lazy("First-pass approval rate"), "share"),
    ("re_review_rate", gettext_lazy("Re-review rate"), "share"),
    ("mean_review_seconds", gettext_lazy("Mean review time"), "seconds"),
    ("p90_review_seconds", gettext_lazy("p90 review time"), "seconds"),
    ("sla_breaches", gettext_lazy("SLA breaches"), "count"),
    ("escalations", gettext_lazy("Escalations"), "count"),
    ("overrides", gettext_lazy("Overrides"), "count"),
    ("refusal_rate", gettext_lazy("Refusal rate"), "share"),
    ("requery_rate", gettext_lazy("Requery rate"), "share"),
    ("requery_load", gettext_lazy("Requery load"), "share"),
    ("trust", gettext_lazy("Trust (trajectory)"), "score"),
    ("hallucination_interval", gettext_lazy("Answers between hallucinations"), "answers"),
    ("periodic_reviews_open", gettext_lazy("Periodic reviews open"), "count"),
    ("periodic_reviews_closed", gettext_lazy("Periodic reviews closed"), "count"),
    ("periodic_reviews_wrong", gettext_lazy("Periodic reviews: wrong"), "count"),
    ("corrections", gettext_lazy("Released answers corrected"), "count"),
    ("completeness_of_accepted", gettext_lazy("Completeness of accepted answers"), "share"),
)


def _shown(value: float | None, how: str) -> str:
    if value is None:
        return "—"
    if how == "share":
        return f"{100 * value:.1f}%"
    if how == "seconds":
        return f"{value:,.0f} s"
    if how == "score":
        return f"{value:.3f}"
    if how == "answers":
        return f"{value:,.1f}"
    return f"{value:,.0f}"


def dashboard_rows(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure: its name, its value as shown, the raw value and its chart."""
    series = figures["series"]
    rows = [
        {
            "name": "decisions",
            "label": gettext_lazy("Decisions"),
            "shown": f"{figures['decisions']['total']:,}",
            "value": figures["decisions"]["total"],
            "chart": chart([(p["date"], p["total"]) for p in series["decisions"]]),
        }
    ]
    for name, label, how in FIGURE_ROWS:
        rows.append(
            {
                "name": name,
                "label": label,
                "shown": _shown(figures[name], how),
                "value": figures[name],
                "chart": chart([(p["date"], p["value"]) for p in series[name]]),
            }
        )
    return rows


def page_window(
    request: HttpRequest, coordinate: str
) -> tuple[Coordinate, Zone, kpis.Window, ApplicationError | None]:
    """A zone page's coordinate, zone (404 unless readable) and window; a window the query
    gets wrong is the default one, with the problem to show (the page answers 400)."""
    try:
        coord = parse(coordinate)
    except CoordinateError:
        raise NotFound(gettext("no such zone")) from None
    zone = zone_readable(request.user, coord)
    try:
        return coord, zone, kpis.window_from(request.GET), None
    except ApplicationError as error:
        return coord, zone, kpis.window_from({}), error


@require_GET
@login_required
def zone_dashboard(request: HttpRequest, coordinate: str) -> HttpResponse:
    coord, zone, window, problem = page_window(request, coordinate)
    figures = kpis.zone_kpis(coord, window)
    context = {
        "zone": zone,
        "figures": figures,
        "by_gate": [
            (gate, figures["decisions"][gate]) for gate in (*map(str, kpis.GATES), kpis.UNGRADED)
        ],
        "rows": dashboard_rows(figures),
        "width": WIDTH,
        "height": HEIGHT,
        "since": request.GET.get("since", ""),
        "until": request.GET.get("until", ""),
        "problem": problem,
    }
    return render(request, "zone_admin/dashboard.html", context, status=400 if problem else 200)
