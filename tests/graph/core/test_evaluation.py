"""Seed 002 §11.3 (CPA, RC-F1) and §4.3 (gamma by grid search) as the paper defines them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.core.evaluation import (
    GAMMA_GRID,
    causal_path_accuracy,
    grid_search,
    position_weight,
    responsibility_chain_f1,
)

# §4.1's procurement chain: proposal (1) -> evaluation (2) -> approval (3) -> payment (4).
CHAIN_EDGES = [(1, 2), (2, 3), (3, 4)]


def test_flat_retrieval_of_the_papers_chain_shows_one_of_its_three_edges() -> None:
    """§4.1: flat RAG gets the proposal and perhaps the evaluation, but the chain needs three
    hops; the subgraph on nodes 1 and 2 holds one annotated edge of three."""
    assert causal_path_accuracy(CHAIN_EDGES, [(1, 2)]) == pytest.approx(1 / 3)
    assert causal_path_accuracy(CHAIN_EDGES, [*CHAIN_EDGES, (4, 9)]) == 1.0
    # direction matters: an edge read backwards is not the causal edge
    assert causal_path_accuracy(CHAIN_EDGES, [(2, 1), (3, 2)]) == 0.0


def test_a_query_without_an_annotated_path_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"^a causal query needs at least one annotated path edge$"
    ):
        causal_path_accuracy([], [(1, 2)])


edges = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=12)


@given(edges.filter(bool), edges, edges)
def test_cpa_is_a_fraction_that_never_falls_as_the_subgraph_grows(
    truth: list[tuple[int, int]], found: list[tuple[int, int]], more: list[tuple[int, int]]
) -> None:
    low = causal_path_accuracy(truth, found)
    assert 0.0 <= low <= 1.0
    assert causal_path_accuracy(truth, found + more) >= low


def test_rc_f1_weighs_the_nearest_actor_most() -> None:
    """§11.3: F1 over the chain's actors, nearer actors weigh more (w = 1/position).
    Chain: proposer, validator, approver, executor (§7.2)."""
    chain = ["proposer", "validator", "approver", "executor"]
    total = 1 + 1 / 2 + 1 / 3 + 1 / 4
    missed_nearest = responsibility_chain_f1(chain, ["validator", "approver", "executor"])
    missed_farthest = responsibility_chain_f1(chain, ["proposer", "validator", "approver"])
    assert missed_nearest.recall == pytest.approx((total - 1) / total)
    assert missed_farthest.recall == pytest.approx((total - 1 / 4) / total)
    assert missed_nearest.precision == missed_farthest.precision == 1.0
    assert missed_nearest.f1 < missed_farthest.f1
    assert responsibility_chain_f1(chain, chain).f1 == 1.0


def test_rc_f1_a_wrong_actor_named_first_costs_more_than_one_named_last() -> None:
    chain = ["proposer", "approver"]
    first = responsibility_chain_f1(chain, ["stranger", "proposer", "approver"])
    last = responsibility_chain_f1(chain, ["proposer", "approver", "stranger"])
    assert first.recall == last.recall == 1.0
    assert first.precision == pytest.approx((1 / 2 + 1 / 3) / (1 + 1 / 2 + 1 / 3))
    assert first.precision < last.precision


def test_rc_f1_with_a_constant_weight_is_the_set_f1() -> None:
    score = responsibility_chain_f1(["a", "b", "c", "d"], ["a", "b", "x"], weight=lambda _: 1.0)
    assert (score.precision, score.recall) == (pytest.approx(2 / 3), pytest.approx(1 / 2))
    assert score.f1 == pytest.approx(2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2))


def test_rc_f1_of_nothing_named_is_zero_and_an_empty_chain_is_refused() -> None:
    nothing = responsibility_chain_f1(["a"], [])
    assert (nothing.precision, nothing.recall, nothing.f1) == (0.0, 0.0, 0.0)
    assert responsibility_chain_f1(["a"], ["b"]).f1 == 0.0
    with pytest.raises(ValueError, match=r"^a responsibility chain needs at least one actor$"):
        responsibility_chain_f1([], ["a"])
    with pytest.raises(ValueError, match=r"^positions start at 1$"):
        position_weight(0)
    assert [position_weight(i) for i in (1, 2, 4)] == [1.0, 0.5, 0.25]


@given(
    st.lists(st.integers(0, 8), min_size=1, max_size=8),
    st.lists(st.integers(0, 8), max_size=8),
)
def test_rc_f1_stays_in_the_unit_interval_and_between_precision_and_recall(
    chain: list[int], predicted: list[int]
) -> None:
    score = responsibility_chain_f1(chain, predicted)
    for value in (score.precision, score.recall, score.f1):
        assert 0.0 <= value <= 1.0 + 1e-12
    assert min(score.precision, score.recall) - 1e-12 <= score.f1
    assert score.f1 <= max(score.precision, score.recall) + 1e-12


def test_the_gamma_grid_is_the_papers() -> None:
    """§4.3: [0.1, 0.9] in steps of 0.1."""
    assert GAMMA_GRID == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def test_grid_search_takes_the_best_value_and_the_lowest_of_a_tie() -> None:
    peak = grid_search(lambda g: -((g - 0.7) ** 2))
    assert peak.best == 0.7
    assert [g for g, _ in peak.scores] == list(GAMMA_GRID)
    plateau = grid_search(lambda g: min(g, 0.5))
    assert plateau.best == 0.5
    assert grid_search(lambda g: 1.0, (0.5, 0.3, 0.9)).best == 0.3  # in any grid order
    with pytest.raises(ValueError, match=r"^the grid is empty$"):
        grid_search(lambda g: g, ())
