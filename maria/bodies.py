"""Request bodies Django would read as empty are refused instead: a chunked body without a
Content-Length (WSGI and ASGI alike read such a stream as zero bytes, so a submission would
be judged on nothing)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from maria.errors import error_body


class LengthRequiredMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not request.META.get("CONTENT_LENGTH"):
            return JsonResponse(
                error_body(
                    "length_required",
                    "send the body with a Content-Length: a chunked body is not read",
                ),
                status=411,
            )
        return self.get_response(request)
