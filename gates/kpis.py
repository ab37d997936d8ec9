"""The governance dashboard's figures for one zone and what lies beneath it (issue 16 point 4).

Every figure is about the *queries* of a window: the decisions proposed in the zone (or
beneath it) with `since <= created_at < until`, and the questions `ask` refused there in
the same window (`ask.refused` trail events). What happened to those decisions afterwards
counts up to now, wherever it happened. Each figure is a number and a series of one value
per UTC day (the day a decision was proposed). A rate whose denominator is empty is None.

- `decisions`: how many decisions, by the gate that graded them (`auto`, `flagged`,
  `required`, `blocked`, and `ungraded`: not validated yet, or validation failed), and
  `total`.
- `auto_ratio`: (auto + flagged) / graded decisions: the share the gate released with no
  person. `human_ratio`: required / graded: the share sent to the reviewer queue. The rest
  of the graded decisions were blocked.
- A *reviewed* decision is a required one on which a person gave the final verdict: a
  reviewer's `decision.approved` (the last of the approvals the zone needs) or a reviewer's
  `decision.failed` (a rejection; not a failure as "evidence changed", which says the
  answer is wrong now that its cited text changed, not that it was wrong when given). A
  reviewed decision was *re-reviewed* when it went back to the queue after someone took it
  up: a claim was given back (`decision.released`), or it was claimed more often than
  reviewers gave verdicts on it (a claim ran out).
- `first_pass_approval_rate`: reviewed decisions approved with no rejection and no
  re-review / reviewed decisions. `re_review_rate`: re-reviewed / reviewed decisions.
- `mean_review_seconds`, `p90_review_seconds`: over reviewed decisions, the seconds from
  entering the queue (`decision.queued`) to the final verdict; p90 by nearest rank (the
  smallest time that at least 90% of the reviewed decisions took no longer than).
- `sla_breaches`: required decisions that waited past a due date: escalated for it, given
  their verdict after their due date, or still waiting now past it.
- `escalations`: the `decision.escalated` events of the window's decisions (each one level
  up). `overrides`: their `decision.overridden` events (blocked answers released anyway).
- `refusal_rate`: refusals / queries, where a refusal is a blocked decision or a refused
  `ask`, and queries are the decisions plus the refused `ask`s.
- `requery_rate`: refusals after which the same agent (the account that proposed or asked)
  sent another query to the zone or beneath it within five minutes (`REQUERY_SECONDS`, the
  paper's section 11.3; looking past `until` too) / refusals: P_requery of its section 8.
- `requery_load`: those requeries / queries: the extra query volume refusals bring (the
  paper's section 8.3, refusal rate x P_requery).
- `trust`: the paper's section 7, `Trust_0 + alpha*Correct - beta*Halluc - gamma*Refusal`
  (`evidence.scoring.trust`, with `TRUST_0` and section 7.3's coefficients), from outcomes: a
  query is correct when its answer was released by the gate (auto, flagged) or approved by
  a reviewer, a hallucination when a reviewer rejected it, a refusal when it was blocked or
  `ask` refused it; the rates are shares of the queries with one of those outcomes (the
  three sum to 1). Its series is cumulative, the trust from `since` to each day's end: the
  trajectory, whose last point is the number.
- `hallucination_interval`: the mean number of answers with an outcome between two
  hallucinations, outcomes / rejections (None: no rejection), and `trust_recovers`: whether
  that interval is long enough to win back, at `TRUST_ALPHA` a correct answer, the
  `TRUST_BETA` one hallucination costs (the paper's section 7.4; `trust_model` carries the
  recovery half-life, beta / (2 alpha) = 2.5 correct answers). None with no outcome yet.
- `periodic_reviews_open`, `periodic_reviews_closed`, `periodic_reviews_wrong`: the window's
  flagged decisions sampled for periodic review (`decisions.periodic`) whose item is still
  open, closed with any verdict, and closed with the verdict "wrong" (an answer that had gone
  out and should not have): counted up to now, like every outcome.
- `completeness_of_accepted`: the mean BundleCompleteness of the window's accepted answers,
  those released to the asker (approved, executed or completed, by the gate or a person):
  the paper's "evidence completeness of accepted answers" (seed 000 §12.3, 94.1% there).
  None with no accepted answer.
- `corrections`: the `decision.corrected` events of the window's decisions: released answers
  a reviewer found wrong now that the text they rested on changed (`decisions.rereview`),
  their agents told.

Speed: a day whose counts can no longer change (none of its decisions open, the requery
minutes after it over) is counted once and kept (`gates.models.KpiDay`, with the requery
horizon it was counted under: a kept day counted under another is counted again); a read
counts only the
other days (today, days with a decision still waiting), and the overrides and periodic
reviews (which may change on any later day), from the decisions (by their time: the
`decision_created_at` index) and the trail (its (decision, kind, time) index for the
required and blocked ones, its (actor, time) index for one probe per refusal).
bench/bench_kpis.py times a zone of 100,000 decisions.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db import connection
from django.db.models import (
    Count,
    DateTimeField,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from coordinates.coordinate import Coordinate
from coordinates.models import Role
from coordinates.selectors import beneath, has_role
from decisions.events import Kind
from decisions.models import Decision, Gate, PeriodicReview, State
from decisions.services import EVIDENCE_CHANGED
from evidence import dynamics, scoring
from gates.models import KpiDay
from maria.errors import ApplicationError
from trail.ledger import LANE_MARK, SYSTEM
from trail.models import TrailEvent

KPI_ROLES = (Role.ZONE_ADMIN, Role.AUDITOR)  # who reads a zone's dashboard: on it or above
# A requery is a follow-up query within five minutes of a refusal (the paper's section 11.3,
# "measured by session analysis"): later than that it is a new question, not a retry.
REQUERY_SECONDS = 300.0
TRUST_0 = 3.0  # the paper's starting trust (section 7.3), on its 5-point scale
# Its calibrated sensitivities (section 7.3): a hallucination costs five correct answers.
TRUST_ALPHA, TRUST_BETA, TRUST_GAMMA = 1.0, 5.0, 0.7
DEFAULT_DAYS = 30
MAX_DAYS = 366  # one value per day: a longer window is refused, not silently cut
GATES = (Gate.AUTO, Gate.FLAGGED, Gate.REQUIRED, Gate.BLOCKED)
UNGRADED = "ungraded"

# --- the window --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Window:
    since: datetime  # inclusive
    until: datetime  # exclusive

    def days(self) -> list[date]:
        first, last = self.since.date(), (self.until - timedelta(microseconds=1)).date()
        return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def _moment(text: str, name: str, *, end: bool) -> datetime:
    """An ISO date or date-time; a date alone means its whole day (the end's day included)."""
    moment: datetime | None = None
    day: date | None = None
    try:
        # A date first: parse_datetime reads "2026-12-01" as its midnight.
        day = parse_date(text)
        moment = None if day is not None else parse_datetime(text)
    except ValueError:  # well formed but impossible: 2026-02-30, 25:00
        moment = day = None
    if moment is None and day is None:
        raise ApplicationError(
            f"{name} must be an ISO date (2026-12-01) or date and time (2026-12-01T09:00Z)",
            field=name,
        )
    try:
        if moment is None:
            assert day is not None  # noqa: S101 - one of the two parsed
            moment = datetime.combine(day + timedelta(days=1) if end else day, time(), tzinfo=UTC)
        if timezone.is_naive(moment):
            moment = moment.replace(tzinfo=UTC)
        moment = moment.astimezone(UTC)
        moment - timedelta(days=MAX_DAYS)  # the window's arithmetic must stay in range
        moment + timedelta(days=MAX_DAYS)
    except OverflowError:  # 9999-12-31, 0001-01-01: no room for the day or the window
        raise ApplicationError(f"{name} is out of range", field=name) from None
    return moment


def window_from(query: Mapping[str, Any], *, now: datetime | None = None) -> Window:
    """`?since=&until=` as a window: until defaults to now, since to DEFAULT_DAYS before
    until; a bad or reversed value, or one longer than MAX_DAYS, is a 400 naming its field."""
    now = now or timezone.now()
    raw_since, raw_until = (str(query.get(name) or "").strip() for name in ("since", "until"))
    until = _moment(raw_until, "until", end=True) if raw_until else now
    since = (
        _moment(raw_since, "since", end=False)
        if raw_since
        else until - timedelta(days=DEFAULT_DAYS)
    )
    if since >= until:
        raise ApplicationError("until must come after since", field="until")
    if until - since > timedelta(days=MAX_DAYS):
        raise ApplicationError(
            f"the window may span at most {MAX_DAYS} days (one value per day)", field="since"
        )
    return Window(since, until)


def may_read(user: Any, coordinate: Coordinate) -> bool:
    """A zone admin or auditor on the zone or above it (a superuser anywhere)."""
    return has_role(user, KPI_ROLES, coordinate)


# --- the pure arithmetic -----------------------------------------------------------------


def ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def p90(values: Iterable[float]) -> float | None:
    """Nearest rank: the ceil(0.9*n)-th smallest value."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[math.ceil(0.9 * len(ordered)) - 1]


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


# The counts a day is made of (overrides, corrections and periodic reviews aside: `_later_acts`
# and `_periodic_reviews` count them at every read, so a settled day's KpiDay never holds them).
_COUNTS = (
    "asks_refused", "reviewed", "first_pass", "re_reviewed", "rejected", "approved_by_person",
    "sla_breaches", "escalations", "refusals", "requeried",
)  # fmt: skip


_LIVE_COUNTS = (
    "overrides", "corrections", "periodic_open", "periodic_closed", "periodic_wrong",
    "accepted", "accepted_completeness",
)  # fmt: skip


@dataclass(slots=True)
class _Day:
    """What one day's queries came to (the counts every figure is made of)."""

    gates: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    asks_refused: int = 0
    reviewed: int = 0
    first_pass: int = 0
    re_reviewed: int = 0
    rejected: int = 0
    approved_by_person: int = 0
    review_seconds: list[float] = field(default_factory=list)
    sla_breaches: int = 0
    escalations: int = 0
    overrides: int = 0
    corrections: int = 0
    refusals: int = 0
    requeried: int = 0
    periodic_open: int = 0
    periodic_closed: int = 0
    periodic_wrong: int = 0
    accepted: int = 0  # released answers with a completeness
    accepted_completeness: float = 0.0  # the sum of their completeness

    @property
    def total(self) -> int:
        return sum(self.gates.values())

    @property
    def graded(self) -> int:
        return sum(self.gates.get(gate, 0) for gate in GATES)

    @property
    def correct(self) -> int:
        return (
            self.gates.get(Gate.AUTO, 0) + self.gates.get(Gate.FLAGGED, 0) + self.approved_by_person
        )

    def as_json(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in _COUNTS},
            "gates": dict(self.gates),
            "review_seconds": self.review_seconds,
            "requery_seconds": REQUERY_SECONDS,
        }

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> _Day:
        day = cls(**{name: stored[name] for name in _COUNTS})
        day.gates.update(stored["gates"])
        day.review_seconds = list(stored["review_seconds"])
        return day

    def add(self, other: _Day) -> None:
        for gate, n in other.gates.items():
            self.gates[gate] += n
        for name in (*_COUNTS, *_LIVE_COUNTS):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.review_seconds.extend(other.review_seconds)


