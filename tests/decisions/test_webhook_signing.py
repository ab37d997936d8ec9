"""Signing a webhook per Standard Webhooks (decisions/webhooks.py), by itself: the
specification's published test vector, key rotation, the secrets issued so far, the exact
bytes sent; and what counts as a failed delivery (a redirect, a garbled answer)."""

from __future__ import annotations

import base64
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from decisions.webhooks import (
    DeliveryError,
    body_of,
    post,
    sign,
    signature_header,
    signing_key,
    standard_headers,
)
from tests.decisions.standard_webhooks import (
    VECTOR_BODY,
    VECTOR_ID,
    VECTOR_SECRET,
    VECTOR_SIGNATURE,
    VECTOR_TIMESTAMP,
    standard_valid,
)


def test_signing_gives_the_standard_webhooks_published_test_vector() -> None:
    # the reference libraries' vector, with the whsec_ prefix and without it
    assert sign(VECTOR_SECRET, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY) == VECTOR_SIGNATURE
    bare = VECTOR_SECRET.removeprefix("whsec_")
    assert sign(bare, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY) == VECTOR_SIGNATURE
    headers = standard_headers([VECTOR_SECRET], VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY)
    assert headers == {
        "webhook-id": VECTOR_ID,
        "webhook-timestamp": str(VECTOR_TIMESTAMP),
        "webhook-signature": VECTOR_SIGNATURE,
    }
    # and the independent check accepts it, and nothing changed
    assert standard_valid(VECTOR_SECRET, headers, VECTOR_BODY, now=VECTOR_TIMESTAMP)
    assert not standard_valid(VECTOR_SECRET, headers, VECTOR_BODY[:-1], now=VECTOR_TIMESTAMP)
    moved = {**headers, "webhook-timestamp": str(VECTOR_TIMESTAMP + 1)}
    assert not standard_valid(VECTOR_SECRET, moved, VECTOR_BODY, now=VECTOR_TIMESTAMP)
    renamed = {**headers, "webhook-id": VECTOR_ID + "x"}
    assert not standard_valid(VECTOR_SECRET, renamed, VECTOR_BODY, now=VECTOR_TIMESTAMP)


def test_a_rotation_signs_with_each_key_and_a_receiver_holding_either_accepts() -> None:
    old, new = "whsec_" + base64.b64encode(b"o" * 32).decode(), VECTOR_SECRET
    value = signature_header([new, old], VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY)
    assert value.split(" ") == [
        sign(new, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
        sign(old, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY),
    ]
    headers = {"webhook-id": VECTOR_ID, "webhook-timestamp": str(VECTOR_TIMESTAMP)}
    for secret in (old, new):
        signed = {**headers, "webhook-signature": value}
        assert standard_valid(secret, signed, VECTOR_BODY, now=VECTOR_TIMESTAMP)


def test_the_secrets_issued_so_far_are_standard_secrets_as_they_stand() -> None:
    # 64 hex digits (coordinates.services.token_issue) are base64 of a 48-byte key
    secret = "0123456789abcdef" * 4
    assert signing_key(secret) == signing_key(f"whsec_{secret}") == base64.b64decode(secret)
    assert len(signing_key(secret)) == 48
    # unpadded base64 is taken as the reference libraries take it
    assert signing_key("whsec_" + base64.b64encode(b"k" * 25).decode().rstrip("=")) == b"k" * 25
    for bad in ("whsec_", "not base64!", "whsec_***"):
        with pytest.raises(ValueError, match="secret"):
            signing_key(bad)


def test_a_webhook_id_with_a_full_stop_is_refused() -> None:
    # the signed content is split on full stops: an id holding one could forge another's
    with pytest.raises(ValueError, match="must not contain"):
        standard_headers([VECTOR_SECRET], "msg_1.2", VECTOR_TIMESTAMP, VECTOR_BODY)


def test_the_body_is_the_same_bytes_whatever_order_its_keys_come_back_in() -> None:
    one = {"type": "decision.failed", "timestamp": "t", "data": {"id": 1, "zone": "名前"}}
    other = {"data": {"zone": "名前", "id": 1}, "timestamp": "t", "type": "decision.failed"}
    assert body_of(one) == body_of(other)
    assert json.loads(body_of(one)) == one
    assert "名前".encode() in body_of(one)  # sent as UTF-8, not escaped


def test_a_redirect_is_a_failed_delivery_and_is_not_followed() -> None:
    # given an endpoint that redirects to another, which would answer 200
    reached: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self._answer()

        def do_GET(self) -> None:
            self._answer()

        def _answer(self) -> None:
            reached.append(f"{self.command} {self.path}")
            moved = self.path == "/hook"
            self.send_response(302 if moved else 200)
            if moved:
                self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # when a webhook is posted there, then it failed, and the redirect was not followed
        with pytest.raises(DeliveryError, match="answered 302"):
            post(
                f"http://127.0.0.1:{server.server_address[1]}/hook",
                VECTOR_SECRET,
                webhook_id=VECTOR_ID,
                body=VECTOR_BODY,
            )
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert reached == ["POST /hook"]


def test_a_garbled_answer_or_an_unusable_url_is_a_failed_delivery_not_a_crash() -> None:
    # given an endpoint that answers something that is not HTTP
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)

    def answer_garbage() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            connection.sendall(b"this is not http\r\n\r\n")

    thread = threading.Thread(target=answer_garbage, daemon=True)
    thread.start()
    try:
        with pytest.raises(DeliveryError, match="no usable answer"):
            post(
                f"http://127.0.0.1:{server.getsockname()[1]}/hook",
                VECTOR_SECRET,
                webhook_id=VECTOR_ID,
                body=VECTOR_BODY,
            )
    finally:
        thread.join(5)
        server.close()
    # and a stored URL whose port is no number
    with pytest.raises(DeliveryError, match="no usable answer"):
        post("http://127.0.0.1:port/hook", VECTOR_SECRET, webhook_id=VECTOR_ID, body=VECTOR_BODY)
