"""Seed 002 §9.4: the graph gate's cohesion threshold follows an exponential moving average
of how its answers fared after review. The paper states the behaviour, not numbers, so
these tests check that behaviour from the paper's medium-risk tau_c, 0.15 (§9.2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.core.adaptation import (
    TAU_CEILING,
    TAU_FLOOR,
    ThresholdState,
    adapt_cohesion_tau,
    adapted_cohesion_tau,
    ema,
)
from graph.core.gate import COHESION_TAU_BY_RISK

MEDIUM = COHESION_TAU_BY_RISK["medium"]


def test_answers_above_tau_more_and_more_often_wrong_raise_it() -> None:
    """§9.4: "when the system detects that answers above the current tau are increasingly
    inaccurate, it raises tau"."""
    start = ThresholdState(tau=MEDIUM)
    wrong_above = [(0.40, False)] * 5
    after = adapted_cohesion_tau(start, wrong_above)
    assert after.tau > MEDIUM
    assert after.error_above > 0.10


def test_answers_below_tau_consistently_right_after_review_lower_it() -> None:
    """§9.4: "when answers below tau are consistently correct after human review, tau
    falls" — consistently: a few right answers are not enough, a run of them is."""
    start = ThresholdState(tau=MEDIUM)
    assert adapted_cohesion_tau(start, [(0.05, True)] * 3).tau == pytest.approx(MEDIUM)
    after = adapted_cohesion_tau(start, [(0.05, True)] * 40)
    assert after.tau < MEDIUM


def test_answers_the_gate_judged_rightly_leave_tau_alone() -> None:
    """Right above tau, wrong below it: the gate did its job, nothing to adapt."""
    start = ThresholdState(tau=MEDIUM)
    stream = [(0.40, True), (0.05, False)] * 50
    assert adapted_cohesion_tau(start, stream).tau == pytest.approx(MEDIUM)


def test_tau_stays_between_the_papers_low_and_critical_levels() -> None:
    """§9.2: 0.05 for low risk, 0.50 for critical: adaptation moves within them."""
    start = ThresholdState(tau=MEDIUM)
    assert adapted_cohesion_tau(start, [(1.0, False)] * 500).tau == pytest.approx(0.50)
    assert adapted_cohesion_tau(start, [(0.0, True)] * 500).tau == pytest.approx(0.05)


def test_an_old_error_average_does_not_keep_pushing_tau_up() -> None:
    """Only the side a verdict falls on moves tau: once tau has risen past the wrong
    answers, verdicts below it do not raise it further on the strength of old errors."""
    risen = adapted_cohesion_tau(ThresholdState(tau=MEDIUM), [(0.17, False)] * 5)
    later = adapted_cohesion_tau(risen, [(0.10, False)] * 20)
    assert later.tau == pytest.approx(risen.tau)


def test_ema_weights_the_newest_observation_by_w() -> None:
    assert ema(0.0, 1.0, 0.1) == pytest.approx(0.1)
    assert ema(0.5, 0.0, 0.2) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="weight"):
        ema(0.0, 1.0, 0.0)


@given(
    st.floats(TAU_FLOOR, TAU_CEILING),
    st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), max_size=60),
)
def test_tau_is_always_within_bounds_and_moves_at_most_one_step_a_verdict(
    tau: float, stream: list[tuple[float, bool]]
) -> None:
    state = ThresholdState(tau=tau)
    for cohesion, correct in stream:
        after = adapt_cohesion_tau(state, cohesion, correct)
        assert TAU_FLOOR <= after.tau <= TAU_CEILING
        assert abs(after.tau - state.tau) <= 0.01 + 1e-12
        assert 0.0 <= after.error_above <= 1.0
        assert 0.0 <= after.agreement_below <= 1.0
        state = after


@given(st.floats(TAU_FLOOR, TAU_CEILING), st.floats(0.0, 1.0))
def test_a_wrong_answer_never_lowers_tau_and_a_right_one_never_raises_it(
    tau: float, cohesion: float
) -> None:
    for error, agreement in ((0.0, 0.0), (0.5, 0.95), (0.95, 0.5)):
        state = ThresholdState(tau=tau, error_above=error, agreement_below=agreement)
        assert adapt_cohesion_tau(state, cohesion, False).tau >= tau
        assert adapt_cohesion_tau(state, cohesion, True).tau <= tau


def test_an_answer_exactly_at_tau_was_let_through_and_counts_against_it() -> None:
    # the gate lets an answer whose cohesion equals tau_c through (graph_grade's >=), so its
    # verdict is one on the answers above, not on those held back
    state = adapt_cohesion_tau(ThresholdState(tau=MEDIUM), MEDIUM, False, weight=1.0)
    assert state.error_above == 1.0
    assert state.agreement_below == 0.0
    assert state.tau == pytest.approx(MEDIUM + 0.01)


def test_a_mark_is_passed_only_beyond_it_for_errors_and_at_it_for_agreement() -> None:
    # one wrong answer from a clean average at weight 0.1: the error average is exactly 0.1,
    # not more than the 10% allowed, so tau_c stays
    held = adapt_cohesion_tau(ThresholdState(tau=0.30), 0.40, False, weight=0.1)
    assert held.error_above == 0.1
    assert held.tau == 0.30
    # one right answer below at a 10% agreement mark: at the mark is enough, one step down
    lowered = adapt_cohesion_tau(
        ThresholdState(tau=0.30), 0.20, True, weight=0.1, min_agreement_below=0.1
    )
    assert lowered.agreement_below == 0.1
    assert lowered.tau == pytest.approx(0.29)


def test_the_weight_given_is_the_one_each_side_averages_with() -> None:
    above = adapt_cohesion_tau(ThresholdState(tau=0.3, error_above=0.5), 0.4, False, weight=0.5)
    assert above.error_above == 0.75
    below = adapt_cohesion_tau(ThresholdState(tau=0.3, agreement_below=0.5), 0.2, True, weight=0.5)
    assert below.agreement_below == 0.75
    # and a stream passes its options on to every verdict
    streamed = adapted_cohesion_tau(ThresholdState(tau=0.3), [(0.4, False)], weight=1.0)
    assert streamed.error_above == 1.0
    assert ema(0.2, 1.0, 1.0) == 1.0  # a weight of 1 keeps only the newest observation


def test_bad_settings_are_refused_by_name_and_the_edges_of_the_range_are_taken() -> None:
    with pytest.raises(ValueError, match=r"^cohesion must be finite, got nan$"):
        adapt_cohesion_tau(ThresholdState(tau=0.3), float("nan"), True)
    with pytest.raises(ValueError, match=r"^need 0 <= floor <= ceiling <= 1, got 0\.1, 1\.5$"):
        adapt_cohesion_tau(ThresholdState(tau=0.3), 0.4, True, floor=0.1, ceiling=1.5)
    with pytest.raises(ValueError, match=r"^weight must be in \(0, 1\], got 1\.5$"):
        ema(0.0, 1.0, 1.5)
    # floor 0, ceiling 1 and a floor equal to its ceiling (tau_c pinned) are all allowed
    assert adapt_cohesion_tau(ThresholdState(tau=0.0), 0.2, True, floor=0.0).tau == 0.0
    assert adapt_cohesion_tau(ThresholdState(tau=1.0), 1.0, False, ceiling=1.0, weight=1).tau == 1
    pinned = adapt_cohesion_tau(ThresholdState(tau=0.2), 0.4, False, floor=0.2, ceiling=0.2)
    assert pinned.tau == 0.2
