"""The governance dashboard's figures (gates.kpis): each equals a count the test keeps itself
while it builds the zone's decisions through the real services on a clock it sets (gates,
two-reviewer approvals, a release, a late rejection, escalations, an override, blocked
answers, a refused ask and the queries after them); scope; bad windows; the page."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from rest_framework.test import APIClient

from coordinates.models import Role
from decisions import services
from decisions.models import Decision, State
from gates import dashboard, kpis
from gates.models import KpiDay
from tests.decisions.conftest import GOOD, WRONG_NUMBER, ZONE, cite

pytestmark = pytest.mark.django_db

PLANET = "G1.U1.P1"
OTHER_ZONE = "G1.U1.P1.Z2"  # a sibling of ZONE on the same planet
DAY_1 = datetime(2026, 11, 10, tzinfo=UTC)
DAY_2 = DAY_1 + timedelta(days=1)
WINDOW = "?since=2026-11-10&until=2026-11-11"  # both days, the second date's day included
SLA_HOURS = 2.0


class Clock:
    """django.utils.timezone.now, set by the test: every service and trail event reads it."""

    def __init__(self) -> None:
        self.now = DAY_1

    def at(self, moment: datetime) -> None:
        self.now = moment

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    ticking = Clock()
    with mock.patch("django.utils.timezone.now", ticking):
        yield ticking


@dataclass
class Expected:
    """What the test did, day by day: the figures it expects, counted as it went."""

    gates: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    reviews: dict[str, list[tuple[float, bool, bool]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # (seconds, approved, re-reviewed)
    breaches: Counter[str] = field(default_factory=Counter)
    escalations: Counter[str] = field(default_factory=Counter)
    overrides: Counter[str] = field(default_factory=Counter)
    asks_refused: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    requeried: Counter[str] = field(default_factory=Counter)


def _p90(values: list[float]) -> float | None:
    ordered = sorted(values)
    return ordered[math.ceil(0.9 * len(ordered)) - 1] if ordered else None


def _figures(e: Expected, days: list[str]) -> dict[str, Any]:
    """The expected figures over `days`, from the test's own tallies."""
    gates: Counter[str] = Counter()
    for day in days:
        gates.update(e.gates[day])
    graded = sum(gates[g] for g in ("auto", "flagged", "required", "blocked"))
    reviews = [r for day in days for r in e.reviews[day]]
    seconds = [r[0] for r in reviews]
    refusals = sum(e.refusals[d] for d in days)
    asks = sum(e.asks_refused[d] for d in days)
    queries = sum(gates.values()) + asks

    def share(part: float, whole: float) -> float | None:
        return part / whole if whole else None

    correct = gates["auto"] + gates["flagged"] + sum(1 for r in reviews if r[1])
    rejected = sum(1 for r in reviews if not r[1])
    decided = correct + rejected + gates["blocked"] + asks
    # The paper's section 7.3, written out here rather than asked of the function under
    # test: Trust = Trust_0 + alpha*Correct - beta*Halluc - gamma*Refusal, Trust_0 = 3.0,
    # alpha 1.0, beta 5.0, gamma 0.7.
    refused = gates["blocked"] + asks
    trust = (
        3.0 + 1.0 * correct / decided - 5.0 * rejected / decided - 0.7 * refused / decided
        if decided
        else 3.0
    )
    return {
        "decisions": {
            "total": sum(gates.values()),
            **{g: gates[g] for g in ("auto", "flagged", "required", "blocked", "ungraded")},
        },
        "auto_ratio": share(gates["auto"] + gates["flagged"], graded),
        "human_ratio": share(gates["required"], graded),
        "first_pass_approval_rate": share(
            sum(1 for r in reviews if r[1] and not r[2]), len(reviews)
        ),
        "re_review_rate": share(sum(1 for r in reviews if r[2]), len(reviews)),
        "mean_review_seconds": sum(seconds) / len(seconds) if seconds else None,
        "p90_review_seconds": _p90(seconds),
        "sla_breaches": sum(e.breaches[d] for d in days),
        "escalations": sum(e.escalations[d] for d in days),
        "overrides": sum(e.overrides[d] for d in days),
        "refusal_rate": share(refusals, queries),
        "requery_rate": share(sum(e.requeried[d] for d in days), refusals),
        # The paper's section 8.3: the extra volume requeries add, a share of all queries.
        "requery_load": share(sum(e.requeried[d] for d in days), queries),
        # Its section 7.4: one hallucination in every 1 / H answers.
        "hallucination_interval": decided / rejected if rejected else None,
        "trust": trust,
    }


