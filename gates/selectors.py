"""Queries behind the web pages: the reviewer queue, a decision and what it cites, the
zone admin's zones and what-if replay. Every one takes the user and returns only what that
user's roles cover; a decision outside them is a 404. `gates.presenters` shapes the rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Case, F, Q, QuerySet, When
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from coordinates import policy as zone_policy
from coordinates.coordinate import Coordinate, CoordinateError, parse
from coordinates.models import Role, RoleAssignment, Zone
from coordinates.selectors import (
    AnyUser,
    EffectivePolicy,
    beneath,
    effective_policy,
    in_scopes,
    role_scopes,
    within,
)
from decisions.events import Kind
from decisions.models import Approval, Decision, State
from decisions.services import EVIDENCE_CHANGED
from evidence.models import DocumentVersion, Paragraph, ValidationReport
from gates.grading import StoredScore, WhatIf
from gates.whatif import ZoneReplay, stored_score, whatif_zones
from graph import queries as graph_queries
from graph.models import GraphRiskFlag, RiskFlagStatus
from maria.errors import NotFound
from trail import ledger
from trail.models import TrailEvent

REVIEW_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)
ADMIN_ROLES = (Role.ZONE_ADMIN,)
QUEUE_LIMIT = 200  # rows on one page: soonest due first; filters narrow the rest


# --- scope ---------------------------------------------------------------------------------


def scopes_of(user: AnyUser, roles: Iterable[str]) -> list[Coordinate] | None:
    """The prefixes a user holds `roles` on; None means everything (a superuser)."""
    if getattr(user, "is_superuser", False):
        return None
    return role_scopes(user, roles)


def decision_for(user: AnyUser, pk: int, roles: Iterable[str]) -> Decision:
    """The decision, if the user's roles cover its zone; a 404 otherwise, so other zones'
    ids stay private."""
    decision = (
        Decision.objects.select_related("report", "bundle", "claimed_by", "proposed_by")
        .filter(pk=pk)
        .first()
    )
    if decision is None or not in_scopes(decision.zone, scopes_of(user, roles)):
        raise NotFound("no such decision")
    return decision


# --- the reviewer queue --------------------------------------------------------------------


QUEUE_STATES = ("", "unclaimed", "claimed", "mine", "assigned", "escalated", "to_me")
# The queue's orders: "" (escalated to the viewer first, then soonest due) and the others a
# reviewer asks for by name in the address; each ends on the id so a shared link lists alike.
QUEUE_SORTS: dict[str, tuple[str, ...]] = {
    "": ("-to_me", "due_at", "pk"),
    "oldest": ("created_at", "pk"),
    "newest": ("-created_at", "-pk"),
    "sufficiency": ("sufficiency", "due_at", "pk"),
    "zone": ("zone", "due_at", "pk"),
}


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """What the queue shows, as its address says it (`?zone=...&sort=...`): a view shared
    as a link opens the same for the colleague, and the live reload asks with the same."""

    zone: str = ""
    gate: str = ""
    state: str = ""  # one of QUEUE_STATES
    q: str = ""
    assignee: str = ""  # a username; "-" for decisions assigned to nobody
    sort: str = ""  # one of QUEUE_SORTS

    @classmethod
    def from_query(cls, query: Any) -> QueueFilters:
        state = str(query.get("state", "")).strip()
        sort = str(query.get("sort", "")).strip()
        return cls(
            zone=str(query.get("zone", "")).strip()[:64],
            gate=str(query.get("gate", "")).strip()[:16],
            state=state if state in QUEUE_STATES else "",
            q=str(query.get("q", "")).strip()[:200],
            assignee=str(query.get("assignee", "")).strip()[:150],
            sort=sort if sort in QUEUE_SORTS else "",
        )

    def as_query(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("zone", self.zone),
                ("gate", self.gate),
                ("state", self.state),
                ("q", self.q),
                ("assignee", self.assignee),
                ("sort", self.sort),
            )
            if v
        }


def _waiting(user: AnyUser, filters: QueueFilters) -> QuerySet[Decision]:
    scopes = scopes_of(user, REVIEW_ROLES)
    rows = Decision.objects.filter(state=State.APPROVAL_REQUIRED).filter(within(scopes))
    if filters.zone:
        rows = rows.filter(beneath(filters.zone))
    if filters.gate:
        rows = rows.filter(gate=filters.gate)
    now = timezone.now()
    held = Decision.held_at(now)
    if filters.state == "unclaimed":
        rows = rows.exclude(held)
    elif filters.state == "claimed":
        rows = rows.filter(held)
    elif filters.state == "mine":
        rows = rows.filter(held, claimed_by_id=user.pk)
    elif filters.state == "assigned":
        rows = rows.filter(assigned_to_id=user.pk)
    elif filters.state == "escalated":
        rows = rows.exclude(escalated_to="")
    elif filters.state == "to_me":
        rows = rows.filter(escalated_to_me(user))
    if filters.assignee == "-":
        rows = rows.filter(assigned_to__isnull=True)
    elif filters.assignee:
        rows = rows.filter(assigned_to__username=filters.assignee)
    if filters.q:
        rows = rows.filter(Q(question__icontains=filters.q) | Q(answer__icontains=filters.q))
    return rows


def escalated_to_me(user: AnyUser) -> Q:
    """Decisions escalated to an authority the user holds: a reviewer or zone-admin role on
    the level they went up to or above it (a role covers everything beneath its scope). The
    zone's own reviewers see the item too, but it is not addressed to them."""
    return within(scopes_of(user, REVIEW_ROLES), "escalated_to") & ~Q(escalated_to="")


