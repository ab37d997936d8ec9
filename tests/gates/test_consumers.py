from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from coordinates.coordinate import parse
from coordinates.models import Role
from gates.push import queue_publish_async
from maria.asgi import application

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://localhost")


def session_cookie(user: Any) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def connect(cookie: bytes | None, origin: tuple[bytes, bytes] | None = ORIGIN) -> Any:
    headers = [h for h in (origin, (b"cookie", cookie) if cookie else None) if h]
    communicator = WebsocketCommunicator(application, "/ws/queue/", headers=headers)
    connected, code = await communicator.connect()
    return communicator, connected, code


async def test_an_anonymous_socket_is_closed(org: Any) -> None:
    _, connected, code = await connect(None)
    assert not connected
    assert code == 4401


async def test_a_socket_from_a_foreign_origin_is_refused(
    org: Any, person: Callable[..., Any]
) -> None:
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1")
    cookie = await sync_to_async(session_cookie)(user)
    _, connected, _ = await connect(cookie, origin=(b"origin", b"https://evil.example"))
    assert not connected
    _, connected, _ = await connect(cookie, origin=None)
    assert not connected


async def test_a_user_without_a_queue_role_is_closed(org: Any, person: Callable[..., Any]) -> None:
    user = await sync_to_async(person)("olga", Role.AUDITOR, "G1")
    cookie = await sync_to_async(session_cookie)(user)
    _, connected, code = await connect(cookie)
    assert not connected
    assert code == 4403


async def test_events_reach_exactly_the_reviewers_whose_scope_covers_the_zone(
    org: Any, person: Callable[..., Any]
) -> None:
    # given a finance reviewer and a legal reviewer, both connected
    finance = await sync_to_async(person)("fin", Role.REVIEWER, "G1.U1.P1", "G1.U1.P1.Z1")
    legal = await sync_to_async(person)("lex", Role.REVIEWER, "G1.U1.P2")
    fin_socket, ok_fin, _ = await connect(await sync_to_async(session_cookie)(finance))
    lex_socket, ok_lex, _ = await connect(await sync_to_async(session_cookie)(legal))
    assert ok_fin
    assert ok_lex
    assert (await fin_socket.receive_json_from())["scopes"] == ["G1.U1.P1"]
    assert (await lex_socket.receive_json_from())["scopes"] == ["G1.U1.P2"]
    # when a decision in a finance zone is added to the queue
    event = {"type": "decision.added", "decision": {"id": 7}}
    await queue_publish_async(parse("G1.U1.P1.Z1"), event)
    # then the finance reviewer gets it once, the legal reviewer never
    assert await fin_socket.receive_json_from() == event
    assert await fin_socket.receive_nothing(timeout=0.2)
    assert await lex_socket.receive_nothing(timeout=0.2)
    await fin_socket.disconnect()
    await lex_socket.disconnect()


async def test_ping_is_answered(org: Any, person: Callable[..., Any]) -> None:
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1")
    socket, connected, _ = await connect(await sync_to_async(session_cookie)(user))
    assert connected
    await socket.receive_json_from()
    await socket.send_json_to({"type": "ping"})
    assert await socket.receive_json_from() == {"type": "pong"}
    await socket.disconnect()
