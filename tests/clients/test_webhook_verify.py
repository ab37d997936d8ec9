"""`maria_client.verify_webhook` against the Standard Webhooks specification: its published
test vector, the timestamp tolerance, several signatures in one header, and what must fail.

The vector is the reference library's (standard-webhooks/standard-webhooks,
libraries/python/tests/test_webhooks.py, `test_sign_function`): key
`whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`, id `msg_p5jXN8AQM9LWM0D4loKWxJek`, timestamp
1614265330, body `{"test": 2432232314}`.
"""

from __future__ import annotations

import threading
import time

import pytest

from maria_client import (
    WebhookEvent,
    WebhookInbox,
    WebhookVerificationError,
    sign_webhook,
    verify_webhook,
)

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = '{"test": 2432232314}'
EXPECTED = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(signature: str = EXPECTED, timestamp: int = TIMESTAMP) -> dict[str, str]:
    return {
        "webhook-id": MSG_ID,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }


def test_signing_the_specifications_vector_gives_its_published_signature() -> None:
    assert sign_webhook(SECRET, msg_id=MSG_ID, timestamp=TIMESTAMP, body=BODY) == EXPECTED


def test_the_vector_verifies_at_its_own_time_with_or_without_the_prefix() -> None:
    for secret in (SECRET, SECRET.removeprefix("whsec_")):
        event = verify_webhook(headers(), BODY.encode(), secret, now=TIMESTAMP)
        assert isinstance(event, WebhookEvent)
        assert (event.id, event.timestamp, event.payload) == (
            MSG_ID,
            TIMESTAMP,
            {"test": 2432232314},
        )


def test_header_names_are_case_insensitive() -> None:
    shouting = {name.upper(): value for name, value in headers().items()}
    assert verify_webhook(shouting, BODY, SECRET, now=TIMESTAMP).id == MSG_ID


@pytest.mark.parametrize("offset", [-301, 301])
def test_a_timestamp_beyond_the_tolerance_either_way_is_refused(offset: int) -> None:
    with pytest.raises(WebhookVerificationError) as refused:
        verify_webhook(headers(), BODY, SECRET, now=TIMESTAMP + offset)
    assert refused.value.code == "stale_timestamp"
    # within the tolerance it holds
    assert verify_webhook(headers(), BODY, SECRET, now=TIMESTAMP + offset // 2)


def test_one_matching_signature_among_several_is_enough() -> None:
    # as while a secret is being rotated: other versions and stale signatures beside it
    other = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
    header = " ".join([other, "v2," + EXPECTED.split(",", 1)[1], EXPECTED, other])
    assert verify_webhook(headers(header), BODY, SECRET, now=TIMESTAMP).id == MSG_ID


@pytest.mark.parametrize(
    ("header", "body", "secret"),
    [
        ("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=", BODY, SECRET),  # one bit off
        (EXPECTED, BODY + " ", SECRET),  # the body changed
        (EXPECTED, BODY, "whsec_" + "A" * 32),  # another secret
        ("v1a," + EXPECTED.split(",", 1)[1], BODY, SECRET),  # not a v1 signature
        ("", BODY, SECRET),
    ],
)
def test_a_signature_that_does_not_match_is_refused(header: str, body: str, secret: str) -> None:
    with pytest.raises(WebhookVerificationError) as refused:
        verify_webhook(headers(header), body, secret, now=TIMESTAMP)
    assert refused.value.code == "bad_signature"


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_refused(missing: str) -> None:
    partial = {name: value for name, value in headers().items() if name != missing}
    with pytest.raises(WebhookVerificationError, match=missing):
        verify_webhook(partial, BODY, SECRET, now=TIMESTAMP)


def test_a_timestamp_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(WebhookVerificationError) as refused:
        verify_webhook({**headers(), "webhook-timestamp": "hello"}, BODY, SECRET, now=TIMESTAMP)
    assert refused.value.code == "bad_timestamp"


def test_the_inbox_keeps_each_event_once_and_wakes_whoever_waits_for_it() -> None:
    # given an inbox, and someone waiting for decision 7's outcome
    secret = "whsec_" + "c2VjcmV0LWtleS1vZi10d2VudHktZm91ci1ieXRlcw=="
    inbox = WebhookInbox(secret, tolerance=10**10)
    body = '{"type": "decision.completed", "data": {"id": 7, "state": "completed"}}'
    signed = {
        "webhook-id": "msg_1",
        "webhook-timestamp": str(TIMESTAMP),
        "webhook-signature": sign_webhook(secret, msg_id="msg_1", timestamp=TIMESTAMP, body=body),
    }
    found: list[WebhookEvent | None] = []
    waiter = threading.Thread(target=lambda: found.append(inbox.wait_for(7, timeout=30)))
    waiter.start()

    # when the same delivery arrives twice (a retry), and one about another decision
    inbox.receive(signed, body)
    inbox.receive(signed, body)
    waiter.join(30)

    # then the waiter got it, and it is kept once
    assert [event.decision_id for event in found if event] == [7]
    assert len(inbox.events) == 1
    assert inbox.wait_for(8, timeout=0) is None
    # and a forged one is refused, not kept
    with pytest.raises(WebhookVerificationError):
        inbox.receive({**signed, "webhook-id": "msg_2"}, body)
    assert len(inbox.events) == 1


@pytest.mark.django_db
def test_the_readmes_webhook_check_takes_the_secret_as_issue_token_prints_it() -> None:
    """README, "Connect your RAG": its `verify_webhook(...)` line, run as written with the
    secret line `issue_token --webhook` printed, accepts a delivery signed with that token
    (issue 29, item 10: the README once put a second `whsec_` before it)."""
    from io import StringIO
    from pathlib import Path
    from types import SimpleNamespace

    from django.conf import settings
    from django.core.management import call_command

    from coordinates.models import ApiToken
    from decisions.webhooks import body_of, new_webhook_id, standard_headers

    call_command("zone_add", "G1.U1.P1.Z1", stdout=StringIO())
    out = StringIO()
    call_command(
        "issue_token",
        "--agent",
        "G1.U1.P1.Z1.A1",
        "--webhook",
        "https://agent.example/hooks",
        stdout=out,
        stderr=StringIO(),
    )
    printed = out.getvalue().split()[-1]
    token = ApiToken.objects.get()
    body = body_of({"type": "decision.completed", "timestamp": "", "data": {"id": 1}})
    webhook_id = new_webhook_id()
    sent = standard_headers([token.webhook_secret], webhook_id, int(time.time()), body)
    readme = (Path(settings.BASE_DIR) / "README.md").read_text()
    line = next(
        line.strip() for line in readme.splitlines() if line.startswith("event = verify_webhook(")
    )
    scope: dict[str, object] = {
        "verify_webhook": verify_webhook,
        "request": SimpleNamespace(headers=sent, body=body),
        "SECRET": printed,
    }
    exec(line, scope)  # noqa: S102 - the README's own line, run as a reader would
    event = scope["event"]
    assert isinstance(event, WebhookEvent)
    assert event.id == webhook_id
