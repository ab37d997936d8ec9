"""Receiving the engine's webhooks, signed per the Standard Webhooks specification.

Headers `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`: a space
separated list of `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, more than one while
a secret is being rotated. The secret is `whsec_<base64 key>`. `verify_webhook` checks one
request; `WebhookInbox` keeps the verified events for `Maria.wait`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from maria_client.errors import WebhookVerificationError

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret
TOLERANCE_SECONDS = 5 * 60
# What ends a decision, as the engine announces it; `decision.escalated`, `decision.superseded`
# and `decision.corrected` (a released answer found wrong now) are news, not an end.
OUTCOMES = frozenset({"decision.completed", "decision.failed", "decision.rejected"})


@dataclass(frozen=True)
class WebhookEvent:
    """One verified webhook: its id (the same on every retry), when it was sent, its type
    (`decision.completed`, ...) and the JSON payload."""

    id: str
    timestamp: int
    type: str
    payload: dict[str, Any]

    @property
    def data(self) -> dict[str, Any]:
        """The event's data: the payload's `data` object, or the payload itself."""
        data = self.payload.get("data")
        return data if isinstance(data, dict) else self.payload

    @property
    def decision_id(self) -> int | None:
        for holder in (self.data, self.data.get("decision"), self.payload.get("decision")):
            if isinstance(holder, dict):
                value = holder.get("decision_id", holder.get("id"))
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
        return None


def secret_key(secret: str | bytes) -> bytes:
    """The HMAC key of a `whsec_<base64>` secret (the prefix is optional), or raw bytes."""
    if isinstance(secret, bytes):
        return secret
    text = secret.removeprefix(SECRET_PREFIX)
    try:
        # Padding is optional in secrets as they are handed out.
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError(
            "the webhook secret is not base64 (expected whsec_<base64>)", code="bad_secret"
        ) from None


def sign_webhook(secret: str | bytes, *, msg_id: str, timestamp: int, body: bytes | str) -> str:
    """`v1,<base64 HMAC-SHA256(key, "{msg_id}.{timestamp}.{body}")>`: one signature."""
    content = body.encode() if isinstance(body, str) else body
    message = f"{msg_id}.{timestamp}.".encode() + content
    digest = hmac.new(secret_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def _header(headers: Mapping[str, str], name: str) -> str:
    # Header names are case-insensitive; a plain dict from a framework may keep any case.
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise WebhookVerificationError(f"the webhook has no {name} header", code="missing_header")


def verify_webhook(
    headers: Mapping[str, str],
    body: bytes | str,
    secret: str | bytes,
    *,
    tolerance: int = TOLERANCE_SECONDS,
    now: float | None = None,
) -> WebhookEvent:
    """Check a webhook as received (the raw body, never a re-serialised one) and return it.

    Raises `WebhookVerificationError` when a header is missing, the timestamp is further than
    `tolerance` seconds from now (either way: a replay, or a clock far off), or no `v1`
    signature in the header matches; signatures are compared in constant time.
    """
    msg_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise WebhookVerificationError(
            f"webhook-timestamp is not unix seconds: {stamp[:40]!r}", code="bad_timestamp"
        ) from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError(
            f"webhook-timestamp {timestamp} is more than {tolerance} s from now",
            code="stale_timestamp",
        )
    content = body.encode() if isinstance(body, str) else body
    expected = sign_webhook(secret, msg_id=msg_id, timestamp=timestamp, body=content)
    matched = False
    for candidate in signatures.split():
        version, _, _ = candidate.partition(",")
        # Check every v1 signature (no early exit), so timing tells nothing about which.
        if version == "v1" and hmac.compare_digest(candidate.encode(), expected.encode()):
            matched = True
    if not matched:
        raise WebhookVerificationError("no webhook signature matches", code="bad_signature")
    try:
        payload = json.loads(content)
    except ValueError:
        raise WebhookVerificationError("the webhook body is not JSON", code="bad_body") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the webhook body is not a JSON object", code="bad_body")
    kind = payload.get("type")
    return WebhookEvent(
        id=msg_id, timestamp=timestamp, type=kind if isinstance(kind, str) else "", payload=payload
    )


@dataclass
class WebhookInbox:
    """Where a webhook receiver puts what it got, for `Maria.wait(..., webhook=inbox)`.

    `receive` verifies and keeps each event once (a retried delivery has the same
    `webhook-id`); `wait_for` blocks until an event about a decision arrives.
    """

    secret: str | bytes
    tolerance: int = TOLERANCE_SECONDS
    events: list[WebhookEvent] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set, repr=False)
    _arrived: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def receive(self, headers: Mapping[str, str], body: bytes | str) -> WebhookEvent:
        """Verify one request (raises `WebhookVerificationError`) and keep its event."""
        event = verify_webhook(headers, body, self.secret, tolerance=self.tolerance)
        with self._arrived:
            if event.id not in self._seen:
                self._seen.add(event.id)
                self.events.append(event)
                self._arrived.notify_all()
        return event

    def wait_for(
        self, decision_id: int, timeout: float, *, types: Collection[str] = OUTCOMES
    ) -> WebhookEvent | None:
        """The first kept event of one of `types` about the decision, waiting up to `timeout`
        seconds for it; None if none came."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for event in self.events:
                    if event.decision_id == decision_id and event.type in types:
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._arrived.wait(left)
