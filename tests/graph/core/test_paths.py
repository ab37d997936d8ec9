from __future__ import annotations

import math
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.core.matrix import GraphIndex
from graph.core.paths import CausalGraph, EdgePattern, best_causal_path, causal_subgraph
from graph.core.types import EDGE_CODE, EdgeType

TYPES = [EdgeType.CAUSED_BY, EdgeType.DEPENDS_ON, EdgeType.APPROVED_BY]
LETTER = {EdgeType.CAUSED_BY: "c", EdgeType.DEPENDS_ON: "d", EdgeType.APPROVED_BY: "a"}
PATTERNS = [
    "caused_by* approved_by",
    "(caused_by|depends_on)+",
    "caused_by depends_on? approved_by",
    ".*",
    "depends_on* -> (approved_by|caused_by)",
]


def as_python_regex(pattern: str) -> re.Pattern[str]:
    """Independent oracle for the DFA: the same pattern over one letter per edge type."""
    text = pattern.replace("->", " ")
    for edge_type, letter in LETTER.items():
        text = text.replace(edge_type.value, letter)
    return re.compile(text.replace(" ", ""))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATTERNS), st.lists(st.sampled_from(TYPES), max_size=6))
def test_compiled_pattern_agrees_with_python_regex(pattern: str, sequence: list[EdgeType]):
    word = "".join(LETTER[t] for t in sequence)
    expected = as_python_regex(pattern).fullmatch(word) is not None
    assert EdgePattern.compile(pattern).matches(sequence) == expected


def test_unknown_edge_type_in_pattern_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown edge type"):
        EdgePattern.compile("caused_by* paid_by")


def random_typed_graph(rng: np.random.Generator, n: int, m: int):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    types = rng.choice(len(TYPES), m)
    weight = rng.uniform(0.05, 1.0, m)
    time = rng.integers(0, 6, m).astype(float)
    return src, dst, types, weight, time


def brute_force_best(src, dst, types, weight, time, s, t, pattern, max_length, simple):
    """Enumerate every walk (or simple path) from s of at most max_length edges."""
    regex = as_python_regex(pattern)
    best: tuple[float, list[int]] | None = None
    stack: list[tuple[int, float, list[int], list[int]]] = [(s, -math.inf, [], [s])]
    while stack:
        node, last, edges, nodes = stack.pop()
        word = "".join(LETTER[TYPES[types[e]]] for e in edges)
        if node == t and regex.fullmatch(word):
            value = math.prod(weight[e] for e in edges)
            if best is None or value > best[0]:
                best = (value, edges)
        if len(edges) == max_length:
            continue
        for e in np.flatnonzero(src == node).tolist():
            if time[e] >= last and not (simple and dst[e] in nodes):
                stack.append((dst[e], time[e], [*edges, e], [*nodes, dst[e]]))
    return best


def check_admissible(path, src, dst, types, time, s, t, pattern, max_length) -> None:
    assert path.nodes[0] == s
    assert path.nodes[-1] == t
    assert path.length <= max_length
    for i, e in enumerate(path.edges):
        assert (src[e], dst[e]) == (path.nodes[i], path.nodes[i + 1])
    assert all(time[a] <= time[b] for a, b in zip(path.edges, path.edges[1:], strict=False))
    assert EdgePattern.compile(pattern).matches([TYPES[types[e]] for e in path.edges])


def test_constrained_best_path_matches_brute_force_on_small_graphs() -> None:
    checked = 0
    for seed in range(150):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 9))
        src, dst, types, weight, time = random_typed_graph(rng, n, int(rng.integers(n, 3 * n)))
        graph = CausalGraph.from_arrays(src, dst, [TYPES[c] for c in types], weight, time)
        s, t = (int(v) for v in rng.integers(0, n, 2))
        pattern = PATTERNS[seed % len(PATTERNS)]
        max_length = int(rng.integers(1, 5))
        found = best_causal_path(graph, s, t, pattern, max_length=max_length)
        walks = brute_force_best(src, dst, types, weight, time, s, t, pattern, max_length, False)
        simple = brute_force_best(src, dst, types, weight, time, s, t, pattern, max_length, True)
        if walks is None:
            assert found is None
            continue
        assert found is not None
        checked += 1
        assert found.weight == pytest.approx(walks[0], rel=1e-12)
        check_admissible(found, src, dst, types, time, s, t, pattern, max_length)
        if simple is not None:
            assert found.weight >= simple[0] * (1 - 1e-12)
            if len(set(found.nodes)) == len(found.nodes):
                assert found.weight == pytest.approx(simple[0], rel=1e-12)
    assert checked > 40


