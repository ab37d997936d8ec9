"""Threshold advice for a zone admin: `GET /api/v1/zones/{coordinate}/advice/` and the plot on
the zone page (templates/zone_admin/_advice.html, drawn here as server-rendered SVG: no
script, no inline style). Thin: the figures come from `gates.advice_data.zone_advice`, the
scope is the KPI dashboard's (`gates.kpis.may_read`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from coordinates.coordinate import Coordinate
from coordinates.fields import coordinate_parameter
from coordinates.models import Zone
from coordinates.selectors import coordinate_from, role_scopes
from gates import advice, advice_data, kpis
from maria.errors import ApplicationError, Forbidden, NotFound
from maria.openapi import error_responses, or_empty

COSTS = ("cost_hallucination", "cost_requery", "cost_abandon")
COST_LIMIT = 1e15  # a cost past this is a typing slip, and its products stay finite


@dataclass(frozen=True, slots=True)
class AdviceQuery:
    target: float
    days: int
    costs: tuple[float, float, float] | None


def _number(query: Mapping[str, Any], name: str, low: float, high: float) -> float | None:
    raw = str(query.get(name) or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not low <= value <= high:
        raise ApplicationError(
            _("%(name)s must be a number from %(low)s to %(high)s")
            % {"name": name, "low": f"{low:g}", "high": f"{high:g}"},
            field=name,
        )
    return value


def advice_query(query: Mapping[str, Any]) -> AdviceQuery:
    """`?target=&days=&cost_hallucination=&cost_requery=&cost_abandon=`: an empty value is
    left out; a bad one is a 400 naming its field. The costs come all three or not at all
    (one alone would price the others at nothing)."""
    target = _number(query, "target", 0.0, 1.0)
    raw_days = str(query.get("days") or "").strip()
    days = advice_data.DEFAULT_DAYS
    if raw_days:
        if not raw_days.isdigit() or not 1 <= int(raw_days) <= advice_data.MAX_DAYS:
            raise ApplicationError(
                _("days must be a whole number from 1 to %(max)s") % {"max": advice_data.MAX_DAYS},
                field="days",
            )
        days = int(raw_days)
    costs = [_number(query, name, 0.0, COST_LIMIT) for name in COSTS]
    given = [c for c in costs if c is not None]
    if given and len(given) < len(COSTS):
        missing = next(name for name, c in zip(COSTS, costs, strict=True) if c is None)
        raise ApplicationError(
            _("give all three costs (hallucination, requery, abandon) or none"), field=missing
        )
    return AdviceQuery(
        target=advice.DEFAULT_TARGET if target is None else target,
        days=days,
        costs=(given[0], given[1], given[2]) if given else None,
    )


# --- the JSON document ---------------------------------------------------------------------


def _economics(found: advice.Economics | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "p_hallucination": found.p_hallucination,
        "respond_cost": found.respond_cost,
        "refuse_cost": found.refuse_cost,
        "refuse": found.refuse,
    }


def point_document(point: advice.Point, target: float) -> dict[str, Any]:
    return {
        "tau": point.tau,
        "decisions": point.decisions,
        **{str(gate): n for gate, n in point.gates.items()},
        "sent_to_people": point.sent_to_people,
        "human_share": point.human_share,
        "reviewed_released": point.reviewed_released,
        "reviewed_wrong": point.reviewed_wrong,
        "wrong_auto_share": point.wrong_auto_share,
        "meets_target": point.meets(target),
        "economics": _economics(point.economics),
    }


def advice_document(
    coordinate: Coordinate, query: AdviceQuery, found: advice.Advice, p_requery: float | None
) -> dict[str, Any]:
    """Every figure of the advice, by name (AdviceSerializer documents them)."""
    costs = found.costs
    return {
        "zone": str(coordinate),
        "days": query.days,
        "target": found.target,
        "current_tau": found.current.tau,
        "advised_tau": found.advised.tau if found.advised is not None else None,
        "decisions": found.decisions,
        "reviewed": found.reviewed,
        "reviewed_wrong": found.reviewed_wrong,
        "pinned": found.pinned,
        "min_reviewed": advice.MIN_REVIEWED,
        "enough_reviews": found.enough_reviews,
        "warning": _warning(found),
        "costs": None
        if query.costs is None
        else {
            **dict(zip(COSTS, query.costs, strict=True)),
            "p_requery": p_requery,
            "refuse_cost": costs.refuse_cost if costs is not None else None,
            "break_even_hallucination": costs.break_even if costs is not None else None,
        },
        "current": point_document(found.current, found.target),
        "advised": point_document(found.advised, found.target) if found.advised else None,
        "points": [point_document(p, found.target) for p in found.points],
        "skipped_taus": list(found.skipped),
    }


def _warning(found: advice.Advice) -> str | None:
    if found.enough_reviews:
        return None
    return _(
        "Only %(reviewed)s reviewed decisions (fewer than %(min)s): too few to trust this "
        "curve; read each point's counts."
    ) % {"reviewed": found.reviewed, "min": advice.MIN_REVIEWED}


class AdviceEconomicsSerializer(serializers.Serializer):
    p_hallucination = serializers.FloatField(help_text="the wrong share at this tau")
    respond_cost = serializers.FloatField(help_text="P_hallucination * cost_hallucination")
    refuse_cost = serializers.FloatField(
        help_text="p_requery * cost_requery + (1 - p_requery) * cost_abandon"
    )
    refuse = serializers.BooleanField(help_text="refusing is cheaper than answering here")


class AdvicePointSerializer(serializers.Serializer):
    tau = serializers.FloatField()
    decisions = serializers.IntegerField(help_text="decisions replayed")
    auto = serializers.IntegerField()
    flagged = serializers.IntegerField()
    # A field named like Field.required: the serializer's metaclass takes it off the class.
    required = serializers.IntegerField()  # type: ignore[assignment]
    blocked = serializers.IntegerField()
    sent_to_people = serializers.IntegerField(help_text="= required")
    human_share = serializers.FloatField(
        allow_null=True, help_text="sent_to_people / decisions (null: no decision)"
    )
    reviewed_released = serializers.IntegerField(
        help_text="reviewed decisions this tau would release (auto or flagged)"
    )
    reviewed_wrong = serializers.IntegerField(
        help_text="of those, the ones a person rejected or marked a claim of unsupported"
    )
    wrong_auto_share = serializers.FloatField(
        allow_null=True,
        help_text="reviewed_wrong / reviewed_released (null: no reviewed decision released)",
    )
    meets_target = serializers.BooleanField()
    economics = AdviceEconomicsSerializer(allow_null=True, help_text="null without costs")


class AdviceCostsSerializer(serializers.Serializer):
    cost_hallucination = serializers.FloatField()
    cost_requery = serializers.FloatField()
    cost_abandon = serializers.FloatField()
    p_requery = serializers.FloatField(
        allow_null=True,
        help_text="the zone's KPI requery_rate over the window (null: no refusal to learn it "
        "from, so no economics)",
    )
    refuse_cost = serializers.FloatField(allow_null=True)
    break_even_hallucination = serializers.FloatField(
        allow_null=True,
        help_text="refuse_cost / cost_hallucination: above this P_hallucination refusing is "
        "cheaper (null: cost_hallucination 0 or no p_requery)",
    )


class AdviceSerializer(serializers.Serializer):
    zone = serializers.CharField()
    days = serializers.IntegerField()
    target = serializers.FloatField()
    current_tau = serializers.FloatField()
    advised_tau = serializers.FloatField(
        allow_null=True, help_text="the smallest human share meeting the target (null: none)"
    )
    decisions = serializers.IntegerField()
    reviewed = serializers.IntegerField()
    reviewed_wrong = serializers.IntegerField()
    pinned = serializers.IntegerField(
        help_text="decisions of zones beneath that set their own tau: the same at every tau"
    )
    min_reviewed = serializers.IntegerField()
    enough_reviews = serializers.BooleanField()
    warning = serializers.CharField(allow_null=True)
    costs = AdviceCostsSerializer(
        allow_null=True, help_text="null unless all three costs are given"
    )
    current = AdvicePointSerializer()
    advised = AdvicePointSerializer(allow_null=True)
    points = AdvicePointSerializer(many=True)
    skipped_taus = serializers.ListField(
        child=serializers.FloatField(), help_text="grid taus the zone's policy refuses"
    )


def _query_parameter(name: str, schema: dict[str, Any], description: str) -> OpenApiParameter:
    return OpenApiParameter(name, or_empty(schema), description=description)


def _scoped(user: Any, coordinate: Coordinate) -> None:
    """Like the KPIs: a zone admin or auditor of the zone or above reads it; someone who is
    neither anywhere is refused outright (403), another zone is a 404 like a missing one."""
    if not getattr(user, "is_superuser", False) and not role_scopes(user, kpis.KPI_ROLES):
        raise Forbidden(_("the threshold advice is for zone admins and auditors"))
    if not Zone.objects.filter(coordinate=str(coordinate)).exists() or not kpis.may_read(
        user, coordinate
    ):
        raise NotFound(
            _("unknown zone %(zone)s") % {"zone": coordinate},
            code="unknown_zone",
            field="coordinate",
        )


class ZoneAdviceView(APIView):
    @extend_schema(
        summary="Threshold advice: tau against the share sent to people and the wrong share "
        "of released answers (admins, auditors)",
        description=(advice.__doc__ or "").split("\n\n", 1)[-1],
        parameters=[
            coordinate_parameter(
                "coordinate", location="path", description="a zone-tree node, G to G.U.P.Z"
            ),
            _query_parameter(
                "target",
                {"type": "number", "minimum": 0, "maximum": 1},
                f"the largest wrong share of released answers accepted "
                f"(default {advice.DEFAULT_TARGET})",
            ),
            _query_parameter(
                "days",
                {"type": "integer", "minimum": 1, "maximum": advice_data.MAX_DAYS},
                f"decisions of the last so many days (default {advice_data.DEFAULT_DAYS})",
            ),
            *(
                _query_parameter(
                    name,
                    {"type": "number", "minimum": 0, "maximum": COST_LIMIT},
                    f"the cost of a{'n' if name == 'cost_abandon' else ''} "
                    f"{name.removeprefix('cost_')} (all three costs or none)",
                )
                for name in COSTS
            ),
        ],
        responses={200: AdviceSerializer, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        coord = coordinate_from(coordinate)
        if coord.depth > 4:
            raise ApplicationError(
                _("%(coordinate)s is an agent, not a zone") % {"coordinate": coord},
                field="coordinate",
            )
        _scoped(request.user, coord)
        query = advice_query(request.query_params)
        found, p_requery = advice_data.zone_advice(
            coord, target=query.target, days=query.days, costs=query.costs
        )
        return Response(advice_document(coord, query, found, p_requery))


# --- the plot on the zone page -------------------------------------------------------------

WIDTH, PANEL, LEFT, RIGHT, GAP = 480.0, 110.0, 40.0, 8.0, 26.0
TOP = 8.0


@dataclass(frozen=True, slots=True)
class Plot:
    """Two panels over one tau axis: the share sent to people above, the wrong share of
    released answers below (its scale up to the larger of its top value and the target)."""

    width: float
    height: float
    human: list[str]  # polyline point lists: a gap where a share is unknown
    wrong: list[str]
    human_dots: list[tuple[float, float, str]]
    wrong_dots: list[tuple[float, float, str]]
    panels: list[tuple[float, float]]  # (y, height) of each panel's frame
    wrong_top: float
    target_y: float
    # (kind, x, label, label x, label y): the current tau labelled under the axis, the
    # advised one inside the top panel, so the two labels never overlap when close
    marks: list[tuple[str, float, str, float, float]]
    ticks: list[tuple[float, str]]
    x0: float
    x1: float
    inner: float  # x1 - x0: the width of a panel

    @property
    def bottom(self) -> float:
        """The floor of the lower panel: the marks run from the top panel's top to here."""
        return self.panels[1][0] + self.panels[1][1]

    @property
    def axis_y(self) -> float:
        """Where the tau labels go, under the lower panel."""
        return self.height - 12


