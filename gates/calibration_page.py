"""The zone's calibration page, `/zones/{coordinate}/calibration/`: its calibration versions
with their reliability before and after on held-back verdicts, a what-if preview of one
over the last 30 days' gates, the adopt form (a reason required; adopting a retired version
again is the rollback) and, for a zone admin, a button that proposes a new version from the
zone's verdicts and shows its preview at once. Thin: reads and writes go through
`decisions.calibration`, which checks again who may act; no script (the preview is a plain
POST that renders the page with its table)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from coordinates.coordinate import CoordinateError, parse
from coordinates.models import Zone
from decisions import calibration as service
from evidence.calibration import MIN_VERDICTS
from evidence.validation import adopted_calibrations
from maria.errors import ApplicationError, Forbidden, NotFound

FIGURES = (
    ("brier", gettext_lazy("Brier score")),
    ("log_loss", gettext_lazy("Log loss")),
    ("ece", gettext_lazy("Calibration error (ECE)")),
)


def _zone_for(user: Any, coordinate: str) -> Zone:
    """The zone, when the user may read its calibrations; otherwise 404, as for a zone that
    does not exist."""
    try:
        parsed = parse(coordinate)
    except CoordinateError:
        raise NotFound(_("no such zone")) from None
    zone = Zone.objects.filter(coordinate=str(parsed)).first()
    if zone is None or parsed.depth > 4 or not service.may_read(user, zone):
        raise NotFound(_("no such zone"))
    return zone


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def version_rows(zone: Zone) -> list[dict[str, Any]]:
    """One row per version, newest first, with its figures before and after as shown."""
    rows = []
    for row in service.calibration_versions(zone):
        before, after = row.reliability_before, row.reliability_after
        rows.append(
            {
                "row": row,
                "figures": [
                    {
                        "name": name,
                        "label": str(label),
                        "before": _figure(before.get(name)),
                        "after": _figure(after.get(name)),
                        "better": (
                            before.get(name) is not None
                            and after.get(name) is not None
                            and after[name] < before[name]
                        ),
                    }
                    for name, label in FIGURES
                ],
                "held": before.get("n", 0),
            }
        )
    return rows


def _page(
    request: HttpRequest,
    zone: Zone,
    *,
    preview: service.Preview | None = None,
    problem: str = "",
    problem_field: str = "reason",
    reason: str = "",
    status: int = 200,
) -> HttpResponse:
    current = adopted_calibrations([zone.coordinate]).get(zone.coordinate)
    versions = version_rows(zone)
    context = {
        "zone": zone,
        "versions": versions,
        # The previewed version's row: its adopt form sits under the preview.
        "preview_row": next(
            (v["row"] for v in versions if preview and v["row"].version == preview.version),
            None,
        ),
        "in_force": current,
        "may_adopt": service.may_adopt(request.user, zone),
        "preview": preview,
        "preview_rows": (
            [
                (gate, preview.old.get(gate, 0), preview.new.get(gate, 0))
                for gate in service.GATE_ORDER
            ]
            if preview is not None
            else []
        ),
        "problem": problem,
        "problem_field": problem_field,
        "reason": reason,
        "reason_limit": service.REASON_LIMIT,
        "min_verdicts": MIN_VERDICTS,
    }
    return render(request, "zone_admin/calibration.html", context, status=status)


@require_GET
@login_required
def zone_calibration(request: HttpRequest, coordinate: str) -> HttpResponse:
    return _page(request, _zone_for(request.user, coordinate))


@require_POST
@login_required
def zone_calibration_preview(request: HttpRequest, coordinate: str, version: int) -> HttpResponse:
    """The what-if table of one version; changes nothing (POST: it carries the CSRF token
    like every other form, and replaying a month of reports is not a link to prefetch)."""
    zone = _zone_for(request.user, coordinate)
    preview = service.calibration_preview(zone=zone, version=version, user=request.user)
    return _page(request, zone, preview=preview)


@require_POST
@login_required
def zone_calibration_adopt(request: HttpRequest, coordinate: str, version: int) -> HttpResponse:
    zone = _zone_for(request.user, coordinate)
    reason = request.POST.get("reason", "")
    try:
        service.calibration_adopt(
            zone=zone,
            version=version,
            user=request.user,  # type: ignore[arg-type]  # login_required
            reason=reason,
        )
    except ApplicationError as error:
        if error.status_code in (403, 404):
            raise
        return _page(request, zone, problem=error.message, reason=reason, status=error.status_code)
    messages.success(request, _("Calibration version %(version)s adopted.") % {"version": version})
    return redirect("zone-calibration", coordinate=zone.coordinate)


@require_POST
@login_required
def zone_calibration_propose(request: HttpRequest, coordinate: str) -> HttpResponse:
    """Fit a new version on the zone's verdicts, as `manage.py calibrate` and the weekly job
    do, and show the page with its what-if preview: what adopting it would change is read
    before the adopt button. Too few verdicts: the page says how many there are and how many
    a calibration needs, and nothing is stored."""
    zone = _zone_for(request.user, coordinate)
    if not service.may_adopt(request.user, zone):
        raise Forbidden(
            _("only a zone admin of %(zone)s or above proposes a calibration")
            % {"zone": zone.coordinate}
        )
    proposal = service.calibration_propose(
        zone=zone,
        fitted_by=request.user.get_username(),
        actor=request.user,  # type: ignore[arg-type]  # login_required
    )
    if proposal.calibration is None:
        return _page(
            request,
            zone,
            problem=_(
                "Nothing proposed: %(zone)s and the zones beneath it have %(n)s reviewer "
                "verdicts with an engine probability; a calibration needs %(min)s."
            )
            % {"zone": zone.coordinate, "n": proposal.verdicts, "min": MIN_VERDICTS},
            problem_field="verdicts",
        )
    version = proposal.calibration.version
    messages.success(
        request,
        _("Calibration version %(version)s proposed: read its preview before adopting it.")
        % {"version": version},
    )
    preview = service.calibration_preview(zone=zone, version=version, user=request.user)
    return _page(request, zone, preview=preview)