def next_waiting(user: AnyUser, after: int) -> int | None:
    """The decision a reviewer takes up next once done with `after`: the queue's first one
    (assigned to them, then escalated to them, then soonest due) that nobody else holds and
    that they did not propose; None when nothing is left."""
    now = timezone.now()
    rows = (
        _waiting(user, QueueFilters())
        .exclude(pk=after)
        .exclude(proposed_by_id=user.pk)
        .exclude(Decision.held_at(now) & ~Q(claimed_by_id=user.pk))
        .annotate(
            to_me=Case(When(escalated_to_me(user), then=1), default=0),
            assigned=Case(When(assigned_to_id=user.pk, then=1), default=0),
        )
        .order_by("-assigned", "-to_me", "due_at", "pk")
    )
    return rows.values_list("pk", flat=True).first()


def assignable(decision: Decision) -> list[str]:
    """Who a decision may be assigned to: the reviewers and zone admins of its zone or above,
    but not whoever proposed it."""
    zone = Coordinate.parse(decision.zone)
    rows = RoleAssignment.objects.filter(role__in=REVIEW_ROLES).select_related("user")
    names = {
        r.user.get_username()
        for r in rows
        if Coordinate.parse(r.scope).covers(zone) and r.user_id != decision.proposed_by_id
    }
    return sorted(names)


def queue_total(user: AnyUser, filters: QueueFilters) -> int:
    return _waiting(user, filters).count()


def queue_values(
    user: AnyUser, filters: QueueFilters, *, limit: int | None = None
) -> list[dict[str, Any]]:
    """Decisions waiting for a person in the user's zones, those escalated to the user first,
    then soonest due first (or in the filters' `sort`): one dict of the columns a queue row
    shows per decision (`presenters.queue_rows` makes the rows), an escalated one's with its
    `escalation`, a half-approved one's with its `approvals` so far (oldest first)."""
    values: list[dict[str, Any]] = list(
        _waiting(user, filters)
        .annotate(to_me=Case(When(escalated_to_me(user), then=1), default=0))
        .order_by(*QUEUE_SORTS[filters.sort])
        .values(
            "pk",
            "zone",
            "question",
            "gate",
            "mode",
            "sufficiency",
            "created_at",
            "due_at",
            "escalated_to",
            "claimed_by_id",
            "claimed_by__username",
            "claimed_until",
            "report__policy",
            # what the report found beyond its scores: the queue row's gate reason
            "report__body__at_least",
            "report__body__contradictions",
            "to_me",
            "assigned_to__username",
        )[: limit or QUEUE_LIMIT]
    )
    notes = escalations([v["pk"] for v in values if v["escalated_to"]])
    given = approvals_of([v["pk"] for v in values])
    needed = approvals_needed({v["zone"] for v in values if v["pk"] in given})
    for v in values:
        v["escalation"] = notes.get(v["pk"])
        v["approvals"] = given.get(v["pk"], [])
        v["approvals_needed"] = needed.get(v["zone"], 1)
    return values


