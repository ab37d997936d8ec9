"""The reviewer-queue websocket: pushes queue events for the zones a reviewer may act on."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from coordinates.coordinate import Coordinate
from coordinates.models import Role
from coordinates.selectors import role_scopes
from gates.groups import queue_group

# Close codes in the 4000 range are the application's own (RFC 6455, section 7.4.2).
CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
QUEUE_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)


def _minimal_scopes(scopes: list[Coordinate]) -> list[Coordinate]:
    """Drop scopes covered by another one, so each event arrives once."""
    return [s for s in scopes if not any(o != s and o.covers(s) for o in scopes)]


class QueueConsumer(AsyncJsonWebsocketConsumer):
    groups_joined: list[str]

    async def connect(self) -> None:
        self.groups_joined = []
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        if user.is_superuser:
            scopes = await database_sync_to_async(self._all_galaxies)()
        else:
            scopes = await database_sync_to_async(role_scopes)(user, QUEUE_ROLES)
        scopes = _minimal_scopes(scopes)
        if not scopes:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        for scope in scopes:
            group = queue_group(scope)
            await self.channel_layer.group_add(group, self.channel_name)
            self.groups_joined.append(group)
        await self.accept()
        await self.send_json({"type": "queue.ready", "scopes": [str(s) for s in scopes]})

    @staticmethod
    def _all_galaxies() -> list[Coordinate]:
        from coordinates.models import Zone

        return [z.coord for z in Zone.objects.filter(depth=1)]

    async def disconnect(self, code: int) -> None:
        for group in getattr(self, "groups_joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def queue_event(self, message: dict[str, Any]) -> None:
        """A decision event sent to one of this reviewer's groups (see gates.groups)."""
        await self.send_json(message["event"])
