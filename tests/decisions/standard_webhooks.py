"""A receiver's check of a Standard Webhooks signature, written from the specification
(standardwebhooks.com, "Signature scheme" and "Verifying signatures") and not from
decisions/webhooks.py, so that the tests compare two computations; and the published test
vector of the reference libraries (standard-webhooks/standard-webhooks,
libraries/python/tests/test_webhooks.py, `test_sign_function`)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

# The reference libraries' vector: this secret, id, timestamp and body sign to SIGNATURE.
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TIMESTAMP = 1614265330
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def standard_valid(
    secret: str, headers: Mapping[str, str], body: bytes, *, now: int, tolerance: int = 300
) -> bool:
    """True when one `v1` signature in `webhook-signature` is base64(HMAC-SHA256(key,
    "<webhook-id>.<webhook-timestamp>.<body>")), the key being the base64 after `whsec_`, and
    the timestamp is within `tolerance` seconds of `now`. Header names are case-insensitive."""
    lowered = {name.lower(): value for name, value in headers.items()}
    webhook_id = lowered.get("webhook-id")
    timestamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not (webhook_id and timestamp and signatures):
        return False
    if abs(now - int(timestamp)) > tolerance:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = webhook_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest()).decode()
    for versioned in signatures.split(" "):
        version, _, value = versioned.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False


def header(headers: Mapping[str, str], name: str) -> str:
    """A header's value by its name, compared case-insensitively as HTTP does."""
    return next(value for key, value in headers.items() if key.lower() == name.lower())
