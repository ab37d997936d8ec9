from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest

from graph.core.paths import CausalGraph, causal_subgraph
from graph.core.risk import path_shares, risk_concentration, subgraph_risk
from graph.core.types import EdgeType


def random_dag(rng: np.random.Generator, n: int, p: float):
    order = rng.permutation(n)
    pairs = [
        (int(order[i]), int(order[j]))
        for i in range(n)
        for j in range(i + 1, n)
        if rng.random() < p
    ]
    return pairs


def test_path_shares_match_networkx_path_enumeration() -> None:
    for seed in range(40):
        rng = np.random.default_rng(seed)
        pairs = random_dag(rng, int(rng.integers(3, 10)), 0.35)
        if not pairs:
            continue
        pairs = pairs + pairs[:2]  # parallel edges count once
        graph = nx.DiGraph(pairs)
        sources = [v for v in graph if graph.in_degree(v) == 0]
        sinks = [v for v in graph if graph.out_degree(v) == 0]
        through: Counter[int] = Counter()
        total = 0
        for s in sources:
            for path in nx.all_simple_paths(graph, s, sinks):
                total += 1
                through.update(set(path))
        nodes, share, count = path_shares([a for a, _ in pairs], [b for _, b in pairs])
        assert count == total
        assert dict(zip(nodes.tolist(), share.tolist(), strict=True)) == pytest.approx(
            {v: through[v] / total for v in graph}
        )


def test_single_vendor_that_every_chain_passes_through_is_escalated() -> None:
    # three supply chains 0,1,2 -> vendor 3 -> outcomes 4,5 (docs/math.md §18: one vendor)
    src = [0, 1, 2, 3, 3, 0]
    dst = [3, 3, 3, 4, 5, 6]
    risk = risk_concentration(src, dst, threshold=0.6)
    assert risk.path_count == 7
    assert risk.share_of(3) == pytest.approx(6 / 7)
    assert risk.hotspots.tolist() == [3]


def test_cycle_is_rejected() -> None:
    with pytest.raises(ValueError, match="cycle"):
        path_shares([0, 1, 2], [1, 2, 0])


def test_subgraph_risk_excludes_the_outcome_itself() -> None:
    # outcome 0 caused by 1 and 2, both depending on 3
    src, dst = [0, 0, 1, 2], [1, 2, 3, 3]
    graph = CausalGraph.from_arrays(
        src, dst, [EdgeType.CAUSED_BY] * 2 + [EdgeType.DEPENDS_ON] * 2, [0.9] * 4
    )
    risk = subgraph_risk(causal_subgraph(graph, 0, min_weight=0.5), threshold=0.9)
    assert risk.share_of(0) == 1.0
    assert risk.hotspots.tolist() == [3]


def test_by_default_a_node_on_half_the_paths_is_a_hotspot_and_the_most_shared_comes_first() -> None:
    # two chains 0 -> 2 and 1 -> 2: node 2 is on both paths, nodes 0 and 1 on one each
    risk = risk_concentration([0, 1], [2, 2])
    assert risk.path_count == 2
    assert risk.hotspots.tolist() == [2, 0, 1]  # share 1.0, then the two at 0.5 in node order


def test_subgraph_risk_escalates_at_half_the_paths_by_default() -> None:
    # outcome 0 caused by 1 and 2, both depending on 3: 3 is on both chains, 1 and 2 on one
    src, dst = [0, 0, 1, 2], [1, 2, 3, 3]
    graph = CausalGraph.from_arrays(
        src, dst, [EdgeType.CAUSED_BY] * 2 + [EdgeType.DEPENDS_ON] * 2, [0.9] * 4
    )
    risk = subgraph_risk(causal_subgraph(graph, 0, min_weight=0.5))
    assert risk.hotspots.tolist() == [3, 1, 2]


def test_a_node_off_every_path_has_no_share() -> None:
    risk = risk_concentration([0, 2], [2, 5])
    assert risk.share_of(2) == 1.0
    assert risk.share_of(1) == 0.0  # between known nodes, on no path
    assert risk.share_of(9) == 0.0  # beyond every known node


def test_no_edges_means_no_paths() -> None:
    nodes, share, total = path_shares([], [])
    assert (nodes.size, share.size, total) == (0, 0, 0.0)
    assert risk_concentration([], []).hotspots.tolist() == []


def test_a_cycle_is_named_as_the_reason() -> None:
    with pytest.raises(
        ValueError, match=r"^the causal graph has a cycle: path shares are undefined$"
    ):
        path_shares([0, 1], [1, 0])
