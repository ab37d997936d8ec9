"""JSON Lines downloads, shared by the exports (`audit.api` for the trail, `decisions.api_reviews`
for reviewed claims): the renderer that lets clients ask for them, the `since` parameter, and
a streaming response that reads a chunk of lines at a time under WSGI and ASGI alike."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import UTC, datetime, time
from itertools import islice
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework.renderers import BaseRenderer

from maria.errors import ApplicationError

CONTENT_TYPE = "application/x-ndjson"
LINES_PER_CHUNK = 500


class JSONLinesRenderer(BaseRenderer):
    """Lets clients ask for `Accept: application/x-ndjson`; only errors pass through it (the
    export itself streams), each as one JSON line in the usual error shape."""

    media_type = CONTENT_TYPE
    format = "jsonl"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return (json.dumps(data, ensure_ascii=False) + "\n").encode()


def parse_since(text: str) -> datetime:
    """An ISO 8601 datetime (UTC when it names no offset) or a date (its midnight, UTC)."""
    try:
        moment = parse_datetime(text)
        if moment is None:
            day = parse_date(text)
            if day is not None:
                moment = datetime.combine(day, time.min)
    except ValueError:  # well formed but impossible, e.g. 2025-02-30: a 400, never a 500
        moment = None
    if moment is None:
        raise ApplicationError(
            f"since must be an ISO 8601 date or datetime, e.g. 2026-06-01T09:30:00Z; got {text!r}",
            field="since",
        )
    return moment if timezone.is_aware(moment) else moment.replace(tzinfo=UTC)


def _chunk(lines: Iterator[str]) -> str:
    return "".join(islice(lines, LINES_PER_CHUNK))


async def _chunks(lines: Iterator[str]) -> AsyncIterator[str]:
    # Under ASGI Django would read a plain iterator to the end into memory before sending
    # anything; this pulls a chunk at a time, in the request's sync thread, where the
    # database cursor lives.
    next_chunk = sync_to_async(_chunk, thread_sensitive=True)
    while chunk := await next_chunk(lines):
        yield chunk


def download(request: HttpRequest, lines: Iterator[str], name: str) -> StreamingHttpResponse:
    """`lines` streamed as a JSON Lines attachment named `<name>-<UTC stamp>.jsonl`."""
    return attachment(request, lines, name=name, suffix="jsonl", content_type=CONTENT_TYPE)


def attachment(
    request: HttpRequest, lines: Iterator[str], *, name: str, suffix: str, content_type: str
) -> StreamingHttpResponse:
    """`lines` streamed, a chunk at a time, as an attachment `<name>-<UTC stamp>.<suffix>`
    (the JSON Lines exports, and the reviewed claims' CSV of gates.reviews_download)."""
    asgi = isinstance(request, ASGIRequest)
    response = StreamingHttpResponse(_chunks(lines) if asgi else lines, content_type=content_type)
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    response["Content-Disposition"] = f'attachment; filename="{name}-{stamp}.{suffix}"'
    return response