@dataclass(frozen=True, slots=True)
class GivenApproval:
    """One approval a decision still waiting has: by whom, why, when."""

    reviewer: str
    reason: str
    at: datetime


def approvals_of(decision_ids: Iterable[int]) -> dict[int, list[GivenApproval]]:
    """The approvals given so far to each decision, oldest first: one query."""
    ids = list(decision_ids)
    if not ids:
        return {}
    rows = (
        Approval.objects.filter(decision_id__in=ids)
        .order_by("pk")
        .values_list("decision_id", "reviewer__username", "reason", "created_at")
    )
    given: dict[int, list[GivenApproval]] = {}
    for decision_id, reviewer, reason, at in rows:
        given.setdefault(decision_id, []).append(GivenApproval(reviewer, reason, at))
    return given


def approvals_needed(zones: Iterable[str]) -> dict[str, int]:
    """How many approvals from different people each zone's policy asks for now."""
    return {z: effective_policy(parse(z)).values.approvals_required for z in set(zones)}


# --- the reviewer's day -------------------------------------------------------------------

# A person's act that decides (or, for one of several approvals, counts toward deciding).
_MY_VERDICTS = (
    Kind.DECISION_APPROVED,
    Kind.DECISION_APPROVAL_RECORDED,
    Kind.DECISION_FAILED,
    Kind.DECISION_OVERRIDDEN,
)
# The acts that end a decision: what "decided today" counts in the queue's progress.
_ENDING = (Kind.DECISION_APPROVED, Kind.DECISION_FAILED, Kind.DECISION_OVERRIDDEN)


@dataclass(frozen=True, slots=True)
class ReviewerDay:
    """The queue header's counts: what the reviewer decided today and this week (local
    time, the week from Monday), and of today's work in their zones, `done` of `total` (the
    decisions people ended today, plus those waiting now)."""

    mine_today: int
    mine_week: int
    done: int
    total: int


def day_and_week_start(now: datetime) -> tuple[datetime, datetime]:
    """Midnight today and midnight of this week's Monday, in the site's time zone."""
    local = timezone.localtime(now)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return day, day - timedelta(days=local.weekday())


def reviewer_day(user: AnyUser, *, waiting: int, now: datetime | None = None) -> ReviewerDay:
    """The counts of `ReviewerDay`; `waiting` is the queue's unfiltered total."""
    day, week = day_and_week_start(now or timezone.now())
    people = TrailEvent.objects.exclude(actor=ledger.SYSTEM).exclude(decision_id=None)
    mine = people.filter(actor=user.get_username(), kind__in=list(_MY_VERDICTS))
    in_zones = Decision.objects.filter(within(scopes_of(user, REVIEW_ROLES))).values("pk")
    done = (
        people.filter(kind__in=list(_ENDING), created_at__gte=day, decision_id__in=in_zones)
        .values("decision_id")
        .distinct()
        .count()
    )
    return ReviewerDay(
        mine_today=mine.filter(created_at__gte=day).values("decision_id").distinct().count(),
        mine_week=mine.filter(created_at__gte=week).values("decision_id").distinct().count(),
        done=done,
        total=done + waiting,
    )


