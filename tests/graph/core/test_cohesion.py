from __future__ import annotations

from itertools import combinations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from graph.core.cohesion import select_evidence, set_cohesion, structural_gaps


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(np.float64, (12, 12), elements=st.sampled_from([0.0, 0.0, 0.0, 1.0, 0.4, -0.5])),
    st.lists(st.integers(0, 11), max_size=15),
)
def test_set_cohesion_equals_dense_double_sum(dense: np.ndarray, nodes: list[int]) -> None:
    members = sorted(set(nodes))
    expected = dense[np.ix_(members, members)].sum() / len(members) ** 2 if members else 0.0
    assert abs(set_cohesion(sp.csr_array(dense), nodes) - expected) < 1e-12


def test_fully_linked_set_has_cohesion_one_minus_diagonal_share() -> None:
    dense = np.ones((4, 4)) - np.eye(4)
    assert set_cohesion(dense, [0, 1, 2, 3]) == 12 / 16


def test_greedy_without_cohesion_weight_is_top_k_relevance() -> None:
    rng = np.random.default_rng(0)
    dense = (rng.random((50, 50)) < 0.1).astype(float)
    relevance = rng.random(50)
    chosen = select_evidence(sp.csr_array(dense), relevance, 7, lam=0.0)
    assert chosen.nodes.tolist() == np.argsort(-relevance)[:7].tolist()


def objective(dense: np.ndarray, relevance: np.ndarray, members: list[int], k: int, lam: float):
    return relevance[members].sum() + lam / k**2 * dense[np.ix_(members, members)].sum()


def test_greedy_gains_are_exact_marginals_and_each_pick_is_the_best_one() -> None:
    for seed in range(20):
        rng = np.random.default_rng(seed)
        n, k, lam = 25, 6, float(rng.uniform(0, 40))
        dense = (rng.random((n, n)) < 0.15) * rng.random((n, n))
        relevance = rng.random(n)
        result = select_evidence(sp.csr_array(dense), relevance, k, lam)
        chosen: list[int] = []
        for node, gain in zip(result.nodes.tolist(), result.gains.tolist(), strict=True):
            marginals = {
                v: objective(dense, relevance, [*chosen, v], k, lam)
                - objective(dense, relevance, chosen, k, lam)
                for v in range(n)
                if v not in chosen
            }
            assert abs(gain - max(marginals.values())) < 1e-12
            assert abs(marginals[node] - gain) < 1e-12
            chosen.append(node)
        assert abs(result.objective - objective(dense, relevance, chosen, k, lam)) < 1e-12
        assert abs(result.cohesion - dense[np.ix_(chosen, chosen)].sum() / k**2) < 1e-12


def test_cohesion_weight_pulls_in_a_linked_node_over_a_slightly_more_relevant_loner() -> None:
    dense = np.zeros((4, 4))
    dense[0, 1] = dense[1, 0] = 1.0  # 0 and 1 are linked; 2 and 3 are loners
    relevance = np.array([1.0, 0.5, 0.55, 0.1])
    assert select_evidence(dense, relevance, 2, lam=0.0).nodes.tolist() == [0, 2]
    assert select_evidence(dense, relevance, 2, lam=1.0).nodes.tolist() == [0, 1]


def test_candidate_pool_restricts_the_choice() -> None:
    dense = np.ones((5, 5))
    chosen = select_evidence(dense, np.arange(5.0), 2, candidates=[0, 1, 2])
    assert sorted(chosen.nodes.tolist()) == [1, 2]


def test_structural_gaps_match_networkx_weak_components() -> None:
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n = 30
        dense = (rng.random((n, n)) < 0.06) * rng.choice([1.0, -1.0, 0.5], (n, n))
        members = sorted(rng.choice(n, 12, replace=False).tolist())
        graph = nx.DiGraph()
        graph.add_nodes_from(members)
        graph.add_edges_from((i, j) for i in members for j in members if dense[i, j] > 0)
        expected = {frozenset(c) for c in nx.weakly_connected_components(graph)}
        gaps = structural_gaps(sp.csr_array(dense), members)
        assert {frozenset(c.tolist()) for c in gaps.components} == expected
        assert gaps.gaps == list(combinations(range(len(expected)), 2))
        assert gaps.connected == (len(expected) == 1)


def test_a_chain_has_no_gap_and_two_islands_have_one() -> None:
    dense = np.zeros((4, 4))
    dense[0, 1] = dense[2, 3] = 1.0
    assert structural_gaps(dense, [0, 1]).connected
    split = structural_gaps(dense, [0, 1, 2, 3])
    assert [c.tolist() for c in split.components] == [[0, 1], [2, 3]]
    assert split.gaps == [(0, 1)]


def test_no_evidence_asked_for_selects_nothing() -> None:
    chosen = select_evidence(np.ones((3, 3)), [0.9, 0.5, 0.1], 0)
    assert chosen.nodes.tolist() == []
    assert chosen.objective == 0.0


def test_selection_refuses_a_negative_count_and_a_relevance_per_node_missing() -> None:
    with pytest.raises(ValueError, match=r"^k must be >= 0$"):
        select_evidence(np.ones((3, 3)), [0.9, 0.5, 0.1], -1)
    with pytest.raises(ValueError, match=r"^relevance needs one score per node$"):
        select_evidence(np.ones((3, 3)), [0.9, 0.5], 2)


def test_the_default_cohesion_weight_is_one() -> None:
    # F(S) = sum r + lam * (1/k^2) * sum A over S: the pair {0, 1} linked both ways, k = 2,
    # relevance 0.5 each, gives 1.0 + lam * 2/4, so 1.5 with the default lam = 1.
    dense = np.zeros((3, 3))
    dense[0, 1] = dense[1, 0] = 1.0
    chosen = select_evidence(dense, [0.5, 0.5, 0.1], 2)
    assert sorted(chosen.nodes.tolist()) == [0, 1]
    assert chosen.objective == pytest.approx(1.5)


def test_the_largest_piece_of_evidence_is_listed_first() -> None:
    dense = np.zeros((5, 5))
    dense[2, 3] = dense[3, 4] = 1.0  # a chain of three after a lone node 0 and a lone 1
    split = structural_gaps(dense, [0, 1, 2, 3, 4])
    assert [c.tolist() for c in split.components] == [[2, 3, 4], [0], [1]]
    assert split.gaps == [(0, 1), (0, 2), (1, 2)]


def test_one_node_is_connected_and_no_nodes_have_no_pieces() -> None:
    single = structural_gaps(np.zeros((2, 2)), [1])
    assert [c.tolist() for c in single.components] == [[1]]
    assert single.connected
    empty = structural_gaps(np.zeros((2, 2)), [])
    assert (empty.components, empty.gaps) == ([], [])