def _decided(day: _Day) -> tuple[int, int]:
    """The queries with an outcome (correct, hallucinated, refused), and the refused."""
    refused = day.gates.get(Gate.BLOCKED, 0) + day.asks_refused
    return day.correct + day.rejected + refused, refused


def _trust(day: _Day) -> float:
    decided, refused = _decided(day)
    if not decided:
        return TRUST_0  # no outcome yet: the level before any interaction
    return scoring.trust(
        TRUST_0,
        day.correct / decided,
        day.rejected / decided,
        refused / decided,
        alpha=TRUST_ALPHA,
        beta=TRUST_BETA,
        gamma=TRUST_GAMMA,
    )


def _hallucination_interval(day: _Day) -> float | None:
    decided, _ = _decided(day)
    rate = ratio(day.rejected, decided)
    return None if rate is None else dynamics.hallucination_interval(rate)


def _trust_recovers(day: _Day) -> bool | None:
    """Whether, at this rate of hallucinations, trust comes back between two (section 7.4)."""
    decided, _ = _decided(day)
    if not decided:
        return None
    return dynamics.recovers_between_hallucinations(
        day.rejected / decided, alpha=TRUST_ALPHA, beta=TRUST_BETA
    )


def _figures(day: _Day) -> dict[str, Any]:
    queries = day.total + day.asks_refused
    return {
        "decisions": {
            "total": day.total,
            **{str(gate): day.gates.get(gate, 0) for gate in GATES},
            UNGRADED: day.gates.get(UNGRADED, 0),
        },
        "auto_ratio": ratio(
            day.gates.get(Gate.AUTO, 0) + day.gates.get(Gate.FLAGGED, 0), day.graded
        ),
        "human_ratio": ratio(day.gates.get(Gate.REQUIRED, 0), day.graded),
        "first_pass_approval_rate": ratio(day.first_pass, day.reviewed),
        "re_review_rate": ratio(day.re_reviewed, day.reviewed),
        "mean_review_seconds": mean(day.review_seconds),
        "p90_review_seconds": p90(day.review_seconds),
        "sla_breaches": day.sla_breaches,
        "escalations": day.escalations,
        "overrides": day.overrides,
        "refusal_rate": ratio(day.refusals, queries),
        "requery_rate": ratio(day.requeried, day.refusals),
        "requery_load": ratio(day.requeried, queries),
        "hallucination_interval": _hallucination_interval(day),
        "periodic_reviews_open": day.periodic_open,
        "periodic_reviews_closed": day.periodic_closed,
        "periodic_reviews_wrong": day.periodic_wrong,
        "corrections": day.corrections,
        "completeness_of_accepted": (
            day.accepted_completeness / day.accepted if day.accepted else None
        ),
    }