@dataclass
class World:
    expected: Expected
    admin: User  # zone admin of ZONE
    planet_admin: User  # zone admin of the planet: ZONE and OTHER_ZONE
    auditor: User  # auditor of ZONE
    stranger: User  # zone admin of OTHER_ZONE only


def _at(day: datetime, hh: int, mm: int = 0) -> datetime:
    return day + timedelta(hours=hh, minutes=mm)


@pytest.fixture
def world(
    clock: Clock,
    policy_doc: Any,
    set_policy: Callable[..., Any],
    submit: Callable[..., Any],
    agent_client: Callable[[str], APIClient],
    person: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> World:
    e = Expected()
    ann = person("ann", Role.REVIEWER, PLANET)
    ben = person("ben", Role.REVIEWER, ZONE)
    zed = person("zed", Role.ZONE_ADMIN, ZONE)
    zed.user_permissions.add(Permission.objects.get(codename="override_blocked"))
    zed = User.objects.get(pk=zed.pk)
    # A blocked answer is released by two people with the permission (issue 18 point 4).
    person("zoe", Role.ZONE_ADMIN, ZONE).user_permissions.add(
        Permission.objects.get(codename="override_blocked")
    )
    zoe = User.objects.get(username="zoe")
    world = World(
        expected=e,
        admin=zed,
        planet_admin=person("pia", Role.ZONE_ADMIN, PLANET),
        auditor=person("aud", Role.AUDITOR, ZONE),
        stranger=person("sid", Role.ZONE_ADMIN, OTHER_ZONE),
    )

    def answer(moment: datetime, gate: str, *, agent: str = f"{ZONE}.A1") -> int:
        """Submit at `moment` an answer the zone's policy grades `gate` (or blocks)."""
        clock.at(moment)
        zone = agent.rsplit(".", 1)[0]
        if gate == "required":
            set_policy(zone, tau=0.99, refusal_floor=0.05, **common)
        elif gate == "auto":
            set_policy(zone, tau=0.2, delta=0.05, refusal_floor=0.01, floor=0.01, **common)
        text = WRONG_NUMBER if gate == "blocked" else GOOD
        body = submit(
            [{"text": text, "citations": [cite(policy_doc)]}],
            agent=agent,
            zone=zone,
            token_of=agent,
        ).json()
        assert body["gate"] in ({"auto": ("auto", "flagged")}.get(gate) or (gate,)), body
        if zone == ZONE:
            e.gates[moment.date().isoformat()][body["gate"]] += 1
            if body["gate"] == "blocked":
                e.refusals[moment.date().isoformat()] += 1
        return int(body["id"])

    common = {"approvals_required": 2, "review_sla_hours": SLA_HOURS}

    def do(moment: datetime, step: Callable[..., Any], **kwargs: Any) -> None:
        clock.at(moment)
        with django_capture_on_commit_callbacks(execute=True):
            step(**kwargs)

    d1 = DAY_1.date().isoformat()
    d2 = DAY_2.date().isoformat()
    # Outside the window: the evening before and the first minute after it.
    answer(_at(DAY_1, -1), "auto")
    # Day 1. Two answers the gate releases.
    answer(_at(DAY_1, 9), "auto")
    answer(_at(DAY_1, 9, 10), "auto")
    # r1: ann then ben approve, each after claiming: a first-pass approval in 30 minutes.
    r1 = answer(_at(DAY_1, 9, 20), "required")
    do(_at(DAY_1, 9, 30), services.decision_claim, decision_id=r1, user=ann)
    do(_at(DAY_1, 9, 35), services.decision_approve, decision_id=r1, user=ann, reason="ok")
    do(_at(DAY_1, 9, 40), services.decision_claim, decision_id=r1, user=ben)
    do(_at(DAY_1, 9, 50), services.decision_approve, decision_id=r1, user=ben, reason="ok")
    e.reviews[d1].append((30 * 60, True, False))
    # r2: ann claims and gives it back; ben claims and approves, ann approves unclaimed: a
    # re-review, approved in 40 minutes.
    r2 = answer(_at(DAY_1, 9, 25), "required")
    do(_at(DAY_1, 9, 40), services.decision_claim, decision_id=r2, user=ann)
    do(_at(DAY_1, 9, 45), services.decision_release, decision_id=r2, user=ann)
    do(_at(DAY_1, 10), services.decision_claim, decision_id=r2, user=ben)
    do(_at(DAY_1, 10, 2), services.decision_approve, decision_id=r2, user=ben, reason="ok")
    do(_at(DAY_1, 10, 5), services.decision_approve, decision_id=r2, user=ann, reason="ok")
    e.reviews[d1].append((40 * 60, True, True))
    # r3 and r4 wait past their due time (11:30, 11:35) and are escalated at noon; ben
    # rejects r3 at 12:30 (a review of 3 hours); r4 still waits.
    r3 = answer(_at(DAY_1, 9, 30), "required")
    answer(_at(DAY_1, 9, 35), "required")
    do(_at(DAY_1, 12), services.decisions_escalate_overdue)
    do(
        _at(DAY_1, 12, 30),
        services.decision_reject,
        decision_id=r3,
        user=ben,
        reason="wrong",
        claims=[{"index": 0, "supported": False}],
    )
    e.reviews[d1].append((3 * 3600, False, False))
    e.breaches[d1] += 2
    e.escalations[d1] += 2
    # b1 is blocked at 13:00 and its agent asks again at 13:04: a requery (the paper's
    # section 11.3: a follow-up within five minutes).
    answer(_at(DAY_1, 13), "blocked")
    e.requeried[d1] += 1
    answer(_at(DAY_1, 13, 4), "auto")
    # b2 is blocked at 14:00; its agent's next query is at 14:20, a new question rather
    # than a retry: no requery. The zone admin releases b2 anyway.
    b2 = answer(_at(DAY_1, 14), "blocked")
    answer(_at(DAY_1, 14, 20), "auto")
    do(_at(DAY_1, 14, 30), services.decision_override, decision_id=b2, user=zed, reason="fine")
    do(_at(DAY_1, 14, 40), services.decision_override, decision_id=b2, user=zoe, reason="yes")
    e.overrides[d1] += 1  # the request and its completion: one override
    # 16:00 a question `ask` cannot answer; the same agent submits at 16:03: a requery.
    clock.at(_at(DAY_1, 16))
    refused = agent_client(f"{ZONE}.A1").post(
        "/api/v1/ask/",
        {"question": "What colour is the cafeteria on Mars?", "zone": ZONE},
        format="json",
    )
    assert refused.status_code == 200, refused.content
    assert refused.json()["refusal"]
    e.asks_refused[d1] += 1
    e.refusals[d1] += 1
    e.requeried[d1] += 1
    answer(_at(DAY_1, 16, 3), "auto")
    # Day 2. Another agent of the planet is blocked at 10:00; A1 asks at 10:10, and that is
    # no requery of someone else's refusal. A1 is blocked at 23:58 and asks again at 00:02
    # the next day, after the window: a requery still.
    answer(_at(DAY_2, 9), "auto")
    answer(_at(DAY_2, 10), "blocked", agent=f"{OTHER_ZONE}.A1")
    answer(_at(DAY_2, 10, 10), "auto")
    answer(_at(DAY_2, 23, 58), "blocked")
    e.requeried[d2] += 1
    answer(_at(DAY_2, 24, 2), "auto")
    clock.at(_at(DAY_2, 24, 20))
    return world


def _kpis(user: User, coordinate: str = ZONE, query: str = WINDOW) -> Any:
    client = APIClient()
    client.force_authenticate(user=user)
    return client.get(f"/api/v1/zones/{coordinate}/kpis/{query}")


NAMES = {
    "decisions", "auto_ratio", "human_ratio", "first_pass_approval_rate", "re_review_rate",
    "mean_review_seconds", "p90_review_seconds", "sla_breaches", "escalations", "overrides",
    "refusal_rate", "requery_rate", "requery_load", "hallucination_interval", "trust",
}  # fmt: skip


def _close(got: dict[str, Any], want: dict[str, Any]) -> None:
    for name, value in want.items():
        if isinstance(value, float):
            assert got[name] == pytest.approx(value), name
        else:
            assert got[name] == value, name


def test_every_figure_equals_the_count_the_test_kept(world: World) -> None:
    response = _kpis(world.admin)
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) >= NAMES
    days = [DAY_1.date().isoformat(), DAY_2.date().isoformat()]
    _close(body, _figures(world.expected, days))
    # Every figure is also one value a day (trust: the trajectory, cumulative).
    for i, day in enumerate(days):
        want = _figures(world.expected, [day])
        for name in NAMES:
            point = body["series"][name][i]
            assert point["date"] == day
            if name == "decisions":
                assert {k: v for k, v in point.items() if k != "date"} == want["decisions"]
            elif name == "trust":
                cumulative = _figures(world.expected, days[: i + 1])["trust"]
                assert point["value"] == pytest.approx(cumulative)
            else:
                assert point["value"] == pytest.approx(want[name]), (name, day)
    assert body["series"]["trust"][-1]["value"] == pytest.approx(body["trust"])


