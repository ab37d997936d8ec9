"""The auditor's pages: search decisions, read a decision's whole trail, verify the shown
range and export it. Read-only: nothing here changes anything."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from audit import selectors as audit_selectors
from audit.forms import AuditFilterForm
from audit.selectors import AuditFilters
from gates import selectors as gate_selectors
from gates.views import decision_context, role_required


def _audit_filters(request: HttpRequest) -> tuple[AuditFilterForm, AuditFilters]:
    form = AuditFilterForm(request.GET or None)
    data: dict[str, Any] = form.cleaned_data if form.is_valid() else {}
    return form, AuditFilters(
        zone=data.get("zone", ""),
        state=data.get("state", ""),
        gate=data.get("gate", ""),
        agent=data.get("agent", ""),
        reviewer=data.get("reviewer", ""),
        since=data.get("since"),
        until=data.get("until"),
        q=data.get("q", ""),
    )


@require_GET
@role_required(audit_selectors.AUDIT_ROLES)
def audit_search(request: HttpRequest) -> HttpResponse:
    form, filters = _audit_filters(request)
    paginator = Paginator(
        audit_selectors.audit_decisions(request.user, filters), audit_selectors.AUDIT_PAGE
    )
    page = paginator.get_page(request.GET.get("page"))
    range_query = urlencode({k: v for k, v in filters.as_query().items() if k in ("zone", "since")})
    return render(
        request,
        "auditor/search.html",
        {
            "form": form,
            "page": page,
            "query": urlencode(filters.as_query()),
            "range_query": range_query,
            "filters": filters,
        },
    )


@require_GET
@role_required(audit_selectors.AUDIT_ROLES)
def audit_decision(request: HttpRequest, pk: int) -> HttpResponse:
    decision = gate_selectors.decision_for(request.user, pk, audit_selectors.AUDIT_ROLES)
    context = decision_context(decision)
    context["range_query"] = urlencode({"zone": decision.zone})
    return render(request, "auditor/decision.html", context)


@require_GET
@role_required(audit_selectors.AUDIT_ROLES)
def audit_verify(request: HttpRequest) -> HttpResponse:
    """Verify the shown range (zone, since). Read-only: it only reads the trail."""
    _, filters = _audit_filters(request)
    scopes = audit_selectors.audit_range(request.user, filters.zone)
    report = audit_selectors.trail_verify(scopes, filters.since)
    return render(
        request,
        "auditor/verify.html",
        {"report": report, "filters": filters, "range_query": urlencode(filters.as_query())},
    )


@require_GET
@role_required(audit_selectors.AUDIT_ROLES)
def audit_export(request: HttpRequest) -> StreamingHttpResponse:
    _, filters = _audit_filters(request)
    scopes = audit_selectors.audit_range(request.user, filters.zone)
    stamp = datetime.now(tz=timezone.get_current_timezone()).strftime("%Y%m%dT%H%M%S")
    response = StreamingHttpResponse(
        audit_selectors.trail_export(scopes, filters.since), content_type="application/x-ndjson"
    )
    response["Content-Disposition"] = f'attachment; filename="maria-trail-{stamp}.jsonl"'
    return response