# --- escalations ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Escalation:
    """Why a decision went up and where it stands, from its trail: `why` is "overdue" (its
    review SLA ran out at `since`) or "graph" (its evidence's cohesion fell below half its
    tau); `topped` names the top level it stays with once it went up to it (nothing is
    above the galaxy)."""

    why: str
    since: datetime | None
    cohesion: float | None
    cohesion_tau: float | None
    topped: str | None


def _top(level: str) -> str | None:
    """`level` if it is the top of the tree (a galaxy)."""
    try:
        return level if parse(level).parent is None else None
    except CoordinateError:
        return None


def escalations(decision_ids: Iterable[int]) -> dict[int, Escalation]:
    """The first escalation of each decision (and whether it reached the top): one query."""
    ids = list(decision_ids)
    if not ids:
        return {}
    rows = TrailEvent.objects.filter(
        decision_id__in=ids, kind__in=[Kind.DECISION_ESCALATED, Kind.DECISION_ESCALATION_TOPPED]
    ).order_by("pk")
    first: dict[int, tuple[dict[str, Any], datetime]] = {}
    topped: dict[int, str] = {}
    last_to: dict[int, str] = {}
    for event in rows.only("decision_id", "kind", "canonical", "created_at"):
        # The payload is in the hashed bytes (TrailEvent.payload), not a column.
        decision_id, payload, at = int(event.decision_id or 0), event.payload, event.created_at
        if event.kind == Kind.DECISION_ESCALATION_TOPPED:
            topped[decision_id] = str(payload.get("at", ""))
        else:
            first.setdefault(decision_id, (payload, at))
            last_to[decision_id] = str(payload.get("to", ""))
    notes = {}
    for decision_id, (payload, at) in first.items():
        since = parse_datetime(str(payload["was_due"])) if payload.get("was_due") else None
        notes[decision_id] = Escalation(
            why="graph" if payload.get("why") == "graph" else "overdue",
            # Escalated before the payload named the due date: the run that moved it up.
            since=since or at,
            cohesion=payload.get("cohesion"),
            cohesion_tau=payload.get("cohesion_tau"),
            topped=topped.get(decision_id) or _top(last_to.get(decision_id, "")),
        )
    return notes


def queue_zones(user: AnyUser) -> list[str]:
    """Zones the user reviews, for the zone filter."""
    scopes = scopes_of(user, REVIEW_ROLES)
    zones = Zone.objects.filter(within(scopes, "coordinate")).order_by("coordinate")
    return list(zones.values_list("coordinate", flat=True))


def queue_assignees(user: AnyUser) -> list[str]:
    """Who the waiting decisions in the user's zones are assigned to, for the filter."""
    names = (
        _waiting(user, QueueFilters())
        .exclude(assigned_to=None)
        .values_list("assigned_to__username", flat=True)
        .distinct()
    )
    return sorted(set(names))


# --- risk hotspots awaiting the user's review ----------------------------------------------


RISK_LIMIT = 100  # open flags shown on the queue page, current crossings and highest first


def risk_flags_for_review(user: AnyUser, *, limit: int = RISK_LIMIT) -> list[GraphRiskFlag]:
    """Open risk flags whose review level lies in the user's reviewer or zone-admin scopes:
    the parent level's authority sees its zones' hotspots; a reviewer of the zone alone does
    not, and nobody sees a flag about their own person node (graph_services.may_resolve)."""
    scopes = scopes_of(user, REVIEW_ROLES)
    return list(
        GraphRiskFlag.objects.filter(status=RiskFlagStatus.OPEN)
        .filter(within(scopes, "review_by"))
        .exclude(key=f"person:{user.get_username()}")
        # Current crossings (no ended_at) first, then the heaviest concentration.
        .order_by(F("ended_at").desc(nulls_first=True), "-share", "-created_at", "-pk")[:limit]
    )


def flagged_nodes(flags: Iterable[GraphRiskFlag]) -> dict[int, tuple[str, str]]:
    """flag id -> (node type, label) of the flags' nodes that still exist (each in the zone
    its flag scanned: keys are unique per zone)."""
    return {pk: (t, label) for pk, (_, t, label) in graph_queries.node_labels(list(flags)).items()}


