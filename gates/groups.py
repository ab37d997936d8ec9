"""Channel-layer group names for reviewer queues: one group per coordinate prefix.

A reviewer scoped at `G1.U1` listens on `queue.G1.U1`; an event about a decision in zone
`G1.U1.P2.Z3` is sent to the group of every prefix of that zone, so it reaches exactly the
reviewers whose scope covers it. Pure: no Django.
"""

from __future__ import annotations

from coordinates.coordinate import Coordinate


def queue_group(scope: Coordinate) -> str:
    return f"queue.{scope}"


def groups_for_zone(zone: Coordinate) -> list[str]:
    return [queue_group(prefix) for prefix in zone.lineage()]
