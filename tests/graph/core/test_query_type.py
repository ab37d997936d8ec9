"""Seed 002 §8.5 (query type from the bimodality of cohesion) and §6.3 (method by type)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.core.query_type import (
    BIMODAL_BC,
    MIN_HISTORY,
    bimodality_coefficient,
    cohesion_split,
    method_for,
    query_type,
    two_mode_split,
)


def _papers_two_modes(seed: int = 0, each: int = 30) -> np.ndarray:
    """§8.5: causal questions' evidence above 0.3 (the paper's Graph RAG mean is 0.34),
    comparative ones' below 0.1 (flat top-k's 0.04, §12.2)."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(0.30, 0.42, each), rng.uniform(0.0, 0.09, each)])


def test_the_papers_two_modes_are_bimodal_and_split_between_01_and_03() -> None:
    scores = _papers_two_modes()
    assert bimodality_coefficient(scores) > BIMODAL_BC
    split = cohesion_split(scores)
    assert split.split is not None
    assert 0.09 < split.split < 0.30
    assert query_type(0.34, split.split) == "causal"
    assert query_type(0.04, split.split) == "comparative"


def test_one_mode_is_not_read_as_two() -> None:
    rng = np.random.default_rng(1)
    normal = rng.normal(0.2, 0.03, 400)
    assert bimodality_coefficient(normal) < BIMODAL_BC
    split = cohesion_split(normal)
    assert split.split is None
    assert split.bimodality is not None
    assert split.bimodality < BIMODAL_BC


def test_sarles_coefficient_of_known_shapes() -> None:
    # two equal spikes: skewness 0, excess kurtosis -2 in the limit, so BC -> 1
    spikes = np.repeat([0.05, 0.35], 500)
    assert bimodality_coefficient(spikes) == pytest.approx(1.0, abs=0.01)
    # a uniform: skewness 0, excess kurtosis -6/5, BC = 1/(9/5) = 5/9
    uniform = np.linspace(0.0, 1.0, 20_001)
    assert bimodality_coefficient(uniform) == pytest.approx(5 / 9, abs=1e-3)
    assert np.isnan(bimodality_coefficient([0.2] * 5))
    with pytest.raises(ValueError, match="at least 4"):
        bimodality_coefficient([0.1, 0.2, 0.3])


def test_too_short_a_history_has_no_split() -> None:
    scores = _papers_two_modes(each=MIN_HISTORY // 2)[1:]
    assert cohesion_split(scores).split is None
    assert cohesion_split(scores).history == MIN_HISTORY - 1
    assert cohesion_split(_papers_two_modes(each=MIN_HISTORY // 2)).split is not None


def test_method_follows_the_query_type() -> None:
    """§6.3: a causal chain by h-hop, an open-ended or comparative question by PPR."""
    assert method_for("causal") == "hop"
    assert method_for("comparative") == "ppr"
    assert query_type(0.2, 0.2) == "causal"


@given(st.lists(st.tuples(st.floats(0.0, 0.1), st.floats(0.3, 0.4)), min_size=2, max_size=30))
def test_two_separated_modes_of_equal_weight_are_split_between_them(
    pairs: list[tuple[float, float]],
) -> None:
    """§8.5's modes (below 0.1, above 0.3), as many questions of each kind."""
    low, high = [a for a, _ in pairs], [b for _, b in pairs]
    split = two_mode_split(low + high)
    assert max(low) <= split <= min(high)


def test_a_split_needs_two_distinct_values() -> None:
    with pytest.raises(ValueError, match="distinct"):
        two_mode_split([0.2, 0.2, 0.2])
    assert two_mode_split([0.1, 0.1, 0.5]) == pytest.approx(0.3)


def _sarle_by_hand(values: list[float]) -> float:
    """Sarle's coefficient from its definition (SAS): sample-adjusted skewness G1 and excess
    kurtosis G2 from the central moments m2, m3, m4."""
    n = len(values)
    mean = sum(values) / n
    m2, m3, m4 = (sum((v - mean) ** p for v in values) / n for p in (2, 3, 4))
    g1 = m3 / m2**1.5 * math.sqrt(n * (n - 1)) / (n - 2)
    g2 = ((n + 1) * (m4 / m2**2 - 3) + 6) * (n - 1) / ((n - 2) * (n - 3))
    return (g1**2 + 1) / (g2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


@pytest.mark.parametrize(
    "values",
    [
        [0.02, 0.05, 0.31, 0.33, 0.36, 0.04],
        [0.0, 0.1, 0.1, 0.9],  # four values: the fewest it is defined for
        [0.05, 0.3, 0.32, 0.35, 0.36, 0.38, 0.4],
    ],
)
def test_sarles_coefficient_of_small_samples_is_the_definitions(values: list[float]) -> None:
    assert bimodality_coefficient(values) == pytest.approx(_sarle_by_hand(values), rel=1e-12)


def test_sarles_coefficient_refuses_fewer_than_four_values_by_name() -> None:
    with pytest.raises(ValueError, match=r"^the bimodality coefficient needs at least 4 values$"):
        bimodality_coefficient([0.1, 0.2, 0.3])


def test_a_split_reports_what_it_was_read_from() -> None:
    scores = _papers_two_modes()
    split = cohesion_split(scores)
    assert split.bimodality == pytest.approx(bimodality_coefficient(scores))
    assert split.history == scores.size
    flat = cohesion_split([0.12] * MIN_HISTORY)  # no shape at all
    assert (flat.split, flat.bimodality, flat.history) == (None, None, MIN_HISTORY)
    normal = cohesion_split(np.random.default_rng(2).normal(0.2, 0.03, 50))
    assert normal.history == 50


@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=25).filter(lambda v: len(set(v)) > 1))
def test_the_split_leaves_the_least_spread_within_the_two_groups(values: list[float]) -> None:
    """Otsu's cut: no other cut between sorted values leaves less squared spread within."""
    ordered = sorted(values)

    def within(cut: float) -> float:
        low = [v for v in ordered if v < cut]
        high = [v for v in ordered if v >= cut]
        return sum(float(np.var(g)) * len(g) for g in (low, high) if g)

    split = two_mode_split(values)
    cuts = [(a + b) / 2 for a, b in itertools.pairwise(ordered) if a != b]
    assert within(split) <= min(within(c) for c in cuts) + 1e-9


def test_two_values_split_halfway_and_a_split_needs_them_distinct_by_name() -> None:
    assert two_mode_split([0.1, 0.5]) == pytest.approx(0.3)
    assert two_mode_split([0.1, 0.5, 0.5]) == pytest.approx(0.3)
    with pytest.raises(ValueError, match=r"^a split needs at least two distinct values$"):
        two_mode_split([0.4])
