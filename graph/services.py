"""Risk flags of the knowledge graph: raised when a node crosses its zone's risk_threshold,
reviewed by the parent level's authority (docs/math.md §18: nodes that concentrate risk go
to an approver of higher authority).

A scan reads the zone's risk concentration (graph_query.risk) and brings the zone's live
flags in line with it: a new crossing is a new flag and one graph.risk_flagged event; a
crossing that ended (the node fell below, or the threshold moved) ends its flag. The risk
endpoint, the after-update task and the periodic task all call `graph_risk_scan`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from coordinates.coordinate import Coordinate, CoordinateError
from coordinates.models import Role, Zone
from coordinates.selectors import AnyUser, effective_policy, has_role, in_scopes
from evidence.selectors import reader_scopes
from graph import events
from graph.models import GraphEdge, GraphRiskFlag, RiskFlagStatus
from graph.queries import RiskReading, risk
from graph.store import graph_state
from maria.errors import ApplicationError, Conflict, Forbidden, NotFound
from trail import ledger

# Who reviews a flag: the people who review and administer the level above the zone.
RESOLVER_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)
RESOLVE_ACTIONS = {
    "acknowledge": RiskFlagStatus.ACKNOWLEDGED,
    "dismiss": RiskFlagStatus.DISMISSED,
}
NOTE_LIMIT = 2000
# What a second review is told, one message per way the first one ended: the status is a
# word of the sentence, and Japanese orders the sentence around it.
ALREADY_RESOLVED = {
    RiskFlagStatus.ACKNOWLEDGED: gettext_noop(
        "risk flag %(id)s was already acknowledged by %(user)s at %(when)s"
    ),
    RiskFlagStatus.DISMISSED: gettext_noop(
        "risk flag %(id)s was already dismissed by %(user)s at %(when)s"
    ),
}


# A node as a scan names it: its own zone ("" for a shared node) and its key. A scan of a
# level reads every zone beneath it, and keys are unique per zone only.
NodeName = tuple[str, str]


def node_name(spot: dict[str, Any]) -> NodeName:
    """The name of a hotspot's node (graph_query.risk writes a shared node's zone as None)."""
    return (str(spot.get("zone") or ""), str(spot["key"]))


@dataclass
class RiskScan:
    """What one scan of one zone changed: the flags it raised and the ones it ended."""

    zone: str
    raised: list[GraphRiskFlag] = field(default_factory=list)
    ended: list[int] = field(default_factory=list)
    # by node name (zone, key), after the scan
    live: dict[NodeName, GraphRiskFlag] = field(default_factory=dict)


def _live(zone: str, *, lock: bool = False) -> dict[NodeName, GraphRiskFlag]:
    rows = GraphRiskFlag.objects.filter(zone=zone, ended_at__isnull=True)
    if lock:
        rows = rows.select_for_update()
    return {(flag.node_zone, flag.key): flag for flag in rows}


def risk_flags_sync(*, reading: RiskReading, actor: Any = None) -> RiskScan:
    """Make the zone's live flags the reading's hotspots at the reading's threshold.

    One graph.risk_flagged event per node and threshold crossing, not one per read: a node
    with a live flag at this threshold is left alone; a live flag whose node is no longer hot,
    or that was raised at another threshold, ends; a hot node without a live flag gets one.
    A crossing that starts and ends between two scans is not seen, and two scans of
    different graph generations may commit in the wrong order; the next scan puts it right.
    """
    zone = str(reading.zone)
    hot = {node_name(spot): spot for spot in reading.hotspots}
    scan = RiskScan(zone=zone, live=_live(zone))
    if set(scan.live) == set(hot) and all(
        f.threshold == reading.threshold for f in scan.live.values()
    ):
        return scan  # nothing crossed since the last scan: no lock, no write
    with transaction.atomic():
        # Every writer of a zone's flags takes its trail chain first, so two scans run one
        # after the other and the second finds the first's flags (the partial unique
        # constraint on live flags backs this up); on SQLite it also makes the write first.
        ledger.lock(ledger.chain_for(reading.zone))
        live = _live(zone, lock=True)
        ending = [f for k, f in live.items() if k not in hot or f.threshold != reading.threshold]
        if ending:
            GraphRiskFlag.objects.filter(pk__in=[f.pk for f in ending]).update(
                ended_at=timezone.now()
            )
            for flag in ending:
                del live[(flag.node_zone, flag.key)]
            scan.ended = [f.pk for f in ending]
        # A node that crosses again before anyone reviewed its earlier crossing is still that
        # one review item: it is reopened (with this crossing's share, threshold and event),
        # not added again, so an oscillating node is one row on the queue, not one per scan.
        waiting = {
            (flag.node_zone, flag.key): flag
            for flag in GraphRiskFlag.objects.select_for_update()
            .filter(zone=zone, key__in=[key for name, key in hot if (name, key) not in live])
            .filter(status=RiskFlagStatus.OPEN, ended_at__isnull=False)
            .order_by("created_at", "pk")
        }  # the latest of each node's unreviewed crossings
        for name, spot in hot.items():
            if name in live:
                continue
            node_zone, key = name
            event = events.graph_risk_flagged(
                zone=reading.zone,
                actor=actor,
                key=key,
                node_zone=node_zone,
                share=spot["share"],
                threshold=reading.threshold,
                review_by=reading.review_by,
                graph_generation=reading.generation,
            )
            again = waiting.get(name)
            if again is not None:
                again.ended_at = None
                again.threshold = reading.threshold
                again.share = spot["share"]
                again.review_by = reading.review_by
                again.event = f"{event.chain}#{event.seq}"
                again.save(update_fields=["ended_at", "threshold", "share", "review_by", "event"])
                live[name] = again
                scan.raised.append(again)
                continue
            flag = GraphRiskFlag.objects.create(
                zone=zone,
                key=key,
                node_zone=node_zone,
                threshold=reading.threshold,
                share=spot["share"],
                review_by=reading.review_by,
                event=f"{event.chain}#{event.seq}",
            )
            live[name] = flag
            scan.raised.append(flag)
        scan.live = live
    return scan


def graph_risk_scan(
    *, zone: Coordinate, scopes: list[Coordinate] | None = None, actor: Any = None
) -> tuple[RiskReading, RiskScan | None]:
    """Read the zone's risk concentration as `scopes` may (None: all of it) and, when that
    reading covers the whole zone, raise and end its flags. No scan for a narrower reading."""
    reading = risk(zone=zone, scopes=scopes)
    if not reading.complete:
        return reading, None
    return reading, risk_flags_sync(reading=reading, actor=actor)


# The graph state and threshold each zone was last scanned at, in this process: a periodic
# scan of an unchanged zone would compute the same shares again for nothing.
_scanned: dict[str, tuple[int, str, float]] = {}
_scanned_lock = threading.Lock()


def _scan_zones(only: list[str] | None) -> list[Coordinate]:
    """`only`, or else the zones with graph edges and those with live flags (whose edges may
    be gone); unknown or malformed coordinates are skipped."""
    named = set(only or ())
    if only is None:
        named = set(GraphEdge.objects.values_list("zone", flat=True).distinct())
        named |= set(
            GraphRiskFlag.objects.filter(ended_at__isnull=True).values_list("zone", flat=True)
        )
    known = Zone.objects.filter(coordinate__in=named).values_list("coordinate", flat=True)
    zones = []
    for text in sorted(known):
        try:
            zones.append(Coordinate.parse(text))
        except CoordinateError:
            continue
    return zones


def graph_risk_scan_all(*, zones: list[str] | None = None) -> dict[str, int]:
    """Scan `zones` (default: every zone with a graph), skipping those whose graph and
    threshold are as this process last scanned them; how many were scanned, flags raised
    and flags ended."""
    raised = ended = scanned = 0
    for zone in _scan_zones(zones):
        key = (*graph_state(), effective_policy(zone).values.risk_threshold)
        with _scanned_lock:
            if _scanned.get(str(zone)) == key:
                continue
        _, scan = graph_risk_scan(zone=zone)
        scanned += 1
        if scan is not None:
            raised += len(scan.raised)
            ended += len(scan.ended)
        with _scanned_lock:
            _scanned[str(zone)] = key
    return {"zones": scanned, "raised": raised, "ended": ended}


# --- review by the parent level's authority --------------------------------------------------


def may_resolve(user: AnyUser, flag: GraphRiskFlag) -> bool:
    """Reviewers and zone admins of the flag's review level or above; never the person the
    flagged node stands for (nobody reviews a concentration on themselves)."""
    if not user.is_authenticated or flag.key == f"person:{user.get_username()}":
        return False
    try:
        level = Coordinate.parse(flag.review_by)
    except CoordinateError:
        return False
    return has_role(user, RESOLVER_ROLES, level)


def _note(note: Any) -> str:
    text = note.strip() if isinstance(note, str) else ""
    if not text:
        raise ApplicationError(
            gettext("a note is required: say why the flag is acknowledged or dismissed"),
            field="note",
        )
    if len(text) > NOTE_LIMIT:
        raise ApplicationError(
            gettext("the note is longer than %(limit)s characters") % {"limit": NOTE_LIMIT},
            field="note",
        )
    return text


def graph_risk_resolve(
    *, flag_id: int, user: AbstractBaseUser, action: str, note: str
) -> GraphRiskFlag:
    """Acknowledge or dismiss an open risk flag with a note, with its trail event.

    A flag outside the zones the user reads is a 404; one the user reads but may not review
    (no reviewer or zone admin role at its review level or above) a 403; one already
    resolved a 409 that says by whom.
    """
    if action not in RESOLVE_ACTIONS:
        raise ApplicationError(gettext("action must be acknowledge or dismiss"), field="action")
    text = _note(note)
    flag = GraphRiskFlag.objects.filter(pk=flag_id).first()
    if flag is None or not in_scopes(flag.zone, reader_scopes(user)):
        raise NotFound(gettext("no risk flag %(id)s") % {"id": flag_id})
    if not may_resolve(user, flag):
        raise Forbidden(
            gettext("only reviewers or zone admins of %(level)s or above may review this flag")
            % {"level": flag.review_by},
        )
    zone = Coordinate.parse(flag.zone)
    with transaction.atomic():
        ledger.lock(ledger.chain_for(zone))
        locked = GraphRiskFlag.objects.select_for_update().get(pk=flag.pk)
        if locked.status != RiskFlagStatus.OPEN:
            # the reviewer's account may be gone since (the foreign key is set null)
            by = locked.resolved_by.get_username() if locked.resolved_by else gettext("someone")
            at = locked.resolved_at or timezone.now()  # set whenever resolved (a constraint)
            when = timezone.localtime(at).strftime("%Y-%m-%d %H:%M")
            raise Conflict(
                gettext(ALREADY_RESOLVED[RiskFlagStatus(locked.status)])
                % {"id": flag_id, "user": by, "when": when},
            )
        locked.status = RESOLVE_ACTIONS[action]
        locked.resolved_by = user  # type: ignore[assignment]  # a User; the FK is AUTH_USER_MODEL
        locked.resolved_at = timezone.now()
        locked.note = text
        event = events.graph_risk_resolved(
            zone=zone,
            actor=user,
            key=locked.key,
            node_zone=locked.node_zone,
            flag=locked.event,
            status=locked.status,
            note=text,
            review_by=locked.review_by,
        )
        locked.resolution_event = f"{event.chain}#{event.seq}"
        locked.save(
            update_fields=["status", "resolved_by", "resolved_at", "note", "resolution_event"]
        )
    return locked