FIGURES = (
    "decisions", "auto_ratio", "human_ratio", "first_pass_approval_rate", "re_review_rate",
    "mean_review_seconds", "p90_review_seconds", "sla_breaches", "escalations", "overrides",
    "refusal_rate", "requery_rate", "requery_load", "trust", "hallucination_interval",
    "periodic_reviews_open", "periodic_reviews_closed", "periodic_reviews_wrong", "corrections",
    "completeness_of_accepted",
)  # fmt: skip


def kpis_shape(zone: str, window: Window, days: Mapping[date, _Day]) -> dict[str, Any]:
    """The KPI document: every figure over the window, and `series` with one point a day."""
    whole = _Day()
    running = _Day()
    series: dict[str, list[dict[str, Any]]] = {name: [] for name in FIGURES}
    for day in window.days():
        counts = days.get(day) or _Day()
        whole.add(counts)
        running.add(counts)
        label = day.isoformat()
        for name, value in _figures(counts).items():
            point = (
                {"date": label, **value} if name == "decisions" else {"date": label, "value": value}
            )
            series[name].append(point)
        series["trust"].append({"date": label, "value": _trust(running)})
    return {
        "zone": zone,
        "since": window.since.isoformat(),
        "until": window.until.isoformat(),
        "bucket": "day",
        **_figures(whole),
        "trust": _trust(whole),
        "trust_recovers": _trust_recovers(whole),
        "trust_model": {
            "trust_0": TRUST_0,
            "alpha": TRUST_ALPHA,
            "beta": TRUST_BETA,
            "gamma": TRUST_GAMMA,
            "recovery_half_life": dynamics.trust_recovery_half_life(TRUST_ALPHA, TRUST_BETA),
        },
        "series": series,
    }


