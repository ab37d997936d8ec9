"""Send reviewer-queue events to every socket whose reviewer's scope covers the zone."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from coordinates.coordinate import Coordinate
from gates.groups import groups_for_zone


async def queue_publish_async(zone: Coordinate, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    for group in groups_for_zone(zone):
        await layer.group_send(group, {"type": "queue.event", "zone": str(zone), "event": event})


def queue_publish(zone: Coordinate, event: dict[str, Any]) -> None:
    """Call only after commit (transaction.on_commit): a push must never announce a rollback."""
    async_to_sync(queue_publish_async)(zone, event)
