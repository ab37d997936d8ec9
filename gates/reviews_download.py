"""Reviewed data downloaded from the web: `/zones/{coordinate}/reviews/download/?format=csv`
(or `jsonl`) and `since`, linked from the zone's dashboard. Every reviewer's verdict on a
claim of the zone's decided decisions and those beneath it, as far as the user administers
or audits them: the lines of the reviews export (`decisions.api_reviews`, which the API and
`manage.py fit_verifier` read), or the same lines as CSV rows for a spreadsheet."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from coordinates.coordinate import CoordinateError, parse
from decisions.api_reviews import export_scope, review_lines
from gates.dashboard import zone_readable
from maria.errors import ApplicationError, NotFound
from maria.jsonlines import attachment, download, parse_since

FORMATS = ("csv", "jsonl")
# The CSV's columns: a review line's fields, the nested ones (signals, verifier,
# calibration) as compact JSON in their cell.
COLUMNS = (
    "decision",
    "zone",
    "claim_index",
    "claim",
    "span",
    "engine_probability",
    "engine_supported",
    "reviewer_supported",
    "note",
    "reviewer",
    "action",
    "created_at",
    "signals",
    "verifier",
    "calibration",
)
# A cell a spreadsheet would run as a formula: the claim, span and note are an agent's or a
# reviewer's text (OWASP, CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if isinstance(value, str) and text.startswith(FORMULA_START):
        return "'" + text
    return text


def csv_rows(lines: Iterator[str]) -> Iterator[str]:
    """The review lines as CSV text, a header first, one row per line."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(COLUMNS)
    yield flush()
    for line in lines:
        record = json.loads(line)
        writer.writerow([_cell(record.get(name)) for name in COLUMNS])
        yield flush()


@require_GET
@login_required
def zone_reviews_download(
    request: HttpRequest, coordinate: str
) -> HttpResponse | StreamingHttpResponse:
    try:
        coord = parse(coordinate)
    except CoordinateError:
        raise NotFound(_("no such zone")) from None
    zone = zone_readable(request.user, coord)  # 404 outside the user's zones
    back = redirect("zone-dashboard", coordinate=zone.coordinate)
    wanted = request.GET.get("format", "csv")
    try:
        if wanted not in FORMATS:
            raise ApplicationError(_("format must be csv or jsonl"), field="format")
        raw = request.GET.get("since", "").strip()
        since = parse_since(raw) if raw else None
    except ApplicationError as error:
        messages.error(request, f"{error.field}: {error.message}" if error.field else error.message)
        return back
    lines = review_lines(export_scope(request.user, None, coord), since)
    name = f"reviews-{zone.coordinate}"
    if wanted == "jsonl":
        return download(request, lines, name)
    return attachment(
        request, csv_rows(lines), name=name, suffix="csv", content_type="text/csv; charset=utf-8"
    )