# --- the queries -------------------------------------------------------------------------


def _cohort(coordinate: Coordinate, window: Window) -> QuerySet[Decision]:
    return Decision.objects.filter(
        beneath(coordinate), created_at__gte=window.since, created_at__lt=window.until
    )


def _asks_refused(coordinate: Coordinate, since: datetime, until: datetime) -> QuerySet[TrailEvent]:
    # A refused ask is an event on its zone's own chain (no lane: it has no decision).
    return TrailEvent.objects.filter(
        beneath(coordinate, "chain"),
        kind=Kind.ASK_REFUSED,
        created_at__gte=since,
        created_at__lt=until,
    )


REVIEW_KINDS = [
    Kind.DECISION_QUEUED, Kind.DECISION_CLAIMED, Kind.DECISION_RELEASED,
    Kind.DECISION_APPROVAL_RECORDED, Kind.DECISION_APPROVED, Kind.DECISION_FAILED,
    Kind.DECISION_ESCALATED,
]  # fmt: skip


def _day_sql(column: str) -> str:
    """The UTC day of a stored time as ISO text (SQLite stores UTC text already)."""
    if connection.vendor == "postgresql":
        return f"to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
    return f"substr({column}, 1, 10)"


def _seconds_sql(later: str, earlier: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM ({later} - {earlier}))"
    return f"(julianday({later}) - julianday({earlier})) * 86400.0"


