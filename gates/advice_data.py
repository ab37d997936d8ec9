"""What the threshold advice (gates.advice) is computed from: a zone's recent decisions with
their stored reports, the reviewers' outcomes and per-claim verdicts, each zone's thresholds
now, and the zone's requery rate (gates.kpis). Reads only; `zone_advice` runs the pure core.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from coordinates.coordinate import Coordinate, parse
from coordinates.selectors import EffectivePolicy, beneath, effective_policy
from decisions.events import Kind
from decisions.models import ClaimVerdict, Decision
from gates import advice, kpis
from gates.selectors import stored_scores
from trail.ledger import SYSTEM
from trail.models import TrailEvent

DEFAULT_DAYS = 90
MAX_DAYS = kpis.MAX_DAYS  # the requery rate comes from the KPI window, which stops there


def recent_decisions(coordinate: Coordinate, since: datetime) -> QuerySet[Decision]:
    """The graded decisions of the zone and beneath it proposed since `since`."""
    return Decision.objects.filter(
        beneath(coordinate), report__isnull=False, created_at__gte=since
    ).order_by()


def reviewer_outcomes(decisions: QuerySet[Decision]) -> dict[int, bool]:
    """decision id -> wrong, for the decisions a person gave a verdict on: True when a person
    rejected it (a reviewer's or an authority's `decision.failed`) or any reviewer marked a
    claim unsupported, False when a person approved it (`decision.approved`) and nobody
    marked a claim unsupported. The KPIs' "reviewed" (gates.kpis) reads the same events."""
    ids = decisions.values("pk")
    wrong: dict[int, bool] = {}
    verdicts = (
        TrailEvent.objects.filter(
            decision_id__in=ids, kind__in=[Kind.DECISION_APPROVED, Kind.DECISION_FAILED]
        )
        .exclude(actor=SYSTEM)  # the gate's own release, or a validation that gave up
        .values_list("decision_id", "kind")
    )
    for pk, kind in verdicts:
        if pk is None:
            continue  # not possible under decision_id__in; the column is nullable
        wrong[pk] = wrong.get(pk, False) or kind == Kind.DECISION_FAILED
    # A claim marked unsupported counts even on an approval, and even before the last of
    # the approvals the zone needs: a reviewer said this answer holds something wrong.
    unsupported = ClaimVerdict.objects.filter(decision_id__in=ids, supported=False)
    for pk in unsupported.values_list("decision_id", flat=True).distinct():
        wrong[pk] = True
    return wrong


def _follows(zone: Coordinate, policy: EffectivePolicy) -> bool:
    """The admin's tau reaches this zone: its tau is not set on a level strictly beneath."""
    source = policy.sources.get("tau", "default")
    return not source.startswith(f"{zone}.")


def _thresholds(policy: EffectivePolicy) -> advice.Thresholds:
    values = policy.values
    return advice.Thresholds(
        tau=values.tau, floor=values.floor, refusal_floor=values.refusal_floor, delta=values.delta
    )


def advice_cases(coordinate: Coordinate, since: datetime) -> list[advice.Case]:
    """Every graded decision since `since` as an advice.Case: its stored numbers (as the
    what-if reads them), its zone's thresholds now, and its reviewers' outcome."""
    decisions = recent_decisions(coordinate, since)
    scores = stored_scores(decisions)
    wrong = reviewer_outcomes(decisions)
    by_zone: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for pk, report_id, zone in decisions.values_list("pk", "report_id", "zone"):
        by_zone[zone].append((pk, report_id))
    cases: list[advice.Case] = []
    for zone, rows in sorted(by_zone.items()):
        policy = effective_policy(parse(zone))
        thresholds = _thresholds(policy)
        follows = _follows(coordinate, policy)
        cases.extend(
            advice.Case(
                score=scores[report_id],
                thresholds=thresholds,
                wrong=wrong.get(pk),
                follows_tau=follows,
            )
            for pk, report_id in rows
        )
    return cases


def requery_rate(coordinate: Coordinate, since: datetime, until: datetime) -> float | None:
    """The zone's P_requery over the window: the KPI `requery_rate` (None: no refusal)."""
    figures = kpis.zone_kpis(coordinate, kpis.Window(since, until), now=until)
    rate = figures["requery_rate"]
    return None if rate is None else float(rate)


def zone_advice(
    coordinate: Coordinate,
    *,
    target: float = advice.DEFAULT_TARGET,
    days: int = DEFAULT_DAYS,
    costs: tuple[float, float, float] | None = None,
    now: datetime | None = None,
) -> tuple[advice.Advice, float | None]:
    """The advice for the zone over its last `days` days, and the requery rate its costs
    used. `costs` is (hallucination, requery, abandon); without it, or when the zone had no
    refusal to learn a requery rate from, the advice has no economics."""
    now = now or timezone.now()
    since = now - timedelta(days=days)
    p_requery = requery_rate(coordinate, since, now) if costs is not None else None
    priced = (
        advice.Costs(*costs, p_requery=p_requery)
        if costs is not None and p_requery is not None
        else None
    )
    found = advice.advise(
        advice_cases(coordinate, since),
        current_tau=effective_policy(coordinate).values.tau,
        target=target,
        costs=priced,
    )
    return found, p_requery