def test_trust_recovery_is_the_papers_half_life_against_the_zones_hallucinations(
    world: World,
) -> None:
    """Seed 000 §7.4: with beta 5.0 and alpha 1.0 trust takes 2.5 correct answers to win
    back half of what one hallucination cost, so 5 to win it all back; the zone's trust
    recovers when its hallucinations come further apart than that."""
    body = _kpis(world.admin).json()
    assert body["trust_model"]["recovery_half_life"] == pytest.approx(2.5)
    interval = body["hallucination_interval"]
    assert interval is not None
    assert body["trust_recovers"] is (interval >= 5.0)


def test_a_day_kept_under_another_requery_horizon_is_counted_again(
    world: World, clock: Clock
) -> None:
    """A day settled when a requery meant an hour keeps the hour's count; reading it back
    under the five minutes would mix the two definitions, so it is counted anew."""
    waiting = Decision.objects.get(state=State.APPROVAL_REQUIRED)
    clock.at(_at(DAY_2, 36))
    services.decision_reject(
        decision_id=waiting.pk,
        user=User.objects.get(username="ben"),
        reason="no",
        claims=[{"index": 0, "supported": False}],
    )
    first = _kpis(world.admin).json()
    assert KpiDay.objects.filter(coordinate=ZONE).count() == 2
    for row in KpiDay.objects.filter(coordinate=ZONE):
        row.counts.pop("requery_seconds")
        row.counts["requeried"] += 1  # what the hour-long horizon counted on top
        row.save()
    again = _kpis(world.admin).json()
    assert again["requery_rate"] == first["requery_rate"]
    assert {row.counts["requery_seconds"] for row in KpiDay.objects.filter(coordinate=ZONE)} == {
        kpis.REQUERY_SECONDS
    }


