"""Learning w1..w4 (seed 000 §4.5) and the requery model's k, s (§8.1): fits on data drawn
from known values find them again, and beat the untrained choice on held-back examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence import weights_fit
from evidence.dynamics import requery_probability

UNIFORM = (0.25, 0.25, 0.25, 0.25)


def _trail(weights: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n claims with uniform signals, each found supported with probability x.w."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=(n, 4))
    y = rng.uniform(size=n) < x @ weights
    return x, y


def _far_from_uniform(w: np.ndarray) -> bool:
    return float(np.abs(w - 0.25).sum()) >= 0.4


simplex = (
    st.lists(st.floats(0.05, 1.0), min_size=4, max_size=4)
    .map(lambda v: np.asarray(v) / sum(v))
    .filter(lambda w: bool(w.min() >= 0.0))
)


@settings(max_examples=25, deadline=None)
@given(true=simplex, seed=st.integers(0, 2**31 - 1))
def test_weights_fitted_on_verdicts_drawn_from_known_weights_recover_them(
    true: np.ndarray, seed: int
) -> None:
    # given 6000 verdicts whose chance of "supported" is the known weights' confidence
    x, y = _trail(true, 6000, seed)
    # when the weights are fitted, starting from the uniform ones
    fitted = np.asarray(weights_fit.fit_weights(x, y, UNIFORM))
    # then they are the known ones within sampling error, and a valid policy: >= 0, sum 1
    assert np.abs(fitted - true).max() < 0.12
    assert fitted.min() >= 0.0
    assert fitted.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(true=simplex.filter(_far_from_uniform), seed=st.integers(0, 2**31 - 1))
def test_fitted_weights_are_never_worse_than_uniform_on_held_back_verdicts(
    true: np.ndarray, seed: int
) -> None:
    x, y = _trail(true, 4000, seed)
    fit = weights_fit.weights_with_figures(x, y, UNIFORM)
    assert fit.fitted_on == 3000
    assert fit.after.n == fit.before.n == 1000
    assert fit.after.brier is not None
    assert fit.before.brier is not None
    assert fit.after.brier <= fit.before.brier
    assert fit.current == UNIFORM


def test_with_few_verdicts_the_fit_stays_near_the_current_weights() -> None:
    # Five verdicts that all say "coverage alone": the prior keeps the policy's weights in view.
    x = np.array([[0.0, 1.0, 0.0, 0.0]] * 3 + [[1.0, 0.0, 1.0, 1.0]] * 2)
    y = np.array([True, True, True, False, False])
    few = weights_fit.fit_weights(x, y, UNIFORM)
    many = weights_fit.fit_weights(np.repeat(x, 200, axis=0), np.repeat(y, 200), UNIFORM)
    assert many[1] > few[1] > 0.25
    assert min(few) > 0.0  # nothing driven to zero by five verdicts


def test_fitted_weights_are_rounded_as_a_policy_stores_them_and_still_sum_to_one() -> None:
    x, y = _trail(np.array([0.1, 0.6, 0.1, 0.2]), 500, 7)
    w = weights_fit.fit_weights(x, y, UNIFORM)
    assert all(round(v, weights_fit.DECIMALS) == v for v in w)
    assert sum(w) == pytest.approx(1.0, abs=1e-12)


def test_without_examples_the_current_weights_stand() -> None:
    assert weights_fit.fit_weights(np.zeros((0, 4)), [], (0.4, 0.3, 0.2, 0.1)) == (
        0.4,
        0.3,
        0.2,
        0.1,
    )


@pytest.mark.parametrize(
    ("signals", "labels", "current", "message"),
    [
        ([[0.1, 0.2, 0.3]], [True], UNIFORM, "four numbers"),
        ([[0.1, 0.2, 0.3, 1.5]], [True], UNIFORM, r"\[0, 1\]"),
        ([[0.1, 0.2, 0.3, 0.4]], [True, False], UNIFORM, "one per example"),
        ([[0.1, 0.2, 0.3, 0.4]], [True], (0.5, 0.5, 0.5, 0.5), "summing to 1"),
    ],
)
def test_bad_input_is_refused_by_name(
    signals: list[list[float]], labels: list[bool], current: tuple[float, ...], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        weights_fit.fit_weights(signals, labels, current)


def test_figures_are_brier_log_loss_and_accuracy() -> None:
    # p = 0.8 for a true and 0.4 for a false outcome: Brier (0.04 + 0.16)/2 = 0.1,
    # log loss -(ln 0.8 + ln 0.6)/2, both right at the 0.5 threshold.
    out = weights_fit.figures([0.8, 0.4], [True, False])
    assert out.brier == pytest.approx(0.1)
    assert out.log_loss == pytest.approx(-(np.log(0.8) + np.log(0.6)) / 2)
    assert out.accuracy == 1.0
    assert weights_fit.figures([], []).brier is None


# --- §8.1 requery model -------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(
    k=st.floats(3.0, 12.0),
    s=st.floats(0.3, 0.7),
    seed=st.integers(0, 2**31 - 1),
)
def test_the_requery_model_recovers_k_and_s_and_beats_the_constant_rate(
    k: float, s: float, seed: int
) -> None:
    # given 4000 refusals whose asker came back with the paper's logistic of 1 - S
    rng = np.random.default_rng(seed)
    sufficiency = rng.uniform(0.0, 1.0, 4000)
    came_back = rng.uniform(size=4000) < np.array(
        [requery_probability(v, steepness=k, midpoint=s) for v in sufficiency]
    )
    # when k and s are fitted
    fit = weights_fit.requery_with_figures(sufficiency, came_back)
    # then they are found again, and the curve predicts held-back refusals better than the rate
    assert fit.midpoint is not None
    assert fit.midpoint == pytest.approx(s, abs=0.08)
    assert fit.steepness == pytest.approx(k, rel=0.35)
    assert fit.model.log_loss is not None
    assert fit.constant.log_loss is not None
    assert fit.model.log_loss < fit.constant.log_loss


def test_a_requery_rate_that_does_not_depend_on_sufficiency_gets_a_flat_curve() -> None:
    rng = np.random.default_rng(5)
    sufficiency = rng.uniform(0.0, 1.0, 3000)
    came_back = rng.uniform(size=3000) < 0.3
    k, s, flat = weights_fit.fit_requery(sufficiency, came_back)
    curve = weights_fit.requery_curve(np.array([0.0, 1.0]), k, s, flat)
    assert abs(curve[0] - curve[1]) < 0.1
    assert curve == pytest.approx([0.3, 0.3], abs=0.06)


def test_the_curve_is_the_papers_logistic_of_insufficiency() -> None:
    # §8.1: P = 1/(1+e^(-k(x-s))), x = 1 - S; at S = 0.2, k = 10, s = 0.5: 1/(1+e^-3) = 0.9526
    assert weights_fit.requery_curve(0.2, 10.0, 0.5) == pytest.approx(0.952574, abs=1e-6)
    assert weights_fit.requery_curve(0.5, 10.0, 0.5) == pytest.approx(0.5)
