"""The per-zone calibration's math (evidence.calibration): pure, no database."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence import calibration
from evidence.calibration import Calibration

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
maps = st.builds(
    lambda a, b: Calibration(params={"a": a, "b": b}, n=100),
    st.floats(min_value=0.0, max_value=20.0),
    st.floats(min_value=-10.0, max_value=10.0),
)


def distorted(n: int, a: float, b: float, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Verdicts whose truth is sigmoid(a*logit(p)+b) of the engine's p: a known distortion."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, n)
    truth = calibration.apply_all(Calibration(params={"a": a, "b": b}, n=0), p)
    return p, rng.uniform(size=n) < truth


@given(maps, unit)
def test_a_calibrated_probability_is_a_probability(fitted: Calibration, p: float) -> None:
    assert 0.0 <= calibration.apply(fitted, p) <= 1.0


@given(maps, unit, unit)
def test_a_higher_probability_is_never_calibrated_lower(
    fitted: Calibration, p: float, q: float
) -> None:
    low, high = sorted((p, q))
    assert calibration.apply(fitted, low) <= calibration.apply(fitted, high)


@given(unit)
def test_without_a_calibration_the_global_probability_stands(p: float) -> None:
    assert calibration.apply(None, p) == p
    assert calibration.apply(calibration.IDENTITY, p) == p


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(unit, st.booleans()), max_size=calibration.MIN_VERDICTS - 1),
)
def test_fewer_verdicts_than_the_minimum_leave_the_global_model(
    verdicts: list[tuple[float, bool]],
) -> None:
    fitted = calibration.fit([p for p, _ in verdicts], [y for _, y in verdicts])
    assert fitted.is_identity
    assert fitted.n == len(verdicts)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(unit, st.booleans()), min_size=50, max_size=300))
def test_any_fit_is_monotone_and_stays_in_bounds(verdicts: list[tuple[float, bool]]) -> None:
    fitted = calibration.fit([p for p, _ in verdicts], [y for _, y in verdicts])
    assert fitted.a >= 0.0  # never reverses the order of two claims
    grid = calibration.apply_all(fitted, np.linspace(0.0, 1.0, 101))
    assert np.all(np.diff(grid) >= 0.0)
    assert np.all((grid >= 0.0) & (grid <= 1.0))


def test_a_fit_recovers_a_known_distortion_and_is_more_reliable() -> None:
    # given reviewers who find claims supported less often than the engine says (a=0.5, b=-1)
    p, y = distorted(8000, 0.5, -1.0)
    # when a calibration is fitted on them
    fitted = calibration.fit(p, y)
    # then it finds the distortion, and the calibrated probabilities match the verdicts better
    assert fitted.a == pytest.approx(0.5, abs=0.08)
    assert fitted.b == pytest.approx(-1.0, abs=0.12)
    p2, y2 = distorted(2000, 0.5, -1.0, seed=11)  # verdicts it never saw
    before = calibration.reliability(p2, y2)
    after = calibration.reliability(calibration.apply_all(fitted, p2), y2)
    assert after.brier is not None
    assert before.brier is not None
    assert after.brier < before.brier
    assert after.log_loss is not None
    assert before.log_loss is not None
    assert after.log_loss < before.log_loss
    assert after.ece is not None
    assert before.ece is not None
    assert after.ece < before.ece / 2


def test_verdicts_that_agree_with_the_engine_leave_it_nearly_unchanged() -> None:
    p, y = distorted(3000, 1.0, 0.0)
    fitted = calibration.fit(p, y)
    assert fitted.a == pytest.approx(1.0, abs=0.12)
    assert fitted.b == pytest.approx(0.0, abs=0.12)


def test_the_prior_holds_a_small_zone_near_the_global_model() -> None:
    # given the same distortion, seen in 60 verdicts and in 6000
    few = calibration.fit(*distorted(60, 0.3, -2.0))
    many = calibration.fit(*distorted(6000, 0.3, -2.0))
    # then the few pull the map less far from the identity than the many
    assert abs(few.b) < abs(many.b)
    assert abs(few.a - 1.0) < abs(many.a - 1.0)


def test_reliability_matches_a_count_by_hand() -> None:
    p = [0.05, 0.15, 0.95, 1.0]
    y = [False, True, True, True]
    figures = calibration.reliability(p, y, bins=10)
    assert figures.n == 4
    assert figures.brier == pytest.approx((0.05**2 + 0.85**2 + 0.05**2 + 0.0) / 4)
    expected_loss = -(
        math.log(0.95) + math.log(0.15) + math.log(0.95) + math.log(1 - calibration.EPSILON)
    )
    assert figures.log_loss == pytest.approx(expected_loss / 4)
    # bins: [0, .1) holds 0.05 (rate 0); [.1, .2) holds 0.15 (rate 1); [.9, 1] holds 0.95 and 1
    counts = [b.count for b in figures.bins]
    assert counts == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert figures.ece == pytest.approx((0.05 + 0.85 + 2 * abs(0.975 - 1.0)) / 4)
    assert figures.bins[9].observed_rate == 1.0


def test_reliability_of_no_verdicts_is_empty_not_an_error() -> None:
    figures = calibration.reliability([], [])
    assert figures.n == 0
    assert figures.brier is None
    assert figures.ece is None
    assert len(figures.as_dict()["bins"]) == calibration.BINS


@pytest.mark.parametrize(
    ("probabilities", "labels"),
    [([0.5, float("nan")], [True, False]), ([1.5], [True]), ([0.5], [True, False]), ([0.5], [2])],
)
def test_bad_input_is_refused_with_a_clear_error(
    probabilities: list[float], labels: list[object]
) -> None:
    with pytest.raises(ValueError, match=r"probabilit|labels"):
        calibration.reliability(probabilities, labels)  # type: ignore[arg-type]


def test_the_latest_quarter_is_held_back() -> None:
    assert calibration.split_at(200) == 150
    assert calibration.split_at(2) == 1
    assert calibration.split_at(1) == 1
