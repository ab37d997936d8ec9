"""The engine's error shape `{"error": {"code", "message", "field"}}` as typed exceptions.

Each HTTP status the API answers with has its kind (`NotFound` for 404, `Conflict` for 409,
...); every kind carries the error's `code`, `message` and `field` (a dotted path such as
`claims.2.text`, or None) as the engine sent them.
"""

from __future__ import annotations

from typing import Any

import httpx


class MariaError(Exception):
    """An answer the engine refused, or a request that never got one."""

    status_code: int | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str = "error",
        field: str | None = None,
        status_code: int | None = None,
        details: Any = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        if status_code is not None:
            self.status_code = status_code
        self.details = details
        self.response = response

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        return f"{self.code}: {self.message}{where}"


class ValidationError(MariaError):
    """400: the request is malformed; `field` names what to fix."""

    status_code = 400


class NotAuthenticated(MariaError):
    """401: no token, or one the engine does not know."""

    status_code = 401


class Forbidden(MariaError):
    """403: the token may not do this (another zone, an agent reviewing, ...)."""

    status_code = 403


class NotFound(MariaError):
    """404: missing, or not visible to this token (the engine does not say which)."""

    status_code = 404


class Conflict(MariaError):
    """409: the decision changed first, or a request with this Idempotency-Key still runs."""

    status_code = 409


class TooLarge(MariaError):
    """413: the body, or a list in it, is larger than the engine accepts."""

    status_code = 413


class Unprocessable(MariaError):
    """422: well formed but contradicting what is stored (an Idempotency-Key's first body)."""

    status_code = 422


class RateLimited(MariaError):
    """429: over the token's or the address's rate; `retry_after` is in seconds."""

    status_code = 429

    @property
    def retry_after(self) -> float | None:
        if self.response is None:
            return None
        try:
            return float(self.response.headers.get("Retry-After", ""))
        except ValueError:
            return None


class ServerError(MariaError):
    """5xx: the engine failed or is misconfigured; nothing in the request can fix it."""


class TransportError(MariaError):
    """The request got no answer (refused connection, timeout, reset)."""


class WaitTimeout(MariaError):
    """`Maria.wait` gave up before the decision reached an outcome."""


class WebhookVerificationError(MariaError):
    """A webhook whose signature, timestamp or headers do not hold: do not act on it."""


KINDS: dict[int, type[MariaError]] = {
    400: ValidationError,
    401: NotAuthenticated,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def error_from(response: httpx.Response) -> MariaError:
    """The exception for a non-2xx answer, read from its error shape (or its status alone)."""
    code, message = f"http_{response.status_code}", response.reason_phrase
    field: str | None = None
    details: Any = None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        code = str(error.get("code") or code)
        message = str(error.get("message") or message)
        field = error.get("field") if isinstance(error.get("field"), str) else None
        details = error.get("details")
    status = response.status_code
    kind = KINDS.get(status) or (ServerError if status >= 500 else MariaError)
    return kind(
        message, code=code, field=field, status_code=status, details=details, response=response
    )
