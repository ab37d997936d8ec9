"""Webhooks that tell an agent its answer was released, signed with HMAC-SHA256.

Header `X-Maria-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the
receiver recomputes it with its secret and refuses old timestamps, so a captured request
cannot be replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from coordinates.models import is_webhook_url

TIMEOUT_SECONDS = 10


class DeliveryError(RuntimeError):
    """The receiver did not take the webhook (network error or non-2xx)."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """hex HMAC-SHA256(secret, "<timestamp>.<body>")."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def verify(secret: str, header: str, body: bytes, *, now: int, tolerance: int = 300) -> bool:
    """What a receiver does: check the signature and that it is recent."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > tolerance:
        return False
    return hmac.compare_digest(parts.get("v1", ""), signature(secret, timestamp, body))


def post(url: str, secret: str, payload: dict[str, Any]) -> int:
    if not is_webhook_url(url):
        # Refused at token issue too; a stored bad URL must fail the delivery, not the worker.
        raise DeliveryError(f"not an http(s) URL: {url[:200]!r}")
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    timestamp = int(time.time())
    request = urllib.request.Request(  # noqa: S310 - the URL is the agent's own, http(s) only
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "maria-governance-engine",
            "X-Maria-Signature": f"t={timestamp},v1={signature(secret, timestamp, body)}",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            status = int(response.status)
    except urllib.error.HTTPError as error:
        raise DeliveryError(f"the receiver answered {error.code}") from error
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise DeliveryError(f"could not reach the receiver: {error}") from error
    if not 200 <= status < 300:
        raise DeliveryError(f"the receiver answered {status}")
    return status