def _review_facts(
    coordinate: Coordinate, window: Window, days: dict[date, _Day], now: datetime
) -> None:
    """Per required or blocked decision of the window, what its trail says of its review,
    read for those only (the gate released or refused the rest with no person): one pass
    over the window's decisions joined to the trail's (decision, kind, time) index, summed
    per day here. Raw SQL: the trail names a decision by its id, not by a relation."""
    at = connection.ops.adapt_datetimefield_value
    kind, person = "e.kind = %s", "e.actor <> %s"
    # A person's decision.failed is a rejection, unless it failed a waiting answer as
    # "evidence changed" on a re-review: wrong now that its text changed, not rejected for
    # being wrong when given, so it counts neither as a rejection nor as a review's verdict.
    rejection = f"{kind} AND {person} AND e.reason NOT LIKE %s"
    changed = f"{EVIDENCE_CHANGED}:%"
    counted: dict[str, tuple[str, list[str]]] = {
        "approved": (f"{kind} AND {person}", [Kind.DECISION_APPROVED, SYSTEM]),
        "rejected": (rejection, [Kind.DECISION_FAILED, SYSTEM, changed]),
        "recorded": (kind, [Kind.DECISION_APPROVAL_RECORDED]),
        "claims": (kind, [Kind.DECISION_CLAIMED]),
        "released": (kind, [Kind.DECISION_RELEASED]),
        "escalations": (kind, [Kind.DECISION_ESCALATED]),
    }
    columns = ", ".join(
        f"SUM(CASE WHEN {condition} THEN 1 ELSE 0 END) AS {name}"
        for name, (condition, _) in counted.items()
    )
    facts = (
        "SELECT d.created_at, d.due_at, d.state,"  # noqa: S608 - constants and placeholders
        f" MIN(CASE WHEN {kind} THEN e.created_at END) AS queued,"
        f" MIN(CASE WHEN ({kind} AND {person}) OR ({rejection}) THEN e.created_at END)"
        " AS verdict,"
        f" {columns}"
        f" FROM {Decision._meta.db_table} d"
        f" INNER JOIN {TrailEvent._meta.db_table} e ON e.decision_id = d.id"
        " WHERE (d.zone = %s OR d.zone LIKE %s) AND d.created_at >= %s AND d.created_at < %s"
        f" AND d.gate IN (%s, %s) AND e.kind IN ({', '.join(['%s'] * len(REVIEW_KINDS))})"
        " GROUP BY d.id, d.created_at, d.due_at, d.state"
    )
    facts_params = [
        Kind.DECISION_QUEUED,
        Kind.DECISION_APPROVED, SYSTEM, Kind.DECISION_FAILED, SYSTEM, changed,
        *(value for _, values in counted.values() for value in values),
        str(coordinate), f"{coordinate}.%", at(window.since), at(window.until),
        Gate.REQUIRED, Gate.BLOCKED, *REVIEW_KINDS,
    ]  # fmt: skip
    sql = (
        f"SELECT {_day_sql('f.created_at')},"  # noqa: S608 - constants and placeholders
        " CASE WHEN f.escalations > 0 OR f.verdict > f.due_at"
        "  OR (f.verdict IS NULL AND f.state = %s AND f.due_at < %s) THEN 1 ELSE 0 END,"
        " f.escalations,"
        f" CASE WHEN f.queued IS NOT NULL THEN {_seconds_sql('f.verdict', 'f.queued')} END,"
        " f.rejected,"
        " CASE WHEN f.released > 0 OR f.claims > f.approved + f.rejected + f.recorded"
        "  THEN 1 ELSE 0 END"
        f" FROM ({facts}) f"
    )
    params = [State.APPROVAL_REQUIRED, at(now), *facts_params]
    with connection.cursor() as cursor:
        # Plain strings: a driver may send an enum member by its name, not its value.
        cursor.execute(sql, [str(v) if isinstance(v, str) else v for v in params])
        rows = cursor.fetchall()
    for day_text, breached, escalations, seconds, rejected, re_reviewed in rows:
        day = days[date.fromisoformat(day_text)]
        day.sla_breaches += breached
        day.escalations += escalations
        if seconds is None:
            continue  # not reviewed (yet), or blocked
        day.reviewed += 1
        day.re_reviewed += re_reviewed
        if rejected:
            day.rejected += 1
        else:
            day.approved_by_person += 1
            day.first_pass += not re_reviewed
        day.review_seconds.append(float(seconds))


