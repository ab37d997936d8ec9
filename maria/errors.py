"""The application error type and the one REST exception handler.

Every API error has the shape `{"error": {"code", "message", "field"}}` (docs/architecture.md,
"Errors"). Services raise `ApplicationError` or one of its kinds; DRF's own exceptions are
translated here too.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response


class ApplicationError(Exception):
    """A refusal a client can act on: what went wrong and which field. Services raise it, or
    one of the kinds below, and never name an HTTP status: the kinds carry it, and this
    module (for the API) and Django (for pages: NotFound is an Http404, Forbidden a
    PermissionDenied) turn them into responses."""

    status_code = 400
    default_code = "invalid"

    def __init__(self, message: str, *, code: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.field = field


class NotAuthenticated(ApplicationError):
    status_code = 401
    default_code = "not_authenticated"


class Forbidden(ApplicationError, DjangoPermissionDenied):
    status_code = 403
    default_code = "permission_denied"


class NotFound(ApplicationError, Http404):
    status_code = 404
    default_code = "not_found"


class Conflict(ApplicationError):
    """The thing changed first (another reviewer acted, a request is still running)."""

    status_code = 409
    default_code = "conflict"


class TooLarge(ApplicationError):
    status_code = 413
    default_code = "too_large"


class Unprocessable(ApplicationError):
    """Well-formed, but it contradicts what is stored (an Idempotency-Key's first body)."""

    status_code = 422
    default_code = "unprocessable"


class Misconfigured(ApplicationError):
    """The server is set up wrong (an embedder of another size): no client can fix it."""

    status_code = 500
    default_code = "misconfigured"


def error_body(code: str, message: str, field: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "field": field, **extra}}


def _no_such_path(request: HttpRequest) -> JsonResponse:
    message = gettext("no such path %(path)s") % {"path": request.path}
    return JsonResponse(error_body("not_found", message), status=404)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The 404 of a page no URL matches, or whose view raised Http404: JSON in the error
    shape under /api/, like every other API answer; Django's page elsewhere
    (maria.urls.handler404, used when DEBUG is off)."""
    if request.path.startswith("/api/"):
        return _no_such_path(request)
    from django.views.defaults import page_not_found as page

    return page(request, exception)


@csrf_exempt
def api_not_found(request: HttpRequest) -> JsonResponse:
    """Every path under /api/ that no API URL matches (`/api/v1/decisions/abc/`), whatever
    the method and whatever DEBUG says: with DEBUG on, Django answered the resolver's 404
    with its HTML page listing every URL pattern, and a POST without the trailing slash
    with a 500 (CommonMiddleware refuses to redirect a POST). A path that only lacks its
    slash says so."""
    if request.path.endswith("/") or not _resolves(f"{request.path_info}/"):
        return _no_such_path(request)
    message = gettext("no such path %(path)s; did you mean %(slashed)s?") % {
        "path": request.path,
        "slashed": f"{request.path}/",
    }
    return JsonResponse(error_body("not_found", message), status=404)


def _resolves(path: str) -> bool:
    try:
        return resolve(path).func is not api_not_found
    except Resolver404:
        return False


def _first_validation_error(detail: Any, path: str = "") -> tuple[str | None, str, str]:
    """Walk DRF's nested error detail to the first message and the dotted field it names."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "" if key == "non_field_errors" else str(key)
            return _first_validation_error(
                value, f"{path}.{name}" if path and name else path or name
            )
    if isinstance(detail, list) and detail:
        first = detail[0]
        if isinstance(first, dict | list):
            # Lists of objects (claims, citations) name the index: claims.2.text
            for index, item in enumerate(detail):
                if item:
                    return _first_validation_error(item, f"{path}.{index}" if path else str(index))
        return _first_validation_error(first, path)
    code = getattr(detail, "code", "invalid") or "invalid"
    return (path or None), str(detail), str(code)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        return Response(error_body(exc.code, exc.message, exc.field), status=exc.status_code)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("too_large", gettext("the request body is larger than this server accepts")),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    # Imported here: rest_framework.views loads the authentication classes, which use this module.
    from rest_framework.views import exception_handler as drf_exception_handler

    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        field, message, code = _first_validation_error(exc.detail)
        response.data = error_body(code, message, field, details=exc.detail)
    elif isinstance(exc, exceptions.APIException):
        detail = exc.detail
        message = str(detail if not isinstance(detail, dict | list) else exc.default_detail)
        code = getattr(detail, "code", None) or exc.default_code
        response.data = error_body(str(code), message, getattr(exc, "field", None))
    return response