# --- a decision and what it cites ----------------------------------------------------------


def _paragraph_texts(items: Iterable[dict[str, Any]]) -> dict[tuple[int, int, int], str]:
    keys = {
        (int(i["document"]), int(i["version"]), int(i["paragraph"]))
        for i in items
        if i.get("document") is not None
        and i.get("version") is not None
        and i.get("paragraph") is not None
        and not i.get("fabricated")
    }
    if not keys:
        return {}
    q = Q(pk__in=[])
    for document, version, number in keys:
        q |= Q(version__document_id=document, version__version=version, number=number)
    rows = Paragraph.objects.filter(q).values_list(
        "version__document_id", "version__version", "number", "text"
    )
    return {(d, v, n): text for d, v, n, text in rows}


def cited_paragraphs(decision: Decision) -> dict[tuple[int, int, int], str]:
    """(document, version, paragraph) -> text of every paragraph the report's claims cite
    (fabricated citations aside), for `presenters.decision_claims`."""
    body = decision.report.body if decision.report is not None else {}
    return _paragraph_texts(e for c in body.get("claims", []) for e in c.get("evidence", []))


def cited_titles(decision: Decision) -> dict[tuple[int, int], str]:
    """(document, version) -> the title of that version, for every version the report's
    claims and contradictions cite: a citation reads "Travel policy v2 ¶3", not a number."""
    body = decision.report.body if decision.report is not None else {}
    items = [e for c in body.get("claims", []) for e in c.get("evidence", [])]
    items += [i for c in body.get("contradictions", []) for i in c.get("items", [])]
    keys = {
        (int(i["document"]), int(i["version"]))
        for i in items
        if i.get("document") is not None and i.get("version") is not None
    }
    if not keys:
        return {}
    q = Q(pk__in=[])
    for document, version in keys:
        q |= Q(document_id=document, version=version)
    rows = DocumentVersion.objects.filter(q).values_list("document_id", "version", "title")
    return {(d, v): title for d, v, title in rows}


def decision_events(decision: Decision) -> list[TrailEvent]:
    return list(TrailEvent.objects.filter(decision_id=decision.pk).order_by("pk"))


def last_actor(decision: Decision) -> tuple[str, str, datetime] | None:
    """Who last changed the decision (for "someone acted first" messages)."""
    event = (
        TrailEvent.objects.filter(decision_id=decision.pk)
        .exclude(actor=ledger.SYSTEM)
        .order_by("-pk")
        .first()
    )
    return (event.actor, event.kind, event.created_at) if event is not None else None


@dataclass(frozen=True, slots=True)
class Decided:
    """How a person ended a decision: `kind` "approved", "rejected", "sent_back" (for more
    evidence) or "overridden", by whom (every approver of a decision that needed several,
    both people of an override) and when."""

    kind: str
    people: list[str]
    at: datetime


_DECIDING = {
    Kind.DECISION_APPROVED: "approved",
    Kind.DECISION_FAILED: "rejected",
    Kind.DECISION_OVERRIDDEN: "overridden",
}


def decided(decision: Decision) -> Decided | None:
    """The person's act that ended a decision, from its trail; None while it is open or when
    the system ended it (released by its gate, a delivery that failed, a review gone late)."""
    if decision.state in (State.PROPOSED, State.VALIDATED, State.APPROVAL_REQUIRED):
        return None
    event = (
        TrailEvent.objects.filter(decision_id=decision.pk, kind__in=list(_DECIDING))
        .exclude(actor=ledger.SYSTEM)
        .order_by("-pk")
        .first()
    )
    if event is None:
        return None
    kind = _DECIDING[Kind(event.kind)]
    if kind == "rejected" and (event.payload or {}).get("outcome") == "more_evidence_needed":
        kind = "sent_back"  # a person's decision.failed too, but no rejection
    elif kind == "rejected" and event.reason.startswith(f"{EVIDENCE_CHANGED}:"):
        kind = "evidence_changed"  # failed on a re-review: wrong now, not when given
    people = [event.actor]
    if kind == "approved":
        approvers = decision.approvals.order_by("pk").values_list("reviewer__username", flat=True)
        people = list(dict.fromkeys([*approvers, event.actor]))
    elif kind == "overridden":
        # two people release a block: the first asked for it, the second completed it
        asked = TrailEvent.objects.filter(
            decision_id=decision.pk, kind=Kind.DECISION_OVERRIDE_REQUESTED
        ).order_by("pk")
        people = list(dict.fromkeys([*asked.values_list("actor", flat=True), event.actor]))
    return Decided(kind=kind, people=people, at=event.created_at)


