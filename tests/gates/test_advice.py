"""The threshold advice's pure core (gates.advice): its curve by properties and against a
brute-force count of hand-made decisions, its advised tau, and the refusal economics."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gates import advice
from gates.advice import Case, Costs, Thresholds
from gates.grading import Gate, StoredScore, replay_gate

ZONE = Thresholds(tau=0.80, floor=0.10, refusal_floor=0.40, delta=0.10)


def case(
    s: float,
    wrong: bool | None = None,
    *,
    contradictions: bool = False,
    factual: bool = True,
    confidence: tuple[float, ...] = (0.9,),
    refuted: bool = False,
) -> Case:
    at_least: Gate = "blocked" if refuted else "auto"
    score = StoredScore(s, list(confidence), contradictions, factual, at_least)
    return Case(score=score, thresholds=ZONE, wrong=wrong)


# Reviewed ones carry the reviewers' outcome (True: they would have rejected it).
HAND_MADE = [
    case(0.55, True),
    case(0.62, False),
    case(0.65, True),
    case(0.72, False),
    case(0.75, False),
    case(0.78, False),
    case(0.85),  # released under the current tau, never reviewed
    case(0.30),  # below the refusal floor: weak evidence, a person decides
    case(0.95, refuted=True),  # a claim the evidence refutes: blocked whatever tau
    case(0.90, True, contradictions=True),  # disputed evidence: a person always sees it
    case(1.00, False, factual=False),  # asserts no fact: released, flagged
]


def oracle(cases: list[Case], tau: float) -> dict[str, int]:
    """The live rules counted by hand: a refuted claim -> blocked; no fact -> released; a fact
    below tau (below the refusal floor too) -> a person; contradictions send anything not
    blocked to a person."""
    counts = {"released": 0, "required": 0, "blocked": 0, "labelled": 0, "wrong": 0}
    for c in cases:
        s = c.score
        if s.at_least == "blocked":
            counts["blocked"] += 1
            continue
        if s.has_contradictions or (s.has_factual_claims and s.sufficiency < tau):
            counts["required"] += 1
            continue
        counts["released"] += 1
        if c.wrong is not None:
            counts["labelled"] += 1
            counts["wrong"] += c.wrong
    return counts


def test_every_point_equals_a_brute_force_count_of_the_hand_made_decisions() -> None:
    found = advice.advise(HAND_MADE, current_tau=0.80, target=0.2)
    assert [p.tau for p in found.points] == list(advice.GRID)  # 0.80 is on the grid already
    for point in found.points:
        want = oracle(HAND_MADE, point.tau)
        assert point.decisions == len(HAND_MADE)
        assert point.gates["auto"] + point.gates["flagged"] == want["released"], point.tau
        assert point.sent_to_people == want["required"], point.tau
        assert point.gates["blocked"] == want["blocked"], point.tau
        assert point.reviewed_released == want["labelled"], point.tau
        assert point.reviewed_wrong == want["wrong"], point.tau
        assert point.human_share == pytest.approx(want["required"] / len(HAND_MADE))
    assert (found.reviewed, found.reviewed_wrong) == (8, 3)
    assert not found.enough_reviews  # 8 < 30: the page says so


def test_the_advised_tau_is_the_first_that_keeps_wrong_releases_within_the_target() -> None:
    # given a target of 20%: at tau <= 0.55 both wrong answers of A and C are released with
    # five right ones (2/7 = 29%); just above 0.55 only C's is (1/6 = 17%)
    found = advice.advise(HAND_MADE, current_tau=0.80, target=0.2)
    assert found.advised is not None
    assert found.advised.tau == 0.56
    assert (found.advised.reviewed_wrong, found.advised.reviewed_released) == (1, 6)
    assert found.advised.sent_to_people == 3  # A, the weak one and the disputed one
    # and the current tau is on the curve: 0.78 and below are sent to people
    assert found.current.tau == 0.80
    assert found.current.sent_to_people == 8
    # and when every tau that releases a reviewed answer releases a wrong one (A, B, C: C is
    # wrong and the last to go), no tau meets a target of 0%
    strict = advice.advise(HAND_MADE[:3], current_tau=0.80, target=0.0)
    assert strict.advised is None


def test_a_tau_the_zone_policy_refuses_is_left_off_the_curve() -> None:
    # given a zone whose refusal floor is 0.6: tau below it would be an invalid policy
    high_floor = Thresholds(tau=0.8, floor=0.1, refusal_floor=0.6, delta=0.1)
    cases = [replace(c, thresholds=high_floor) for c in HAND_MADE]
    found = advice.advise(cases, current_tau=0.8)
    assert min(p.tau for p in found.points) == 0.6
    assert found.skipped == tuple(t for t in advice.GRID if t < 0.6)


def test_a_zone_beneath_with_its_own_tau_keeps_it() -> None:
    pinned = Case(
        score=StoredScore(0.7, [0.9]),
        thresholds=replace(ZONE, tau=0.95),
        wrong=True,
        follows_tau=False,
    )
    found = advice.advise([pinned], current_tau=0.8)
    assert {p.sent_to_people for p in found.points} == {1}  # 0.7 < 0.95 at every tau


def test_the_break_even_is_the_papers_section_8_4() -> None:
    # the paper's figures: (0.71 * 0.50 + 0.29 * 5.00) / 2400 = 1.805 / 2400 = 0.0752%
    costs = Costs(hallucination=2400.0, requery=0.5, abandon=5.0, p_requery=0.71)
    assert costs.break_even == pytest.approx(0.000752, abs=1e-6)
    # with a correct answer worth 3.00: 4.805 / 2403 = 0.19996%, the paper's "about 0.2%"
    worth = replace(costs, correct=-3.0)
    assert worth.break_even == pytest.approx(0.002, abs=1e-6)
    # a correct answer's cost counts in E[respond] at each tau: 0.001*2400 + 0.999*(-3)
    assert advice.economics(0.001, worth).respond_cost == pytest.approx(2.4 - 2.997)
    assert not advice.economics(0.001, worth).refuse
    assert advice.economics(0.001, costs).refuse


def test_the_refusal_economics_follow_section_8_4() -> None:
    # given the paper's enterprise figures: C_h 2,400, C_rq 0.50, C_abandon 5.00, P_rq 0.71
    costs = Costs(hallucination=2400.0, requery=0.5, abandon=5.0, p_requery=0.71)
    found = advice.advise(HAND_MADE, current_tau=0.80, target=0.2, costs=costs)
    refuse = 0.71 * 0.5 + 0.29 * 5.0
    assert costs.refuse_cost == pytest.approx(refuse)
    assert costs.break_even == pytest.approx(refuse / 2400.0)
    advised = found.advised
    assert advised is not None
    assert advised.economics is not None
    assert advised.economics.p_hallucination == pytest.approx(1 / 6)
    assert advised.economics.respond_cost == pytest.approx(2400.0 / 6)
    assert advised.economics.refuse_cost == pytest.approx(refuse)
    assert advised.economics.refuse  # one wrong answer in six costs far more than refusing
    # where no labelled answer is released there is no hallucination rate, so no economics
    assert all(p.economics is None for p in found.points if p.reviewed_released == 0)


def test_a_bad_target_or_tau_is_refused() -> None:
    with pytest.raises(ValueError, match="target"):
        advice.advise(HAND_MADE, current_tau=0.8, target=1.5)
    with pytest.raises(ValueError, match="current_tau"):
        advice.advise(HAND_MADE, current_tau=float("nan"))


# --- properties ------------------------------------------------------------------------------

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@st.composite
def zones(draw: st.DrawFn) -> tuple[Thresholds, list[Case]]:
    refusal_floor = draw(st.floats(min_value=0.0, max_value=0.6))
    delta = draw(st.floats(min_value=0.0, max_value=0.3))
    tau = draw(st.floats(min_value=max(refusal_floor, 2 * delta), max_value=1.0))
    zone = Thresholds(tau, draw(st.floats(0.0, 1 / 3)), refusal_floor, delta)
    cases = []
    for _ in range(draw(st.integers(0, 25))):
        score = StoredScore(
            draw(unit),
            draw(st.lists(unit, max_size=4)),
            draw(st.booleans()),
            draw(st.booleans()),
        )
        follows = draw(st.booleans())
        thresholds = zone if follows else replace(zone, tau=draw(st.floats(tau, 1.0)))
        wrong = draw(st.sampled_from([None, True, False]))
        cases.append(Case(score, thresholds, wrong, follows))
    return zone, cases


@settings(max_examples=150, deadline=None)
@given(zones(), unit)
def test_the_curve_holds_its_properties(
    drawn: tuple[Thresholds, list[Case]], target: float
) -> None:
    zone, cases = drawn
    found = advice.advise(cases, current_tau=zone.tau, target=target)
    points = found.points
    assert [p.tau for p in points] == sorted(p.tau for p in points)
    for p in points:
        for share in (p.human_share, p.wrong_auto_share):
            assert share is None or 0.0 <= share <= 1.0
        assert sum(p.gates.values()) == p.decisions == len(cases)
        assert p.reviewed_wrong <= p.reviewed_released <= found.reviewed
    # a higher tau never sends fewer answers to people
    humans = [p.sent_to_people for p in points]
    assert humans == sorted(humans)
    meeting = [p for p in points if p.meets(target)]
    if found.advised is None:
        assert meeting == []
    else:
        assert found.advised.meets(target)
        assert found.advised.wrong_auto_share is not None
        assert found.advised.wrong_auto_share <= target
        smallest = min(p.sent_to_people for p in meeting)
        assert found.advised.sent_to_people == smallest
        assert found.advised.tau == min(p.tau for p in meeting if p.sent_to_people == smallest)


@settings(max_examples=150, deadline=None)
@given(zones())
def test_replaying_by_halves_gives_the_gate_of_every_tau(
    drawn: tuple[Thresholds, list[Case]],
) -> None:
    zone, cases = drawn
    taus = sorted({*advice.GRID, zone.tau})
    taus = [t for t in taus if zone.admits(t)]
    for c in cases:
        want = [
            replay_gate(c.score, replace(c.thresholds, tau=t) if c.follows_tau else c.thresholds)
            for t in taus
        ]
        assert advice.gates_over(c, taus) == want
