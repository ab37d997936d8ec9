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
from tests.trail.test_trail_bypass import committed_trail

__all__ = ["committed_trail"]

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://localhost")
LONG_KEY = "é" * 99


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


@pytest.mark.parametrize(
    ("frame", "code", "words"),
    [
        ({"text_data": "{not json"}, 4400, "Expecting property name"),
        ({"text_data": " "}, 4400, "Expecting value"),
        ({"text_data": "[" * 100_000}, 4400, "nested deeper than 32 levels"),
        # A reason longer than a close frame carries (123 bytes) is cut between characters.
        ({"text_data": f'{{"{LONG_KEY}": 1, "{LONG_KEY}": 2}}'}, 4400, "duplicate key"),
        ({"bytes_data": b'{"type": "ping"}'}, 1003, "not binary"),
    ],
    ids=["not json", "blank", "100,000 [", "duplicate key", "binary"],
)
async def test_a_malformed_frame_closes_the_socket_with_a_reason_and_one_log_line(
    org: Any,
    person: Callable[..., Any],
    caplog: pytest.LogCaptureFixture,
    frame: dict[str, Any],
    code: int,
    words: str,
) -> None:
    # given a connected reviewer
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1")
    socket, connected, _ = await connect(await sync_to_async(session_cookie)(user))
    assert connected
    await socket.receive_json_from()
    # when the client sends a frame that is not JSON text
    await socket.send_to(**frame)
    # then the server closes with a code and a reason (Channels' reader raised: no close frame)
    output = await socket.receive_output(timeout=3)
    assert output["type"] == "websocket.close"
    assert output["code"] == code
    assert words in output["reason"]
    assert len(output["reason"].encode()) <= 123
    # and logs one warning naming it, without a traceback
    closed = [r for r in caplog.records if r.name == "gates.consumers"]
    assert [r.levelname for r in closed] == ["WARNING"]
    assert words in closed[0].getMessage()
    assert closed[0].exc_info is None
    await socket.disconnect()


async def test_revoking_the_role_closes_the_socket(
    org: Any, person: Callable[..., Any], settings: Any
) -> None:
    from coordinates.services import role_revoke

    settings.MARIA_SOCKET_RECHECK_SECONDS = 0.2
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1.U1.P1")
    socket, connected, _ = await connect(await sync_to_async(session_cookie)(user))
    assert connected
    await socket.receive_json_from()
    # when the role is revoked
    await sync_to_async(role_revoke)(user=user, role=Role.REVIEWER, scope=parse("G1.U1.P1"))
    # then the periodic re-check closes the socket
    output = await socket.receive_output(timeout=3)
    assert output["type"] == "websocket.close"
    assert output["code"] == 4403


async def test_logout_closes_the_socket(
    org: Any, person: Callable[..., Any], settings: Any
) -> None:
    from django.contrib.sessions.models import Session

    settings.MARIA_SOCKET_RECHECK_SECONDS = 0.2
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1")
    socket, connected, _ = await connect(await sync_to_async(session_cookie)(user))
    assert connected
    await socket.receive_json_from()
    await sync_to_async(lambda: Session.objects.all().delete())()
    output = await socket.receive_output(timeout=3)
    assert output["type"] == "websocket.close"


async def test_an_event_outside_the_current_scopes_is_not_sent(
    org: Any, person: Callable[..., Any]
) -> None:
    # a galaxy-wide group message about a zone the reviewer no longer covers is dropped
    user = await sync_to_async(person)("rita", Role.REVIEWER, "G1.U1.P1")
    socket, connected, _ = await connect(await sync_to_async(session_cookie)(user))
    assert connected
    await socket.receive_json_from()
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    stray = {"type": "decision.added", "decision": {"id": 9, "zone": "G1.U1.P2.Z1"}}
    await layer.group_send("queue.G1.U1.P1", {"type": "queue.event", "event": stray})
    assert await socket.receive_nothing(timeout=0.3)
    await socket.disconnect()


async def test_each_decision_event_reaches_the_zone_reviewers(
    committed_trail: None,
    org: Any,
    person: Callable[..., Any],
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
) -> None:
    from decisions import services

    ann = await sync_to_async(person)("ann", Role.REVIEWER, "G1.U1.P1")
    lex = await sync_to_async(person)("lex", Role.REVIEWER, "G1.U1.P2")
    a_socket, _, _ = await connect(await sync_to_async(session_cookie)(ann))
    l_socket, _, _ = await connect(await sync_to_async(session_cookie)(lex))
    await a_socket.receive_json_from()
    await l_socket.receive_json_from()
    await sync_to_async(set_policy)(tau=0.99, refusal_floor=0.05)
    from tests.decisions.conftest import GOOD, cite

    body = await sync_to_async(
        lambda: submit([{"text": GOOD, "citations": [cite(policy_doc)]}]).json()
    )()
    added = await a_socket.receive_json_from(timeout=3)
    assert added["type"] == "decision.added"
    assert added["decision"]["id"] == body["id"]
    await sync_to_async(services.decision_claim)(decision_id=body["id"], user=ann)
    claimed = await a_socket.receive_json_from(timeout=3)
    assert (claimed["type"], claimed["decision"]["claimed_by"]) == ("decision.claimed", "ann")
    await sync_to_async(services.decision_release)(decision_id=body["id"], user=ann)
    assert (await a_socket.receive_json_from(timeout=3))["type"] == "decision.released"
    await sync_to_async(services.decision_reject)(
        decision_id=body["id"], user=ann, reason="no", claims=[{"index": 0, "supported": False}]
    )
    resolved = await a_socket.receive_json_from(timeout=3)
    assert (resolved["type"], resolved["decision"]["state"]) == ("decision.resolved", "failed")
    assert await l_socket.receive_nothing(timeout=0.3)
    await a_socket.disconnect()
    await l_socket.disconnect()
