"""Queries behind the web pages: the reviewer queue, a decision as a page shows it, the
auditor's search and trail, the zone admin's tree and what-if replay. Every one takes the
user and returns only what that user's roles cover; a decision outside them is a 404.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import F, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from coordinates import policy as zone_policy
from coordinates.coordinate import Coordinate, CoordinateError, parse
from coordinates.models import Role, RoleAssignment, Zone
from coordinates.selectors import AnyUser, beneath, effective_policy, in_scopes, role_scopes, within
from decisions.models import Decision, State, claim_holds
from evidence.models import Paragraph, ValidationReport
from gates.grading import StoredScore, WhatIf
from gates.whatif import ZoneReplay, stored_score, whatif_zones
from graph.models import GraphNode, GraphRiskFlag, RiskFlagStatus
from maria.errors import NotFound
from trail import ledger
from trail.models import TrailEvent

REVIEW_ROLES = (Role.REVIEWER, Role.ZONE_ADMIN)
ADMIN_ROLES = (Role.ZONE_ADMIN,)
QUEUE_LIMIT = 200  # rows on one page: soonest due first; filters narrow the rest
QUESTION_CHARS = 140


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


QUEUE_STATES = ("", "unclaimed", "claimed", "mine", "escalated")


@dataclass(frozen=True, slots=True)
class QueueFilters:
    zone: str = ""
    gate: str = ""
    state: str = ""  # one of QUEUE_STATES
    q: str = ""

    @classmethod
    def from_query(cls, query: Any) -> QueueFilters:
        state = str(query.get("state", "")).strip()
        return cls(
            zone=str(query.get("zone", "")).strip()[:64],
            gate=str(query.get("gate", "")).strip()[:16],
            state=state if state in QUEUE_STATES else "",
            q=str(query.get("q", "")).strip()[:200],
        )

    def as_query(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("zone", self.zone),
                ("gate", self.gate),
                ("state", self.state),
                ("q", self.q),
            )
            if v
        }


@dataclass(frozen=True, slots=True)
class QueueRow:
    id: int
    zone: str
    question: str
    gate: str
    mode: str
    reason: str
    sufficiency: float | None
    tau: float | None
    refusal_floor: float | None
    created_at: datetime
    due_at: datetime | None
    claimed_by: str | None
    claimed_by_me: bool
    escalated_to: str
    url: str

    @property
    def below_tau(self) -> bool:
        return self.sufficiency is not None and self.tau is not None and self.sufficiency < self.tau

    @property
    def overdue(self) -> bool:
        return self.due_at is not None and self.due_at < timezone.now()


def gate_reason(gate: str, mode: str, sufficiency: float | None, tau: float | None) -> str:
    """Why a person must look: the number that fell short, or the evidence that disagrees."""
    if gate == "required" and sufficiency is not None and tau is not None:
        if sufficiency < tau:
            return f"sufficiency {sufficiency:.2f} < τ {tau:.2f} ({mode or 'n/a'})"
        return "cited evidence contradicts itself"
    return gate or "-"


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
    elif filters.state == "escalated":
        rows = rows.exclude(escalated_to="")
    if filters.q:
        rows = rows.filter(Q(question__icontains=filters.q) | Q(answer__icontains=filters.q))
    return rows


def queue_total(user: AnyUser, filters: QueueFilters) -> int:
    return _waiting(user, filters).count()


def _short(text: str) -> str:
    return text if len(text) <= QUESTION_CHARS else text[: QUESTION_CHARS - 1] + "…"


def queue_rows(user: AnyUser, filters: QueueFilters, *, limit: int | None = None) -> list[QueueRow]:
    """Decisions waiting for a person in the user's zones, soonest due first.

    Links and shortened questions are made here, not in the template: per row, template
    tags cost more than the query (a page of many rows must render in well under 200 ms).
    """
    now = timezone.now()
    # One reverse() for the page; every row's link is the same path with its id.
    base = reverse("decision-page", args=[0])[: -len("0/")]
    values = (
        _waiting(user, filters)
        .order_by("due_at", "pk")
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
        )[: limit or QUEUE_LIMIT]
    )
    result = []
    for v in values:
        policy = v["report__policy"] or {}
        tau, refusal = policy.get("tau"), policy.get("refusal_floor")
        held_now = claim_holds(v["claimed_by_id"], v["claimed_until"], now)
        result.append(
            QueueRow(
                id=v["pk"],
                zone=v["zone"],
                question=_short(v["question"]),
                gate=v["gate"],
                mode=v["mode"],
                reason=gate_reason(v["gate"], v["mode"], v["sufficiency"], tau),
                sufficiency=v["sufficiency"],
                tau=tau,
                refusal_floor=refusal,
                created_at=v["created_at"],
                due_at=v["due_at"],
                claimed_by=v["claimed_by__username"] if held_now else None,
                claimed_by_me=bool(held_now and v["claimed_by_id"] == user.pk),
                escalated_to=v["escalated_to"],
                url=f"{base}{v['pk']}/",
            )
        )
    return result


def queue_zones(user: AnyUser) -> list[str]:
    """Zones the user reviews, for the zone filter."""
    scopes = scopes_of(user, REVIEW_ROLES)
    zones = Zone.objects.filter(within(scopes, "coordinate")).order_by("coordinate")
    return list(zones.values_list("coordinate", flat=True))


# --- risk hotspots awaiting the user's review ----------------------------------------------


RISK_LIMIT = 100  # open flags shown on the queue page, current crossings and highest first


@dataclass(frozen=True, slots=True)
class RiskFlagRow:
    """An open risk flag as the queue shows it to the authority that reviews it."""

    id: int
    zone: str
    key: str
    label: str | None  # None once the node was deleted: the flag outlives it
    node_type: str | None
    share: float
    threshold: float
    review_by: str
    flagged_at: datetime
    above_threshold: bool  # False once the node fell below, or the threshold moved
    explore_url: str | None


def risk_flags_for_review(user: AnyUser, *, limit: int = RISK_LIMIT) -> list[RiskFlagRow]:
    """Open risk flags whose review level lies in the user's reviewer or zone-admin scopes:
    the parent level's authority sees its zones' hotspots; a reviewer of the zone alone does
    not, and nobody sees a flag about their own person node (graph_services.may_resolve)."""
    scopes = scopes_of(user, REVIEW_ROLES)
    flags = list(
        GraphRiskFlag.objects.filter(status=RiskFlagStatus.OPEN)
        .filter(within(scopes, "review_by"))
        .exclude(key=f"person:{user.get_username()}")
        # Current crossings (no ended_at) first, then the heaviest concentration.
        .order_by(F("ended_at").desc(nulls_first=True), "-share", "-created_at", "-pk")[:limit]
    )
    nodes = {
        key: (node_type, label)
        for key, node_type, label in GraphNode.objects.filter(
            key__in=[f.key for f in flags]
        ).values_list("key", "node_type", "label")
    }
    explorer = reverse("graph-explorer")
    rows = []
    for flag in flags:
        node_type, label = nodes.get(flag.key, (None, None))
        rows.append(
            RiskFlagRow(
                id=flag.pk,
                zone=flag.zone,
                key=flag.key,
                label=label,
                node_type=node_type,
                share=flag.share,
                threshold=flag.threshold,
                review_by=flag.review_by,
                flagged_at=flag.created_at,
                above_threshold=flag.ended_at is None,
                explore_url=(
                    f"{explorer}?{urlencode({'zone': flag.zone, 'q': label})}"
                    if label is not None
                    else None
                ),
            )
        )
    return rows


# --- a decision as the page shows it -------------------------------------------------------


@dataclass(slots=True)
class Highlight:
    """A cited paragraph cut into the text before, inside and after the cited span."""

    before: str
    span: str
    after: str


def highlight(paragraph: str, span: str, start: int | None, end: int | None) -> Highlight:
    """Cut at the cited offsets when given, else at the span's first occurrence."""
    if start is not None or end is not None:
        lo = 0 if start is None else max(0, int(start))
        hi = len(paragraph) if end is None else min(len(paragraph), int(end))
        return Highlight(paragraph[:lo], paragraph[lo:hi], paragraph[hi:])
    at = paragraph.find(span) if span else -1
    if at < 0:
        return Highlight("", paragraph, "")
    return Highlight(paragraph[:at], span, paragraph[at + len(span) :])


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