# --- zone admin ----------------------------------------------------------------------------


def admin_zones(user: AnyUser) -> list[Zone]:
    """Zones on or beneath the user's zone-admin scopes."""
    scopes = scopes_of(user, ADMIN_ROLES)
    return list(Zone.objects.filter(within(scopes, "coordinate")))


def zone_for_admin(user: AnyUser, coordinate: str) -> Zone:
    try:
        parsed = parse(coordinate)
    except CoordinateError:
        raise NotFound("no such zone") from None
    zone = Zone.objects.filter(coordinate=str(parsed)).first()
    if zone is None or not in_scopes(zone.coordinate, scopes_of(user, ADMIN_ROLES)):
        raise NotFound("no such zone")
    return zone


def zone_policies(zones: Iterable[Zone]) -> list[tuple[Zone, EffectivePolicy]]:
    """Each zone with its effective policy (`presenters.policy_tree` nests them)."""
    return [(zone, effective_policy(zone.coord)) for zone in zones]


def zone_assignments(zone: Zone) -> list[RoleAssignment]:
    """Roles granted on this zone, above it (inherited) or beneath it."""
    lineage = [str(c) for c in zone.coord.lineage()]
    return list(
        RoleAssignment.objects.filter(Q(scope__in=lineage) | beneath(zone.coordinate, "scope"))
        .select_related("user", "granted_by")
        .order_by("scope", "role", "user__username")
    )


def stored_scores(decisions: QuerySet[Decision]) -> dict[int, StoredScore]:
    """What the decisions' stored reports were gated on, by report id: the numbers the
    what-if and the threshold advice replay (gates.whatif.stored_score)."""
    stored = ValidationReport.objects.filter(pk__in=decisions.values("report_id")).values_list(
        "pk",
        "sufficiency",
        "body__score__kept_confidence",
        "body__score__claim_sufficiency",
        "body__contradictions",
        "body__at_least__gate",
    )
    return {
        pk: stored_score(
            sufficiency=sufficiency,
            kept_confidence=kept,
            claim_sufficiency=claims,
            contradictions=contradictions,
            at_least=at_least,
        )
        for pk, sufficiency, kept, claims, contradictions, at_least in stored
    }


def zone_whatif(zone: Zone, overrides: dict[str, Any], *, days: int | None = None) -> WhatIf:
    """Replay the stored reports of the zone's (and its sub-zones') decisions of the last
    `days` days under the current and the proposed overrides."""
    days = settings.MARIA_WHATIF_DAYS if days is None else days
    since = timezone.now() - timedelta(days=days)
    decisions = Decision.objects.filter(
        beneath(zone.coordinate),
        report__isnull=False,
        created_at__gte=since,
    )
    zone_of = dict(decisions.values_list("report_id", "zone"))
    by_zone: dict[str, list[StoredScore]] = defaultdict(list)
    for pk, score in stored_scores(decisions).items():
        by_zone[zone_of[pk]].append(score)
    clean = zone_policy.normalise_overrides(overrides)
    replays = []
    for coordinate, reports in sorted(by_zone.items()):
        coord = parse(coordinate)
        replays.append(
            ZoneReplay(
                zone=coordinate,
                reports=reports,
                old=effective_policy(coord).values,
                new=effective_policy(coord, replace=(zone.coordinate, clean)).values,
            )
        )
    return whatif_zones(replays)
