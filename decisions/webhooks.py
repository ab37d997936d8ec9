"""Webhooks that tell an agent each outcome of its answers, in the Standard Webhooks format
(standardwebhooks.com, version 1.0.0 of the specification).

One message per outcome: `decision.completed` (released), `decision.failed` (blocked, or given
up on, or wrong now that its evidence changed), `decision.rejected` (by a reviewer),
`decision.escalated` (its review went up a level), `decision.superseded` (the text it rested
on changed: it is being reviewed again) and `decision.corrected` (a released answer found
wrong now on that review, with the reviewer's note), each `{"type", "timestamp", "data"}`,
its body the compact JSON of it with sorted keys. Headers:

- `webhook-id`: `msg_<32 hex>`, the same on every retry of a message (receivers deduplicate
  on it);
- `webhook-timestamp`: the attempt's unix seconds;
- `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`,
  a space-separated list when more than one key signs (a rotation);
- `X-Maria-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the header of
  the previous release, still sent for this one, then removed.

The key is the token's webhook secret read as a Standard Webhooks secret: the base64 after an
optional `whsec_`. Secrets issued so far are 64 hex digits, which are base64 as they stand, so
`whsec_<secret>` (or the secret alone) goes into any Standard Webhooks library unchanged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import http.client
import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, Literal, TypedDict

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from coordinates.models import is_webhook_url
from decisions.delivery import delivery_of
from decisions.models import Decision

TIMEOUT_SECONDS = 10
SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of every secret, not one

COMPLETED: Final = "decision.completed"
FAILED: Final = "decision.failed"
REJECTED: Final = "decision.rejected"
ESCALATED: Final = "decision.escalated"
SUPERSEDED: Final = "decision.superseded"
CORRECTED: Final = "decision.corrected"
EventType = Literal[
    "decision.completed",
    "decision.failed",
    "decision.rejected",
    "decision.escalated",
    "decision.superseded",
    "decision.corrected",
]
Release = Literal["auto", "approved", "overridden"]

# The thresholds a refusal is measured against, from the report's policy (coordinates/policy.py).
THRESHOLDS = ("tau", "delta", "floor", "refusal_floor", "cohesion_tau")


class Message(TypedDict):
    """What a webhook's body holds (the specification's recommended envelope)."""

    type: EventType
    timestamp: str  # when the outcome happened, ISO 8601 UTC; not when it is sent
    data: dict[str, Any]


class DeliveryError(RuntimeError):
    """The receiver did not take the webhook (network error or non-2xx)."""


# --- signing (pure) --------------------------------------------------------------------------


def signing_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret: base64-decode what follows `whsec_`."""
    encoded = secret.removeprefix(SECRET_PREFIX)
    try:
        key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    except binascii.Error as error:
        raise ValueError("a webhook secret must be base64, optionally after whsec_") from error
    if not key:
        raise ValueError("a webhook secret must not be empty")
    return key


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """`v1,` + base64(HMAC-SHA256(key, "<webhook_id>.<timestamp>.<body>"))."""
    content = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signature_header(secrets: Sequence[str], webhook_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value: one signature a key, space-separated (for a rotation,
    the new key's and the old one's, so receivers holding either accept it)."""
    return " ".join(sign(secret, webhook_id, timestamp, body) for secret in secrets)


def standard_headers(
    secrets: Sequence[str], webhook_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    if "." in webhook_id:  # the signed content is split on full stops (the specification)
        raise ValueError(f"a webhook id must not contain '.': {webhook_id!r}")
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature_header(secrets, webhook_id, timestamp, body),
    }


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The previous release's header value: hex HMAC-SHA256(secret, "<timestamp>.<body>")."""
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def verify(secret: str, header: str, body: bytes, *, now: int, tolerance: int = 300) -> bool:
    """What a receiver of the previous release's `X-Maria-Signature` does: check the
    signature and that it is recent."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > tolerance:
        return False
    return hmac.compare_digest(parts.get("v1", ""), signature(secret, timestamp, body))


def new_webhook_id() -> str:
    """A message's id: random, so that receivers of two deployments never confuse two."""
    return f"msg_{uuid.uuid4().hex}"


def body_of(message: Mapping[str, Any]) -> bytes:
    """The bytes sent and signed: compact JSON with sorted keys, the same for every retry of a
    message whatever order the database gave its keys back in."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


# --- the messages ------------------------------------------------------------------------------


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def decision_url(decision_id: int) -> str:
    """The decision's resource, absolute (settings.MARIA_PUBLIC_URL in front of its path)."""
    return settings.MARIA_PUBLIC_URL.rstrip("/") + reverse("decision", args=[decision_id])


def _data(decision: Decision, state: str) -> dict[str, Any]:
    return {
        "id": decision.pk,
        "url": decision_url(decision.pk),
        "zone": decision.zone,
        "agent": decision.agent,
        "state": state,
        "gate": decision.gate or None,
        "mode": decision.mode or None,
        "sufficiency": decision.sufficiency,
        "completeness": decision.completeness,
        "cohesion": decision.cohesion,
        "policy_version": decision.policy_label or None,
    }


def _message(kind: EventType, data: dict[str, Any]) -> Message:
    return {"type": kind, "timestamp": _iso(timezone.now()), "data": data}


def completed_message(decision: Decision, *, release: Release, reason: str = "") -> Message:
    """The answer is released: by the gate (`auto`), by its reviewers (`approved`) or over a
    block (`overridden`). Its state is the one the 2xx of this delivery leaves it in.

    `answer` is what the asker receives (decisions.delivery: as its mode allows, or a
    reviewer's replacement; null for a refusal), `not_answered` the parts of the question a
    partial answer leaves out, `replaced` whether a person wrote it, and `submitted_answer`
    the agent's text as it was submitted."""
    data = _data(decision, "completed")
    delivered = delivery_of(decision)
    data.update(
        answer=delivered.answer,
        not_answered=delivered.not_answered,
        replaced=delivered.replaced,
        submitted_answer=decision.answer,
        release=release,
        reason=reason or None,
    )
    return _message(COMPLETED, data)


def failed_message(decision: Decision) -> Message:
    """The answer failed: blocked by the gate, with the refusal (what was found, the scores,
    what to try: services._refusal) and the thresholds it fell short of; or given up on in
    validation, with the reason and no refusal."""
    report = decision.report
    thresholds = {k: report.policy.get(k) for k in THRESHOLDS} if report is not None else None
    data = _data(decision, decision.state)
    data.update(reason=decision.outcome_reason, refusal=decision.refusal, thresholds=thresholds)
    return _message(FAILED, data)


def _claims(decision: Decision) -> list[dict[str, Any]]:
    """Each claim with its index and the engine's verdict, as the reviewer saw them."""
    report = decision.report
    claims = report.body.get("claims", []) if report is not None else decision.bundle.claims
    return [
        {
            "index": index,
            "text": claim["text"],
            "supported": claim.get("supported"),
            "reasons": claim.get("reasons", [])[:3],
        }
        for index, claim in enumerate(claims)
    ]


def rejected_message(decision: Decision, *, reviewer: str) -> Message:
    """A reviewer rejected the answer: their reason and the claims it was judged on."""
    data = _data(decision, decision.state)
    data.update(reason=decision.outcome_reason, reviewer=reviewer, claims=_claims(decision))
    return _message(REJECTED, data)


def escalated_message(decision: Decision) -> Message:
    """Nobody reviewed the answer in time: it went up to `escalated_to`, due again at `due_at`."""
    data = _data(decision, decision.state)
    data.update(
        escalated_to=decision.escalated_to,
        due_at=_iso(decision.due_at) if decision.due_at else None,
        reason="the review was not done within the zone's review SLA",
    )
    return _message(ESCALATED, data)


def superseded_message(decision: Decision, changes: list[dict[str, Any]]) -> Message:
    """The text an answer rested on changed (a new version, or a conflict resolved against
    it): each change with the text cited and the text now, and that the answer is being
    reviewed again in its zone."""
    data = _data(decision, decision.state)
    data.update(answer=decision.answer, changes=changes, rereview=True)
    return _message(SUPERSEDED, data)


def corrected_message(
    decision: Decision, *, verdict: str, note: str, reviewer: str, changes: list[dict[str, Any]]
) -> Message:
    """An answer already released is wrong now that the text it rested on changed: the
    reviewer's verdict and note (what is wrong now), and the change it was judged on."""
    data = _data(decision, decision.state)
    data.update(
        answer=decision.answer, verdict=verdict, note=note, reviewer=reviewer, changes=changes
    )
    return _message(CORRECTED, data)


# --- sending ---------------------------------------------------------------------------------


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A 3xx is a failed delivery (the specification): followed, a POST would arrive as a GET
    without its body and count as delivered, or be sent somewhere the agent never named."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def post(url: str, secret: str, *, webhook_id: str, body: bytes, now: int | None = None) -> int:
    """POST one attempt of a message, signed for this attempt's time; the status, or
    DeliveryError for anything but a 2xx."""
    if not is_webhook_url(url):
        # Refused at token issue too; a stored bad URL must fail the delivery, not the worker.
        raise DeliveryError(f"not an http(s) URL: {url[:200]!r}")
    timestamp = int(time.time()) if now is None else now
    try:
        signed = standard_headers([secret], webhook_id, timestamp, body)
    except ValueError as error:
        raise DeliveryError(f"cannot sign: {error}") from error
    request = urllib.request.Request(  # noqa: S310 - the URL is the agent's own, http(s) only
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "maria-governance-engine",
            **signed,
            "X-Maria-Signature": f"t={timestamp},v1={signature(secret, timestamp, body)}",
        },
    )
    try:
        with _opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            status = int(response.status)
    except urllib.error.HTTPError as error:
        raise DeliveryError(f"the receiver answered {error.code}") from error
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise DeliveryError(f"could not reach the receiver: {error}") from error
    except (http.client.HTTPException, ValueError) as error:
        # A garbled answer (BadStatusLine), or a URL http.client cannot use (a port that is
        # not a number): the delivery failed, and the worker goes on.
        raise DeliveryError(f"no usable answer from the receiver: {error!r}") from error
    if not 200 <= status < 300:
        raise DeliveryError(f"the receiver answered {status}")
    return status