def test_settled_days_are_kept_and_read_back_the_same(world: World, clock: Clock) -> None:
    # given the last waiting decision rejected two days later: no day of the window is open
    waiting = Decision.objects.get(state=State.APPROVAL_REQUIRED)
    verdict = _at(DAY_2, 36)
    clock.at(verdict)
    services.decision_reject(
        decision_id=waiting.pk,
        user=User.objects.get(username="ben"),
        reason="no",
        claims=[{"index": 0, "supported": False}],
    )
    e = world.expected
    e.reviews[DAY_1.date().isoformat()].append(
        ((verdict - _at(DAY_1, 9, 35)).total_seconds(), False, False)
    )
    days = [DAY_1.date().isoformat(), DAY_2.date().isoformat()]
    # when the figures are read twice
    first = _kpis(world.admin).json()
    assert KpiDay.objects.filter(coordinate=ZONE).count() == 2
    second = _kpis(world.admin).json()
    # then both equal the test's count, the second read from the settled days
    assert first == second
    _close(second, _figures(e, days))
    # and an override after the day settled still counts
    blocked = Decision.objects.get(zone=ZONE, created_at=_at(DAY_1, 13))
    services.decision_override(decision_id=blocked.pk, user=world.admin, reason="fine after all")
    zoe = User.objects.get(username="zoe")
    services.decision_override(decision_id=blocked.pk, user=zoe, reason="agreed")
    e.overrides[days[0]] += 1
    third = _kpis(world.admin).json()
    _close(third, _figures(e, days))
    assert third["series"]["overrides"][0]["value"] == 2


def test_the_scenario_exercises_every_figure(world: World) -> None:
    """No figure is checked only at zero or None (a test that could not fail)."""
    want = _figures(world.expected, [DAY_1.date().isoformat(), DAY_2.date().isoformat()])
    assert want["decisions"]["required"] == 4
    assert want["decisions"]["blocked"] == 3
    for name in NAMES - {"decisions"}:
        assert want[name], name
    assert 0 < want["first_pass_approval_rate"] < 1
    assert 0 < want["requery_rate"] < 1


def test_a_planet_admin_sees_its_zones_together_and_a_zone_only_its_own(world: World) -> None:
    planet = _kpis(world.planet_admin, PLANET).json()
    own = _kpis(world.admin).json()
    assert planet["decisions"]["blocked"] == own["decisions"]["blocked"] + 1
    assert planet["decisions"]["total"] == own["decisions"]["total"] + 1