def test_unconstrained_best_path_matches_networkx_dijkstra_on_minus_log_weights() -> None:
    for seed in range(25):
        rng = np.random.default_rng(seed)
        n, m = 60, 240
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        weight = rng.uniform(0.05, 1.0, m)
        graph = CausalGraph.from_arrays(src, dst, np.zeros(m, dtype=int), weight, n_nodes=n)
        oracle = nx.DiGraph()
        for a, b, w in zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True):
            if not oracle.has_edge(a, b) or oracle[a][b]["cost"] > -math.log(w):
                oracle.add_edge(a, b, cost=-math.log(w))
        s, t = 0, int(rng.integers(1, n))
        found = best_causal_path(graph, s, t, time_order="any")
        try:
            cost = nx.dijkstra_path_length(oracle, s, t, weight="cost")
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            assert found is None
            continue
        assert found is not None
        assert -math.log(found.weight) == pytest.approx(cost, rel=1e-12, abs=1e-12)


def test_seed_question_who_approved_the_decision_that_caused_the_overrun() -> None:
    # 0 overrun -caused_by-> 1 vendor selection -approved_by-> 2 planet authority;
    # a weaker route through a reference must not count as causal.
    src = [0, 1, 0, 3]
    dst = [1, 2, 3, 2]
    types = [EdgeType.CAUSED_BY, EdgeType.APPROVED_BY, EdgeType.REFERENCES, EdgeType.APPROVED_BY]
    graph = CausalGraph.from_arrays(src, dst, types, [0.9, 0.8, 1.0, 1.0], [3, 1, 3, 1])
    path = best_causal_path(graph, 0, 2, "caused_by* approved_by", time_order="non_increasing")
    assert path is not None
    assert path.nodes == [0, 1, 2]
    assert path.edge_types == [EdgeType.CAUSED_BY, EdgeType.APPROVED_BY]
    assert path.weight == pytest.approx(0.72)
    assert best_causal_path(graph, 0, 2, "caused_by* approved_by") is None  # time runs back


def brute_force_subgraph(src, dst, types, weight, time, outcome, allowed, min_weight, max_length):
    kept: set[int] = set()
    stack = [(outcome, math.inf, 1.0, 0)]
    while stack:
        node, last, value, length = stack.pop()
        if length == max_length:
            continue
        for e in np.flatnonzero(src == node).tolist():
            if types[e] in allowed and time[e] <= last and value * weight[e] >= min_weight:
                kept.add(e)
                stack.append((dst[e], time[e], value * weight[e], length + 1))
    return kept


def test_causal_subgraph_keeps_exactly_the_edges_on_strong_paths() -> None:
    allowed_types = [EdgeType.CAUSED_BY, EdgeType.DEPENDS_ON]
    allowed = {TYPES.index(t) for t in allowed_types}
    for seed in range(80):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 9))
        src, dst, types, weight, time = random_typed_graph(rng, n, int(rng.integers(n, 3 * n)))
        graph = CausalGraph.from_arrays(src, dst, [TYPES[c] for c in types], weight, time)
        min_weight, max_length = float(rng.uniform(0.05, 0.6)), int(rng.integers(1, 5))
        sub = causal_subgraph(
            graph, 0, edge_types=allowed_types, min_weight=min_weight, max_length=max_length
        )
        expected = brute_force_subgraph(
            src, dst, types, weight, time, 0, allowed, min_weight, max_length
        )
        assert set(sub.edges.tolist()) == expected
        assert sub.src.tolist() == src[sub.edges].tolist()
        assert set(sub.root_causes.tolist()).isdisjoint(sub.src.tolist())


def test_causal_subgraph_strength_is_the_best_path_weight() -> None:
    src, dst = [0, 0, 1, 2], [1, 2, 3, 3]
    types = [EdgeType.CAUSED_BY] * 4
    graph = CausalGraph.from_arrays(src, dst, types, [0.5, 0.9, 0.5, 0.9])
    sub = causal_subgraph(graph, 0, min_weight=0.3, time_order="any")
    assert dict(zip(sub.nodes.tolist(), sub.strength.tolist(), strict=True)) == pytest.approx(
        {0: 1.0, 1: 0.5, 2: 0.9, 3: 0.81}
    )
    assert sorted(sub.edges.tolist()) == [0, 1, 3]  # 1 -> 3 would give 0.25 < 0.3
    assert sub.root_causes.tolist() == [1, 3]