def claim_verdict(claim: dict[str, Any]) -> str:
    if claim.get("contradicted"):
        return "contradicted"
    return "supported" if claim.get("supported") else "unsupported"


def decision_claims(decision: Decision) -> list[dict[str, Any]]:
    """The report's claims with each evidence item's paragraph cut around its span."""
    body = decision.report.body if decision.report is not None else {}
    claims: list[dict[str, Any]] = [dict(c) for c in body.get("claims", [])]
    if not claims:
        return [
            {"text": c["text"], "verdict": "unsupported", "evidence": [], "reasons": []}
            for c in decision.bundle.claims
        ]
    texts = _paragraph_texts(e for c in claims for e in c.get("evidence", []))
    for claim in claims:
        claim["verdict"] = claim_verdict(claim)
        items = []
        for item in claim.get("evidence", []):
            item = dict(item)
            key = (item.get("document"), item.get("version"), item.get("paragraph"))
            text = texts.get(key) if None not in key else None  # type: ignore[arg-type]
            cited = item.get("cited") or {}
            item["highlight"] = (
                highlight(text, item.get("span", ""), cited.get("start"), cited.get("end"))
                if text is not None
                else None
            )
            items.append(item)
        claim["evidence"] = items
    return claims


@dataclass(frozen=True, slots=True)
class Bar:
    """One score against its threshold, in the units of a 0..1 bar."""

    label: str
    value: float | None
    threshold: float | None
    floor: float | None = None

    @property
    def passes(self) -> bool | None:
        if self.value is None or self.threshold is None:
            return None
        return self.value >= self.threshold


