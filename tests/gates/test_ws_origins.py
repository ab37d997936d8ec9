"""Websocket origins are checked with their port: a page opens its socket at its own host
and port (static/maria/maria.js), so only that origin, or a trusted one, may open it;
another port of the same host, another host, or a host not in ALLOWED_HOSTS may not.

The table runs the validator (maria.origins) around a socket that accepts everyone; the
last tests go through the whole ASGI application with a reviewer's session cookie.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings

from coordinates.models import Role
from maria.asgi import application
from maria.origins import SameOriginValidator

pytestmark = pytest.mark.asyncio

HOSTS = ["localhost", "127.0.0.1", "[::1]", "maria.example"]


class Accepting(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        await self.accept()


def headers(host: str | None, origin: str | None, *extra: tuple[str, str]) -> list[Any]:
    pairs = [("host", host), ("origin", origin), *extra]
    return [(name.encode(), value.encode()) for name, value in pairs if value is not None]


async def opens(
    host: str | None, origin: str | None, *extra: tuple[str, str], scheme: str = "ws"
) -> bool:
    communicator = WebsocketCommunicator(
        SameOriginValidator(Accepting.as_asgi()),
        "/ws/queue/",
        headers=headers(host, origin, *extra),
    )
    communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return bool(connected)


@override_settings(ALLOWED_HOSTS=HOSTS, CSRF_TRUSTED_ORIGINS=[])
@pytest.mark.parametrize(
    ("host", "origin", "allowed"),
    [
        # the page's own origin, port included
        ("localhost:8000", "http://localhost:8000", True),
        ("127.0.0.1:8000", "http://127.0.0.1:8000", True),
        ("[::1]:8000", "http://[::1]:8000", True),
        ("maria.example", "http://maria.example", True),
        ("maria.example", "http://maria.example:80", True),  # the default port, spelt out
        ("LOCALHOST:8000", "http://localhost:8000", True),  # host names have no case
        # the same host on another port: another service's page
        ("localhost:8000", "http://localhost:9999", False),
        ("localhost:8000", "http://localhost", False),
        ("maria.example", "http://maria.example:8080", False),
        # another host, allowed or not
        ("localhost:8000", "http://127.0.0.1:8000", False),
        ("localhost:8000", "http://evil.example:8000", False),
        # a host not in ALLOWED_HOSTS, even as its own origin (a name resolving here)
        ("evil.example:8000", "http://evil.example:8000", False),
        # another scheme: an https page for a plain socket, or no page at all
        ("localhost:8000", "https://localhost:8000", False),
        ("localhost:8000", "null", False),
        ("localhost:8000", "file://", False),
        ("localhost:8000", "http://localhost:8000/path", False),
        ("localhost:8000", "http://evil@localhost:8000", False),
        ("localhost:8000", None, False),
    ],
)
async def test_a_socket_opens_only_from_its_own_origin_port_included(
    host: str, origin: str | None, allowed: bool
) -> None:
    assert await opens(host, origin) is allowed


@override_settings(ALLOWED_HOSTS=HOSTS, CSRF_TRUSTED_ORIGINS=[])
async def test_a_socket_over_tls_opens_from_the_https_page_only() -> None:
    assert await opens("maria.example", "https://maria.example", scheme="wss")
    assert await opens("maria.example:443", "https://maria.example", scheme="wss")
    assert not await opens("maria.example", "http://maria.example", scheme="wss")


@override_settings(
    ALLOWED_HOSTS=HOSTS,
    CSRF_TRUSTED_ORIGINS=[],
    SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
)
async def test_behind_a_tls_proxy_its_header_says_the_page_is_https() -> None:
    forwarded = ("x-forwarded-proto", "https")
    assert await opens("maria.example", "https://maria.example", forwarded)
    assert not await opens("maria.example", "http://maria.example", forwarded)
    assert await opens("maria.example", "http://maria.example", ("x-forwarded-proto", "http"))


@override_settings(ALLOWED_HOSTS=HOSTS, CSRF_TRUSTED_ORIGINS=["https://maria.example"])
async def test_a_trusted_origin_opens_a_socket_whose_host_the_proxy_rewrote() -> None:
    # the proxy passes the socket on as 127.0.0.1:8001, the page is https://maria.example
    assert await opens("127.0.0.1:8001", "https://maria.example")
    assert not await opens("127.0.0.1:8001", "https://maria.example:8443")
    assert not await opens("127.0.0.1:8001", "http://maria.example")
    # but never on a host that is not allowed
    assert not await opens("evil.example", "https://maria.example")


@override_settings(ALLOWED_HOSTS=HOSTS, CSRF_TRUSTED_ORIGINS=["https://*.maria.example"])
async def test_trusted_subdomains_are_read_as_django_reads_them() -> None:
    assert await opens("127.0.0.1:8001", "https://eu.maria.example")
    assert not await opens("127.0.0.1:8001", "https://eu.maria.example.evil")
    assert not await opens("127.0.0.1:8001", "http://eu.maria.example")


@override_settings(ALLOWED_HOSTS=HOSTS, CSRF_TRUSTED_ORIGINS=[])
async def test_without_a_host_header_the_server_address_is_the_sockets_own() -> None:
    def server(address: tuple[str, int]) -> WebsocketCommunicator:
        communicator = WebsocketCommunicator(
            SameOriginValidator(Accepting.as_asgi()),
            "/ws/queue/",
            headers=headers(None, "http://localhost:8000"),
        )
        communicator.scope["server"] = address
        return communicator

    for address, allowed in [(("localhost", 8000), True), (("localhost", 9999), False)]:
        communicator = server(address)
        connected, _ = await communicator.connect()
        await communicator.disconnect()
        assert connected is allowed
    # and with no address at all (an in-process harness), the host's default port
    assert await opens(None, "http://localhost")
    assert not await opens(None, "http://localhost:9999")
    assert not await opens(None, "http://evil.example")


# --- through the whole application, with a reviewer's session ----------------------------


def session_cookie(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


@pytest.mark.django_db(transaction=True)
@override_settings(ALLOWED_HOSTS=HOSTS)
async def test_a_reviewer_page_on_port_8000_opens_its_socket_and_one_on_9999_cannot(
    org: Any, person: Callable[..., Any]
) -> None:
    # given a reviewer signed in on the page at http://localhost:8000
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1")
    cookie = await sync_to_async(session_cookie)(user)

    async def connect(origin: str) -> tuple[bool, Any]:
        communicator = WebsocketCommunicator(
            application,
            "/ws/queue/",
            headers=[
                (b"host", b"localhost:8000"),
                (b"origin", origin.encode()),
                (b"cookie", cookie),
            ],
        )
        connected, _ = await communicator.connect()
        hello = await communicator.receive_json_from() if connected else None
        await communicator.disconnect()
        return connected, hello

    # when the page opens its socket, it is accepted and told its scopes
    connected, hello = await connect("http://localhost:8000")
    assert connected
    assert hello["scopes"] == ["G1"]
    # and a page of another port of the same host, or of another host, is refused, even
    # with the reviewer's cookie
    for origin in ("http://localhost:9999", "http://127.0.0.1:8000", "https://evil.example"):
        assert await connect(origin) == (False, None), origin