def _chains_beneath(coordinate: Coordinate) -> Q:
    """The chains of `coordinate` and beneath it: zone chains and their decision lanes."""
    return beneath(coordinate, "chain") | Q(chain__startswith=f"{coordinate}{LANE_MARK}")


def _requeries(coordinate: Coordinate, window: Window, days: dict[date, _Day]) -> None:
    """Each refusal of the window, and whether its agent sent another query to the zone or
    beneath it within REQUERY_SECONDS after it (a proposal or an ask on the trail: one probe of
    the trail's (actor, time) index per refusal)."""

    def asked_again(who: str, own: Q) -> Exists:
        horizon = ExpressionWrapper(
            OuterRef("created_at") + timedelta(seconds=REQUERY_SECONDS),
            output_field=DateTimeField(),
        )
        return Exists(
            TrailEvent.objects.filter(
                _chains_beneath(coordinate),
                actor=OuterRef(who),
                kind__in=[Kind.DECISION_PROPOSED, Kind.ASK_REFUSED],
                created_at__gt=OuterRef("created_at"),
                created_at__lte=horizon,
            ).exclude(own)
        )

    blocked = (
        _cohort(coordinate, window)
        .filter(gate=Gate.BLOCKED)
        .annotate(
            day=TruncDate("created_at", tzinfo=UTC),
            again=asked_again("proposed_by__username", Q(decision_id=OuterRef("pk"))),
        )
        .values_list("day", "again")
        .order_by()
    )
    asks = (
        _asks_refused(coordinate, window.since, window.until)
        .annotate(
            day=TruncDate("created_at", tzinfo=UTC),
            again=asked_again("actor", Q(pk=OuterRef("pk"))),
        )
        .values_list("day", "again")
        .order_by()
    )
    for rows in (blocked, asks):
        for day, again in rows:
            days[day].requeried += bool(again)