def score_bars(decision: Decision) -> list[Bar]:
    policy = decision.report.policy if decision.report is not None else {}
    return [
        Bar("sufficiency", decision.sufficiency, policy.get("tau"), policy.get("refusal_floor")),
        Bar("completeness", decision.completeness, None),
        Bar("cohesion", decision.cohesion, policy.get("cohesion_tau")),
    ]


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


# --- zone admin ----------------------------------------------------------------------------


SHOWN_FIELDS = (
    "tau",
    "delta",
    "floor",
    "refusal_floor",
    "required_evidence",
    "cohesion_tau",
    "review_sla_hours",
    "approvals_required",
)


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


@dataclass(slots=True)
class TreeNode:
    zone: Zone
    values: dict[str, Any]
    sources: dict[str, str]
    children: list[TreeNode] = field(default_factory=list)


def policy_tree(zones: Sequence[Zone]) -> list[TreeNode]:
    """The zones nested under their parents, each with its effective values and sources."""
    nodes: dict[int, TreeNode] = {}
    roots: list[TreeNode] = []
    for zone in sorted(zones, key=lambda z: (z.depth, z.coordinate)):
        effective = effective_policy(zone.coord)
        node = TreeNode(zone, effective.values.as_dict(), effective.sources)
        nodes[zone.pk] = node
        parent = nodes.get(zone.parent_id) if zone.parent_id else None
        (parent.children if parent else roots).append(node)
    return roots


def flatten(nodes: Sequence[TreeNode], depth: int = 0) -> Iterator[tuple[int, TreeNode]]:
    for node in nodes:
        yield depth, node
        yield from flatten(node.children, depth + 1)


def zone_assignments(zone: Zone) -> list[RoleAssignment]:
    """Roles granted on this zone, above it (inherited) or beneath it."""
    lineage = [str(c) for c in zone.coord.lineage()]
    return list(
        RoleAssignment.objects.filter(Q(scope__in=lineage) | beneath(zone.coordinate, "scope"))
        .select_related("user", "granted_by")
        .order_by("scope", "role", "user__username")
    )


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
    stored = ValidationReport.objects.filter(pk__in=decisions.values("report_id")).values_list(
        "pk",
        "sufficiency",
        "body__score__kept_confidence",
        "body__score__claim_sufficiency",
        "body__contradictions",
    )
    zone_of = dict(decisions.values_list("report_id", "zone"))
    by_zone: dict[str, list[StoredScore]] = defaultdict(list)
    for pk, sufficiency, kept, claims, contradictions in stored:
        by_zone[zone_of[pk]].append(
            stored_score(
                sufficiency=sufficiency,
                kept_confidence=kept,
                claim_sufficiency=claims,
                contradictions=contradictions,
            )
        )
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