# The plot shows tau this far either side of the zone's current tau at least, and further,
# in steps of HALF_STEP, to reach the advised tau: the admin reads the curve where a change
# would land, not the whole grid with the current tau pushed to one side.
MIN_HALF, HALF_STEP = 0.15, 0.05


def axis(current: float, advised: float | None) -> tuple[float, float]:
    """The tau axis (lo, hi), centred on the current tau: half-width MIN_HALF, widened by
    HALF_STEP steps until it reaches the advised tau."""
    reach = abs(advised - current) if advised is not None else 0.0
    half = max(MIN_HALF, math.ceil(reach / HALF_STEP - 1e-9) * HALF_STEP)
    return round(current - half, 4), round(current + half, 4)


def plot(found: advice.Advice) -> Plot:
    """tau t at x = LEFT + (t - lo)/(hi - lo) * (WIDTH - LEFT - RIGHT), over the `axis`
    centred on the current tau (the grid's points outside it are left out); a share v in a
    panel at y = bottom - v/top * PANEL."""
    lo, hi = axis(found.current.tau, found.advised.tau if found.advised is not None else None)
    span = hi - lo
    inner = WIDTH - LEFT - RIGHT
    shown = [p for p in found.points if lo - 1e-9 <= p.tau <= hi + 1e-9]

    def x(t: float) -> float:
        return round(LEFT + (t - lo) / span * inner, 1)

    wrong_values = [p.wrong_auto_share for p in shown if p.wrong_auto_share is not None]
    wrong_top = max([*wrong_values, found.target, 0.01])
    tops = (TOP, TOP + PANEL + GAP)

    def series(
        values: list[float | None], panel_top: float, top: float
    ) -> tuple[list[str], list[tuple[float, float, str]]]:
        lines: list[str] = []
        dots: list[tuple[float, float, str]] = []
        current: list[str] = []
        for point, value in zip(shown, values, strict=True):
            if value is None:
                if current:
                    lines.append(" ".join(current))
                current = []
                continue
            y = round(panel_top + PANEL - value / top * PANEL, 1)
            current.append(f"{x(point.tau)},{y}")
            dots.append((x(point.tau), y, f"tau {point.tau:g}: {100 * value:.1f}%"))
        if current:
            lines.append(" ".join(current))
        return lines, dots

    human, human_dots = series([p.human_share for p in shown], tops[0], 1.0)
    wrong, wrong_dots = series([p.wrong_auto_share for p in shown], tops[1], wrong_top)
    height = TOP + 2 * PANEL + GAP + 22
    now_x = x(found.current.tau)
    marks = [("current", now_x, f"{found.current.tau:g}", now_x, height - 1)]
    if found.advised is not None:
        at = x(found.advised.tau)
        # Left of its line near the right edge, where the label would run off the plot.
        label_x = at + 3 if at < WIDTH - 90 else at - 90
        marks.append(("advised", at, f"{found.advised.tau:g}", label_x, TOP + 11))
    step = 0.1 if span > 0.4 else 0.05
    ticks = []
    k = math.ceil(max(lo, 0.0) / step - 1e-9)
    while k * step <= min(hi, 1.0) + 1e-9:  # no tau outside [0, 1] to label
        ticks.append((x(k * step), f"{k * step:.2f}"))
        k += 1
    return Plot(
        width=WIDTH,
        height=height,
        human=human,
        wrong=wrong,
        human_dots=human_dots,
        wrong_dots=wrong_dots,
        panels=[(tops[0], PANEL), (tops[1], PANEL)],
        wrong_top=round(wrong_top, 4),
        target_y=round(tops[1] + PANEL - found.target / wrong_top * PANEL, 1),
        marks=marks,
        ticks=ticks,
        x0=LEFT,
        x1=WIDTH - RIGHT,
        inner=inner,
    )


def advice_context(coordinate: Coordinate, query: Mapping[str, Any]) -> dict[str, Any]:
    """What templates/zone_admin/_advice.html shows: the form's values as typed, and either
    the problem with them or the advice with its plot and rows."""
    form = {name: str(query.get(name) or "") for name in ("target", *COSTS)}
    try:
        parsed = advice_query(query)
    except ApplicationError as error:
        return {"advice_form": form, "advice_problem": error, "advice": None}
    found, p_requery = advice_data.zone_advice(
        coordinate, target=parsed.target, days=parsed.days, costs=parsed.costs
    )
    document = advice_document(coordinate, parsed, found, p_requery)
    shown = [found.current] if found.advised is None else [found.current, found.advised]
    return {
        "advice_form": form | {"target": form["target"] or f"{parsed.target:g}"},
        "advice_problem": None,
        "advice": document,
        "advice_plot": plot(found),
        "advice_rows": [point_document(p, found.target) for p in shown],
    }
