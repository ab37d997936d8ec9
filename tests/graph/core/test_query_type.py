"""Seed 002 §8.5 (query type from the bimodality of cohesion) and §6.3 (method by type)."""

from __future__ import annotations

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
