"""Send reviewer-queue events to every socket whose reviewer's scope covers the zone."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.dispatch import receiver

from coordinates.coordinate import Coordinate
from decisions.signals import queue_event
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


@receiver(queue_event, dispatch_uid="gates.queue_publish")
def _publish(*, zone: Coordinate, event: dict[str, Any], **_: Any) -> None:
    # Raises when the channel layer is down: the outbox keeps the row for its sweep.
    queue_publish(zone, event)