def test_the_figures_are_scoped_like_every_page(world: World) -> None:
    # The auditor of the zone reads them; the admin of another zone gets what a missing
    # zone gets; nobody reads the level above what they hold.
    assert _kpis(world.auditor).status_code == 200
    other = _kpis(world.stranger)
    missing = _kpis(world.stranger, "G9.U9.P9.Z9")
    assert other.status_code == missing.status_code == 404
    assert other.json()["error"]["code"] == missing.json()["error"]["code"] == "unknown_zone"
    assert _kpis(world.admin, PLANET).status_code == 404
    reviewer = User.objects.get(username="ben")
    assert _kpis(reviewer).status_code == 404
    assert APIClient().get(f"/api/v1/zones/{ZONE}/kpis/").status_code == 401


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?since=yesterday", "since"),
        ("?until=2026-13-01", "until"),
        ("?since=2026-02-30", "since"),
        ("?since=2026-11-12&until=2026-11-10", "until"),
        ("?since=2020-01-01&until=2026-01-01", "since"),
        ("?until=2026-11-10T25:00", "until"),
        ("?until=9999-12-31", "until"),
        ("?since=0001-01-01T00:00:00Z", "since"),
    ],
)
def test_a_bad_window_is_a_400_naming_its_field(
    org: Any, person: Callable[..., Any], query: str, field: str
) -> None:
    response = _kpis(person("zed", Role.ZONE_ADMIN, ZONE), query=query)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == field


def test_a_bad_coordinate_is_a_400_and_an_agent_is_no_zone(
    org: Any, person: Callable[..., Any]
) -> None:
    admin = person("zed", Role.ZONE_ADMIN, ZONE)
    assert _kpis(admin, "not-a-zone").status_code == 400
    assert _kpis(admin, f"{ZONE}.A1").status_code == 400


def test_an_empty_zone_has_counts_of_zero_and_no_rates(
    org: Any, person: Callable[..., Any]
) -> None:
    body = _kpis(person("zed", Role.ZONE_ADMIN, ZONE)).json()
    assert body["decisions"]["total"] == 0
    assert body["sla_breaches"] == 0
    assert body["auto_ratio"] is None
    assert body["requery_rate"] is None
    assert body["trust"] == kpis.TRUST_0
    assert body["hallucination_interval"] is None
    assert body["trust_recovers"] is None
    assert len(body["series"]["auto_ratio"]) == 2


def test_the_page_shows_the_same_numbers_and_a_chart_for_each(world: World) -> None:
    api = _kpis(world.auditor).json()
    browser = Client()
    browser.force_login(world.auditor)
    page = browser.get(f"/zones/{ZONE}/dashboard/{WINDOW}")
    assert page.status_code == 200
    html = page.content.decode()
    for row in dashboard.dashboard_rows(api):
        assert f'data-kpi="{row["name"]}"' in html
        assert f">{row['shown']}</div>" in html, row["name"]
    assert html.count("<svg") >= len(dashboard.FIGURE_ROWS) + 1
    assert html.count("<polyline") >= len(dashboard.FIGURE_ROWS)
    assert " style=" not in html
    assert "<script>" not in html
    assert browser.get(f"/zones/{ZONE}/dashboard/?since=nonsense").status_code == 400


def test_the_page_is_a_404_outside_the_scope_and_linked_from_the_zone_page(
    org: Any, person: Callable[..., Any]
) -> None:
    browser = Client()
    browser.force_login(person("sid", Role.ZONE_ADMIN, OTHER_ZONE))
    assert browser.get(f"/zones/{ZONE}/dashboard/").status_code == 404
    assert browser.get("/zones/G9.U9.P9.Z9/dashboard/").status_code == 404
    browser.force_login(person("zed", Role.ZONE_ADMIN, ZONE))
    assert f'href="/zones/{ZONE}/dashboard/"' in browser.get(f"/zones/{ZONE}/").content.decode()


def test_a_chart_leaves_a_gap_where_a_day_has_no_value() -> None:
    drawn = dashboard.chart([("a", 1.0), ("b", None), ("c", 0.5), ("d", 0.0)])
    assert len(drawn.lines) == 2
    assert len(drawn.dots) == 3
    assert drawn.top == 1.0
    assert drawn.dots[0] == (dashboard.PAD, dashboard.PAD)  # the top value at the top
    assert drawn.dots[-1][1] == dashboard.HEIGHT - dashboard.PAD  # zero on the floor
