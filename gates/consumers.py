"""The reviewer-queue websocket: pushes queue events for the zones a reviewer may act on.

Authorisation is checked on connect (session user, roles), again for every event sent (the
event's zone must lie under a scope the reviewer still holds), and by a periodic re-check
that closes the socket once the roles are revoked, the account is disabled or the session
ended (logout): within `MARIA_SOCKET_RECHECK_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.base import SessionBase
from django.utils.translation import gettext
from rest_framework.exceptions import ParseError

from coordinates.coordinate import Coordinate
from coordinates.models import Role, Zone
from coordinates.selectors import role_scopes
from gates.groups import queue_group
from maria.parsers import strict_loads

logger = logging.getLogger(__name__)

# Close codes in the 4000 range are the application's own (RFC 6455, section 7.4.2).
CLOSE_MALFORMED = 4400
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
# RFC 6455, section 7.4.1: "a type of data it cannot accept", e.g. binary for a text endpoint.
CLOSE_UNSUPPORTED_DATA = 1003
# A close frame's reason fits in 123 bytes of UTF-8 (its payload is at most 125, code included).
MAX_REASON_BYTES = 123
QUEUE_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)


def close_reason(text: str) -> str:
    """`text` cut to what a close frame carries, on a character boundary."""
    return text.encode()[:MAX_REASON_BYTES].decode(errors="ignore")


def _minimal_scopes(scopes: list[Coordinate]) -> list[Coordinate]:
    """Drop scopes covered by another one, so each event arrives once."""
    return [s for s in scopes if not any(o != s and o.covers(s) for o in scopes)]


def _scopes_for(user_id: int, session_key: str | None) -> list[Coordinate] | None:
    """The user's queue scopes now; None when the user or their session is gone."""
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None:
        return None
    if session_key is not None:
        from importlib import import_module

        store: SessionBase = import_module(settings.SESSION_ENGINE).SessionStore()
        if not store.exists(session_key):
            return None
    if user.is_superuser:
        return QueueConsumer._all_galaxies()
    return _minimal_scopes(role_scopes(user, QUEUE_ROLES))


class QueueConsumer(AsyncJsonWebsocketConsumer):
    groups_joined: list[str]
    scopes: list[Coordinate]
    checked_at: float
    watcher: asyncio.Task[None] | None

    async def connect(self) -> None:
        self.groups_joined = []
        self.scopes = []
        self.watcher = None
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user_id = user.pk
        session = self.scope.get("session")
        self.session_key = getattr(session, "session_key", None)
        scopes = await database_sync_to_async(_scopes_for)(self.user_id, self.session_key)
        if not scopes:
            await self.close(code=CLOSE_FORBIDDEN if scopes is not None else CLOSE_UNAUTHENTICATED)
            return
        await self._join(scopes)
        await self.accept()
        await self.send_json({"type": "queue.ready", "scopes": [str(s) for s in scopes]})
        self.watcher = asyncio.ensure_future(self._watch())

    async def _join(self, scopes: list[Coordinate]) -> None:
        wanted = [queue_group(scope) for scope in scopes]
        for group in set(self.groups_joined) - set(wanted):
            await self.channel_layer.group_discard(group, self.channel_name)
        for group in set(wanted) - set(self.groups_joined):
            await self.channel_layer.group_add(group, self.channel_name)
        self.groups_joined = wanted
        self.scopes = scopes
        self.checked_at = time.monotonic()

    async def recheck(self) -> bool:
        """Re-read the roles and session; close the socket when nothing is left."""
        scopes = await database_sync_to_async(_scopes_for)(self.user_id, self.session_key)
        if not scopes:
            await self.close(code=CLOSE_FORBIDDEN if scopes is not None else CLOSE_UNAUTHENTICATED)
            await self.disconnect(CLOSE_FORBIDDEN)
            return False
        if scopes != self.scopes:
            await self._join(scopes)
        else:
            self.checked_at = time.monotonic()
        return True

    async def _watch(self) -> None:
        interval = float(settings.MARIA_SOCKET_RECHECK_SECONDS)
        while True:
            await asyncio.sleep(interval)
            if not await self.recheck():
                return

    @staticmethod
    def _all_galaxies() -> list[Coordinate]:
        return [z.coord for z in Zone.objects.filter(depth=1)]

    async def disconnect(self, code: int) -> None:
        watcher = getattr(self, "watcher", None)
        if watcher is not None and watcher is not asyncio.current_task():
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await watcher
        self.watcher = None
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        self.groups_joined = []
        self.scopes = []

    def _stale(self) -> bool:
        return time.monotonic() - self.checked_at > float(settings.MARIA_SOCKET_RECHECK_SECONDS)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """A frame from the client, read as strictly as a JSON request body (maria.parsers).
        A binary frame or text that is not such JSON closes the socket with a reason and
        logs one line: Channels' own reader raised, which dropped the socket without a close
        frame and logged a traceback per frame."""
        if text_data is None:
            await self._refuse(
                CLOSE_UNSUPPORTED_DATA, gettext("send JSON text frames, not binary ones")
            )
            return
        try:
            content = strict_loads(text_data)
        except ParseError as error:
            await self._refuse(CLOSE_MALFORMED, str(error.detail))
            return
        await self.receive_json(content, **kwargs)

    async def _refuse(self, code: int, reason: str) -> None:
        logger.warning(
            "queue socket closed (%s): %s",
            code,
            reason,
            extra={"user_id": getattr(self, "user_id", None), "close_code": code},
        )
        await self.close(code=code, reason=close_reason(reason))

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # Every message from the client is authorised again once the roles are stale.
        if self._stale() and not await self.recheck():
            return
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def queue_event(self, message: dict[str, Any]) -> None:
        """A decision event sent to one of this reviewer's groups (see gates.groups); sent on
        only if the reviewer's current scopes still cover the decision's zone."""
        if not self.scopes or (self._stale() and not await self.recheck()):
            return
        event = message["event"]
        zone = (event.get("decision") or {}).get("zone") or message.get("zone")
        if zone is not None:
            try:
                coordinate = Coordinate.parse(str(zone))
            except ValueError:
                return
            if not any(scope.covers(coordinate) for scope in self.scopes):
                return
        await self.send_json(event)
