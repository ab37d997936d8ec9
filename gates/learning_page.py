"""The zone's learned-models page, `/zones/{coordinate}/learned/`: the confidence weights
w1..w4 fitted on its reviewers' verdicts beside the current ones, with their held-back
figures, the adopt form (a reason; the fit previewed is the fit adopted) and the rollback
form (the weights of an earlier policy version); the requery model of §8.1 with its
figures against the constant rate; and the graph gate's tau_c adapted to the reviewers'
verdicts (seed 002 §9.4) with its adopt form, and its API. Thin: `decisions.confidence_weights`,
`gates.requery_model` and `graph.tau_adaptation` do the work and check again who may act."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from decisions import calibration
from decisions import confidence_weights as weights
from decisions.api_calibration import _COORDINATE, _person
from decisions.api_calibration import _zone as _api_zone
from evidence import weights_fit
from gates.calibration_page import _zone_for
from gates.requery_model import requery_model
from graph import tau_adaptation
from maria.errors import ApplicationError
from maria.openapi import NOT_BLANK, error_responses

FIGURES = (
    ("brier", gettext_lazy("Brier score")),
    ("log_loss", gettext_lazy("Log loss")),
    ("accuracy", gettext_lazy("Accuracy")),
)
HIGHER_IS_BETTER = {"accuracy"}


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def figure_rows(before: weights_fit.Figures, after: weights_fit.Figures) -> list[dict[str, Any]]:
    rows = []
    for name, label in FIGURES:
        old, new = getattr(before, name), getattr(after, name)
        better = (
            old is not None
            and new is not None
            and (new > old if name in HIGHER_IS_BETTER else new < old)
        )
        rows.append(
            {
                "name": name,
                "label": str(label),
                "before": _figure(old),
                "after": _figure(new),
                "better": better,
            }
        )
    return rows


def _page(
    request: HttpRequest,
    coordinate: str,
    *,
    problem: str = "",
    problem_field: str = "reason",
    status: int = 200,
) -> HttpResponse:
    zone = _zone_for(request.user, coordinate)
    proposal = weights.weights_propose(zone=zone, user=request.user)
    fit = proposal.fit
    requery = requery_model(zone)
    graph_tau = tau_adaptation.graph_tau_propose(zone=zone, user=request.user)
    context = {
        "graph_tau": graph_tau,
        "zone": zone,
        "proposal": proposal,
        "weight_rows": (
            [
                {
                    "name": f"w{i + 1}",
                    "signal": signal,
                    "current": f"{old:.4f}",
                    "learned": f"{new:.4f}",
                }
                for i, (signal, old, new) in enumerate(
                    zip(weights_fit.SIGNALS, fit.current, fit.weights, strict=True)
                )
            ]
            if fit is not None
            else []
        ),
        "weight_figures": figure_rows(fit.before, fit.after) if fit is not None else [],
        "requery": requery,
        "requery_figures": (
            figure_rows(requery.fit.constant, requery.fit.model) if requery.fit is not None else []
        ),
        "requery_k": f"{requery.fit.steepness:.3f}" if requery.fit is not None else "",
        "requery_s": (
            "—"
            if requery.fit is None or requery.fit.midpoint is None
            else f"{requery.fit.midpoint:.3f}"
        ),
        "policy_versions": list(zone.policy_versions.order_by("-version")[:20]),
        "may_adopt": calibration.may_adopt(request.user, zone),
        "problem": problem,
        "problem_field": problem_field,
        "reason_limit": calibration.REASON_LIMIT,
        "min_verdicts": weights_fit.MIN_WEIGHT_VERDICTS,
    }
    return render(request, "zone_admin/learned.html", context, status=status)


@require_GET
@login_required
def zone_learned(request: HttpRequest, coordinate: str) -> HttpResponse:
    return _page(request, coordinate)


def _acted(request: HttpRequest, coordinate: str, act: Any, done: str) -> HttpResponse:
    try:
        row = act()
    except ApplicationError as error:
        if error.status_code in (403, 404):
            raise
        return _page(
            request,
            coordinate,
            problem=error.message,
            problem_field=error.field or "reason",
            status=error.status_code,
        )
    messages.success(request, done % {"version": row.version})
    return redirect("zone-learned", coordinate=row.zone.coordinate)


@require_POST
@login_required
def zone_weights_adopt(request: HttpRequest, coordinate: str) -> HttpResponse:
    zone = _zone_for(request.user, coordinate)
    return _acted(
        request,
        coordinate,
        lambda: weights.weights_adopt(
            zone=zone,
            user=request.user,
            reason=request.POST.get("reason", ""),
            fingerprint=request.POST.get("fingerprint", ""),
        ),
        _("Learned weights adopted as policy version %(version)s."),
    )


@require_POST
@login_required
def zone_weights_rollback(request: HttpRequest, coordinate: str) -> HttpResponse:
    zone = _zone_for(request.user, coordinate)
    raw = request.POST.get("version", "")
    version: Any = int(raw) if raw.isdigit() else raw
    return _acted(
        request,
        coordinate,
        lambda: weights.weights_rollback(
            zone=zone, user=request.user, reason=request.POST.get("reason", ""), version=version
        ),
        _("Weights rolled back in policy version %(version)s."),
    )


@require_POST
@login_required
def zone_graph_tau_adopt(request: HttpRequest, coordinate: str) -> HttpResponse:
    zone = _zone_for(request.user, coordinate)
    return _acted(
        request,
        coordinate,
        lambda: tau_adaptation.graph_tau_adopt(
            zone=zone,
            user=request.user,
            reason=request.POST.get("reason", ""),
            fingerprint=request.POST.get("fingerprint", ""),
        ),
        _("Adapted tau_c adopted as policy version %(version)s."),
    )


class ZoneRequeryModelView(APIView):
    """GET /api/v1/zones/{c}/requery-model/: the fit and its held-back figures, or why not."""

    @extend_schema(
        summary="The zone's requery model (seed 000 §8.1): k, s fitted on its refusals, with "
        "held-back log loss beside the constant rate's (zone admins and auditors)",
        parameters=[_COORDINATE],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        return Response(requery_model(_api_zone(request, coordinate)).as_dict())


class ZoneGraphTauView(APIView):
    """GET /api/v1/zones/{c}/graph-tau/: tau_c now, adapted, the verdicts and the averages."""

    @extend_schema(
        summary="The graph gate's tau_c adapted to the zone's reviewed graph-gated answers "
        "(seed 002 §9.4), beside the current one (zone admins and auditors)",
        parameters=[_COORDINATE],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 403, 404)},
    )
    def get(self, request: Request, coordinate: str) -> Response:
        zone = _api_zone(request, coordinate)
        return Response(tau_adaptation.graph_tau_propose(zone=zone, user=request.user).as_dict())


class ZoneGraphTauAdoptView(APIView):
    """POST /api/v1/zones/{c}/graph-tau/adopt/: the adapted tau_c as a new policy version."""

    @extend_schema(
        summary="Make the adapted tau_c the zone's cohesion_tau (a new policy version; zone "
        "admins)",
        request={
            "application/json": {
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string",
                        "pattern": NOT_BLANK,
                        "maxLength": calibration.REASON_LIMIT,
                    },
                    "fingerprint": {"type": "string"},
                },
                "required": ["reason", "fingerprint"],
            }
        },
        parameters=[_COORDINATE],
        responses={200: OpenApiTypes.OBJECT, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request: Request, coordinate: str) -> Response:
        zone = _api_zone(request, coordinate)
        if not isinstance(request.data, dict):
            raise ApplicationError(_("the body must be a JSON object"), field=None)
        row = tau_adaptation.graph_tau_adopt(
            zone=zone,
            user=_person(request),
            reason=request.data.get("reason"),
            fingerprint=request.data.get("fingerprint"),
        )
        return Response(
            {
                "zone": row.zone.coordinate,
                "version": row.version,
                "overrides": row.overrides,
                "reason": row.reason,
            }
        )