def _counted(coordinate: Coordinate, window: Window, now: datetime) -> dict[date, _Day]:
    """Every count but overrides, per day, from the decisions and the trail."""
    days: dict[date, _Day] = defaultdict(_Day)
    by_gate = (
        _cohort(coordinate, window)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values_list("day", "gate")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for day, gate, n in by_gate:
        days[day].gates[gate or UNGRADED] += n
        if gate == Gate.BLOCKED:
            days[day].refusals += n
    asks = (
        _asks_refused(coordinate, window.since, window.until)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values_list("day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for day, n in asks:
        days[day].asks_refused += n
        days[day].refusals += n
    _review_facts(coordinate, window, days, now)
    _requeries(coordinate, window, days)
    return days


# The acts on a decision that may come on any later day, and the count each one adds to.
_LATER_ACTS = {Kind.DECISION_OVERRIDDEN: "overrides", Kind.DECISION_CORRECTED: "corrections"}


def _later_acts(coordinate: Coordinate, window: Window, days: dict[date, _Day]) -> None:
    """Blocked answers released anyway, released answers corrected: possible on any day, so
    counted at every read (few events, found by the trail's kind index)."""
    for kind, name in _LATER_ACTS.items():
        _count_acts(coordinate, window, days, kind, name)


def _count_acts(
    coordinate: Coordinate, window: Window, days: dict[date, _Day], kind: Kind, name: str
) -> None:
    released = Counter(
        TrailEvent.objects.filter(kind=kind, created_at__gte=window.since).values_list(
            "decision_id", flat=True
        )
    )
    if not released:
        return
    proposed = (
        _cohort(coordinate, window)
        .filter(pk__in=list(released))
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values_list("pk", "day")
        .order_by()
    )
    for pk, day in proposed:
        counts = days[day]
        setattr(counts, name, getattr(counts, name) + released[pk])


def _periodic_reviews(coordinate: Coordinate, window: Window, days: dict[date, _Day]) -> None:
    """The periodic reviews of the window's decisions, by the day each was proposed and by
    verdict (null: open): an item may close on any later day, so counted at every read, in
    one grouped query over the items of the zone (its index) joined to their decisions."""
    rows = (
        PeriodicReview.objects.filter(
            beneath(coordinate),
            decision__created_at__gte=window.since,
            decision__created_at__lt=window.until,
        )
        .annotate(day=TruncDate("decision__created_at", tzinfo=UTC))
        .values_list("day", "verdict")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for day, verdict, n in rows:
        counts = days[day]
        if verdict is None:
            counts.periodic_open += n
        else:
            counts.periodic_closed += n
            counts.periodic_wrong += n if verdict == PeriodicReview.Verdict.WRONG else 0


# A released answer: the gate let it out or a person approved it (a blocked one released over
# its block included): what the asker got.
ACCEPTED_STATES = (State.APPROVED, State.EXECUTED, State.COMPLETED)


def _accepted_completeness(coordinate: Coordinate, window: Window, days: dict[date, _Day]) -> None:
    """The window's accepted answers and the sum of their completeness, per day: an answer
    may be approved on any later day, so counted at every read, in one grouped query."""
    rows = (
        _cohort(coordinate, window)
        .filter(state__in=ACCEPTED_STATES, completeness__isnull=False)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values_list("day")
        .annotate(n=Count("pk"), total=Sum("completeness"))
        .order_by()
    )
    for day, n, total in rows:
        days[day].accepted += n
        days[day].accepted_completeness += float(total)


def _day_window(day: date) -> Window:
    start = datetime.combine(day, time(), tzinfo=UTC)
    return Window(start, start + timedelta(days=1))


def _settled(coordinate: Coordinate, window: Window, now: datetime) -> set[date]:
    """The whole days of `window` whose counts can no longer change: the requery minutes
    after them are over and none of their decisions is still open (waiting for validation or for a
    person; the decisions' state index finds those)."""
    open_days = set(
        _cohort(coordinate, window)
        .filter(state__in=[State.PROPOSED, State.VALIDATED, State.APPROVAL_REQUIRED])
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values_list("day", flat=True)
        .distinct()
        .order_by()
    )
    return {
        day
        for day in window.days()
        if (whole := _day_window(day)).since >= window.since
        and whole.until <= window.until
        and whole.until + timedelta(seconds=REQUERY_SECONDS) <= now
        and day not in open_days
    }


def _runs(days: list[date], window: Window) -> list[Window]:
    """Consecutive days as windows, clipped to `window`."""
    runs: list[Window] = []
    for day in sorted(days):
        whole = _day_window(day)
        start, end = max(whole.since, window.since), min(whole.until, window.until)
        if runs and runs[-1].until == start:
            runs[-1] = Window(runs[-1].since, end)
        else:
            runs.append(Window(start, end))
    return runs


def zone_kpis(
    coordinate: Coordinate, window: Window, *, now: datetime | None = None
) -> dict[str, Any]:
    """The KPI document of `coordinate` and beneath it over `window` (module docstring).

    Settled days come from `KpiDay` once a read has counted them; the others (today, days
    with a decision still open, the window's partial first and last day) are counted from
    the decisions and the trail at every read, and overrides, corrections and periodic
    reviews always are."""
    now = now or timezone.now()
    zone = str(coordinate)
    settled = _settled(coordinate, window, now)
    days: dict[date, _Day] = defaultdict(_Day)
    stale = []
    for row in KpiDay.objects.filter(coordinate=zone, day__in=settled):
        if row.counts.get("requery_seconds") == REQUERY_SECONDS:
            days[row.day] = _Day.from_json(row.counts)
        else:  # counted under another requery horizon: its requeries mean something else
            stale.append(row.day)
    KpiDay.objects.filter(coordinate=zone, day__in=stale).delete()
    missing = [day for day in window.days() if day not in days]
    for run in _runs(missing, window):
        days.update(_counted(coordinate, run, now))
    KpiDay.objects.bulk_create(
        [
            KpiDay(coordinate=zone, day=day, counts=days[day].as_json())
            for day in missing
            if day in settled
        ],
        ignore_conflicts=True,  # another read settled it first: the same counts
    )
    _later_acts(coordinate, window, days)
    _periodic_reviews(coordinate, window, days)
    _accepted_completeness(coordinate, window, days)
    return kpis_shape(zone, window, days)
