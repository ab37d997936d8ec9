"""The auditor's pages: search decisions, read a decision's whole trail, verify the shown
range and export it. Read-only: nothing here changes anything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from audit import selectors as audit_selectors
from audit.forms import AuditFilterForm
from audit.integrity import evidence_records
from audit.selectors import AuditFilters
from gates import selectors as gate_selectors
from gates.views import decision_context, role_required
from maria.errors import NotFound
from trail.models import TrailCheckpoint


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
def audit_checkpoints(request: HttpRequest) -> HttpResponse:
    """The trail's checkpoints, newest first: when each sealed the chains, its hash, the key
    that signed it (checked with the keys this server publishes) and whether the witness
    holds the same seal. Read-only."""
    paginator = Paginator(TrailCheckpoint.objects.order_by("-seq"), audit_selectors.AUDIT_PAGE)
    page = paginator.get_page(request.GET.get("page"))
    lines, unread = audit_selectors.checkpoints_read(list(page))
    return render(
        request,
        "auditor/checkpoints.html",
        {"page": page, "lines": lines, "witness_unread": unread},
    )


def _decision_lines(decision: Any) -> Iterator[str]:
    """One decision's trail events (each with chain, seq, prev_hash, hash and the hashed
    bytes, as in the zone's export) and the evidence they name: what it cited, its bundle
    and reports. Its events are links of its lane's chain; the neighbours between them are
    other decisions', so the lines prove each event's own hash, and the zone's export the
    chain."""

    def line(record: dict[str, Any]) -> str:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"

    yield line(
        {
            "type": "decision.export",
            "decision": decision.pk,
            "zone": decision.zone,
            "exported_at": timezone.now().isoformat(),
        }
    )
    bodies: list[dict[str, Any]] = []
    count = 0
    for event in gate_selectors.decision_events(decision):
        canonical = bytes(event.canonical)
        count += 1
        try:
            body = json.loads(canonical)
        except ValueError:
            body = None
        if isinstance(body, dict):
            bodies.append(body)
        yield line(
            {
                "type": "trail.event",
                "id": event.pk,
                "chain": event.chain,
                "seq": event.seq,
                "prev_hash": event.prev_hash,
                "hash": event.hash,
                "canonical": canonical.decode("utf-8", errors="replace"),
            }
        )
    records = 0
    for record in evidence_records(bodies):
        records += 1
        yield line(record)
    yield line({"type": "trail.end", "events": count, "records": records})


@require_GET
@role_required(audit_selectors.AUDIT_ROLES)
def audit_export(request: HttpRequest) -> StreamingHttpResponse:
    """The shown range's trail as JSON Lines; `?decision=<id>` exports that decision alone."""
    stamp = datetime.now(tz=timezone.get_current_timezone()).strftime("%Y%m%dT%H%M%S")
    wanted = request.GET.get("decision", "")
    if wanted:
        if not wanted.isdigit():
            raise NotFound(gettext("no such decision"))
        decision = gate_selectors.decision_for(
            request.user, int(wanted), audit_selectors.AUDIT_ROLES
        )
        response = StreamingHttpResponse(
            _decision_lines(decision), content_type="application/x-ndjson"
        )
        response["Content-Disposition"] = (
            f'attachment; filename="maria-decision-{decision.pk}-{stamp}.jsonl"'
        )
        return response
    _, filters = _audit_filters(request)
    scopes = audit_selectors.audit_range(request.user, filters.zone)
    response = StreamingHttpResponse(
        audit_selectors.trail_export(scopes, filters.since), content_type="application/x-ndjson"
    )
    response["Content-Disposition"] = f'attachment; filename="maria-trail-{stamp}.jsonl"'
    return response
