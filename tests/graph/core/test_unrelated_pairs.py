"""The pairs of an evidence set with no relation either way: what an escalated graph answer
lists as missing (seed 002 §14.5)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from graph.core.cohesion import unrelated_pairs


def test_the_papers_chain_misses_three_of_its_six_pairs() -> None:
    # Seed 002 §4.1's chain 0 -> 1 -> 2 -> 3: the pairs two or three steps apart are unrelated.
    chain = sp.csr_array(np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], float))
    assert unrelated_pairs(chain, [3, 1, 0, 2]) == [(0, 2), (0, 3), (1, 3)]


def test_a_contradiction_relates_nothing_and_nodes_outside_the_set_are_ignored() -> None:
    a = np.zeros((4, 4))
    a[0, 1] = -0.5  # a contradicting entry
    a[2, 3] = 1.0  # an edge to a node outside S
    assert unrelated_pairs(sp.csr_array(a), [0, 1, 2]) == [(0, 1), (0, 2), (1, 2)]


@given(
    st.integers(2, 7).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.sampled_from([0.0, 0.0, 1.0, -1.0]), min_size=n, max_size=n),
                     min_size=n, max_size=n),
            st.sets(st.integers(0, n - 1), min_size=1),
        )
    )
)  # fmt: skip
def test_unrelated_pairs_are_exactly_the_pairs_with_no_positive_entry_either_way(
    case: tuple[list[list[float]], set[int]],
) -> None:
    matrix, members = case
    a = np.array(matrix)
    nodes = sorted(members)
    expected = [(i, j) for i in nodes for j in nodes if i < j and a[i, j] <= 0 and a[j, i] <= 0]
    assert unrelated_pairs(sp.csr_array(a), nodes) == expected