def test_edge_weights_outside_unit_interval_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        CausalGraph.from_arrays([0], [1], [EDGE_CODE[EdgeType.CAUSED_BY]], [1.5])


def test_a_repeat_pattern_accepts_only_its_own_types_in_one_state() -> None:
    causal = EdgePattern.repeat_of([EdgeType.CAUSED_BY, EdgeType.DEPENDS_ON])
    assert causal.n_states == 1
    assert causal.matches([])
    assert causal.matches([EdgeType.CAUSED_BY, EdgeType.DEPENDS_ON, EdgeType.CAUSED_BY])
    assert not causal.matches([EdgeType.CAUSED_BY, EdgeType.REFERENCES])
    anything = EdgePattern.any_sequence()
    assert anything.n_states == 1
    assert anything.matches([])
    assert anything.matches(list(EdgeType))


def test_causal_edge_weights_may_reach_one_but_not_zero() -> None:
    caused_by = EDGE_CODE[EdgeType.CAUSED_BY]
    assert CausalGraph.from_arrays([0], [1], [caused_by], [1.0]).n_nodes == 2
    with pytest.raises(ValueError, match=r"^causal edge weights must lie in \(0, 1\]$"):
        CausalGraph.from_arrays([0], [1], [caused_by], [0.0])


def test_a_causal_subgraph_threshold_lies_in_zero_to_one_and_defaults_to_a_tenth() -> None:
    # 0 <- 1 <- 2 by caused_by at 0.5 each: the path 0-1-2 has strength 0.25, above 0.1
    graph = CausalGraph.from_arrays([0, 1], [1, 2], [EdgeType.CAUSED_BY] * 2, [0.5, 0.5])
    assert sorted(causal_subgraph(graph, 0, time_order="any").edges.tolist()) == [0, 1]
    assert causal_subgraph(graph, 0, min_weight=1.0, time_order="any").edges.tolist() == []
    # a path exactly as strong as the threshold is kept
    exact = causal_subgraph(graph, 0, min_weight=0.25, time_order="any")
    assert sorted(exact.edges.tolist()) == [0, 1]
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match=r"^min_weight must lie in \(0, 1\]$"):
            causal_subgraph(graph, 0, min_weight=bad)
    with pytest.raises(ValueError, match=r"^unknown time order 'sideways'$"):
        causal_subgraph(graph, 0, time_order="sideways")  # type: ignore[arg-type]


def test_a_causal_graph_may_be_sized_for_nodes_without_edges() -> None:
    graph = CausalGraph.from_arrays([0], [1], [EdgeType.CAUSED_BY], [0.9], n_nodes=5)
    assert graph.n_nodes == 5
    assert causal_subgraph(graph, 4).edges.tolist() == []


def test_a_causal_graph_from_the_index_drops_weightless_edges_and_caps_weights_at_one() -> None:
    index = GraphIndex()
    index.add_node("outcome")
    index.add_edge("outcome", "cause", EdgeType.CAUSED_BY, base_weight=2.0, time=4.0)
    index.add_edge("outcome", "nothing", EdgeType.CAUSED_BY, confidence=0.0)
    index.add_node("lonely")
    graph = CausalGraph.from_edges(index.typed_edges())
    assert graph.n_nodes == 4
    assert graph.src_of_edge.tolist() == [index.row_of("outcome")]
    assert graph.dst_of_edge.tolist() == [index.row_of("cause")]
    assert graph.weight_of_edge.tolist() == [1.0]
    assert graph.type_of_edge.tolist() == [EDGE_CODE[EdgeType.CAUSED_BY]]
    assert graph.time.tolist() == [4.0]


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("caused_by $", r"^bad edge pattern 'caused_by \$' at 9$"),
        ("caused_by)", r"^bad edge pattern 'caused_by\)': unexpected '\)'$"),
        ("(caused_by", r"^bad edge pattern '\(caused_by': missing '\)'$"),
        ("caused_by|*", r"^bad edge pattern 'caused_by\|\*': unexpected '\*'$"),
    ],
)
def test_a_malformed_pattern_is_refused_saying_where(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EdgePattern.compile(pattern)


def test_a_pattern_keeps_its_source_and_separators_are_optional() -> None:
    written = "caused_by -> depends_on, caused_by  "
    compiled = EdgePattern.compile(written)
    assert compiled.source == written
    assert compiled.matches([EdgeType.CAUSED_BY, EdgeType.DEPENDS_ON, EdgeType.CAUSED_BY])
    assert EdgePattern.repeat_of([EdgeType.CAUSED_BY]).source == "repeat"
    assert EdgePattern.any_sequence().source == ".*"
