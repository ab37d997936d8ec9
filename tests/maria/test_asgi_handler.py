"""HTTP through the ASGI application: the whole middleware chain and the view run in one
sync step per request (maria.handlers), with every middleware still applied."""

from __future__ import annotations

import asyncio

import pytest
from channels.testing import HttpCommunicator

from maria.asgi import application, django_asgi_app

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_middleware_chain_is_built_synchronously() -> None:
    chain = getattr(django_asgi_app, "_middleware_chain", None)
    assert chain is not None
    assert not asyncio.iscoroutinefunction(chain)


def test_a_request_through_asgi_gets_every_middleware_s_headers() -> None:
    async def fetch() -> dict[str, object]:
        communicator = HttpCommunicator(
            application, "GET", "/healthz", headers=[(b"host", b"localhost")]
        )
        return await communicator.get_response(timeout=20)

    response = asyncio.run(fetch())
    headers = {k.decode().lower(): v.decode() for k, v in response["headers"]}  # type: ignore[attr-defined]
    assert response["status"] == 200
    assert "nonce-" in headers["content-security-policy"]  # ours
    assert headers["x-frame-options"] == "DENY"  # Django's clickjacking middleware
    assert headers["x-content-type-options"] == "nosniff"  # SecurityMiddleware
