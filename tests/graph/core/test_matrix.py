from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from graph.core.matrix import GraphIndex, as_csr, symmetric_graph
from graph.core.types import EDGE_TYPES, EdgeType, edge_code

STALE = 0.5


def dense_from_model(model: dict, rows: dict, n: int) -> np.ndarray:
    """Independent oracle: the adjacency written out from a plain dict of edges."""
    dense = np.zeros((n, n))
    for (src, dst, _), (base, confidence, stale) in model.items():
        dense[rows[src], rows[dst]] += base * confidence * (STALE if stale else 1.0)
    return dense


def random_operations(index: GraphIndex, rng: np.random.Generator, steps: int, query_every: int):
    model: dict[tuple[str, str, EdgeType], tuple[float, float, bool]] = {}
    names = [f"n{i}" for i in range(12)]
    for step in range(steps):
        op = rng.integers(0, 10)
        src, dst = rng.choice(names, 2)
        edge_type = EDGE_TYPES[rng.integers(0, 3)]
        key = (str(src), str(dst), edge_type)
        if op < 5:
            base, confidence = float(rng.uniform(0.1, 2)), float(rng.uniform(0.1, 1))
            index.add_edge(src, dst, edge_type, base_weight=base, confidence=confidence)
            model[key] = (base, confidence, False)
        elif op < 7 and model:
            victim = list(model)[rng.integers(0, len(model))]
            assert index.remove_edge(*victim)
            del model[victim]
        elif op < 8 and model:
            victim = list(model)[rng.integers(0, len(model))]
            index.mark_stale(*victim)
            model[victim] = (model[victim][0], model[victim][1], True)
        elif op < 9 and model:
            victim = list(model)[rng.integers(0, len(model))]
            confidence = float(rng.uniform(0, 1))
            index.set_confidence(*victim, confidence)
            model[victim] = (model[victim][0], confidence, model[victim][2])
        elif str(src) in index:
            index.remove_node(str(src))
            model = {k: v for k, v in model.items() if str(src) not in (k[0], k[1])}
        if query_every and step % query_every == 0:
            index.adjacency  # noqa: B018 - forces the lazy patch path between changes
    return model


@pytest.mark.parametrize("query_every", [0, 1, 3])
def test_incremental_updates_match_dense_oracle_and_rebuild(query_every: int) -> None:
    for seed in range(15):
        rng = np.random.default_rng(seed)
        index = GraphIndex(stale_factor=STALE)
        model = random_operations(index, rng, steps=120, query_every=query_every)
        rows = {node: row for row, node in enumerate(index.node_ids) if node is not None}
        got = index.adjacency
        np.testing.assert_allclose(
            got.toarray(), dense_from_model(model, rows, index.n_rows), rtol=1e-12, atol=1e-15
        )
        assert got.has_canonical_format
        assert np.all(got.data != 0)
        live = list(model)
        rebuilt = GraphIndex.from_edges(
            [k[0] for k in live],
            [k[1] for k in live],
            [model[k][0] for k in live],
            confidence=[model[k][1] for k in live],
            stale=[model[k][2] for k in live],
            edge_type=[k[2] for k in live],
            node_ids=index.node_ids,
            stale_factor=STALE,
        )
        np.testing.assert_allclose(got.toarray(), rebuilt.adjacency.toarray(), rtol=1e-12)
        np.testing.assert_array_equal(got.indices, rebuilt.adjacency.indices)
        np.testing.assert_array_equal(got.indptr, rebuilt.adjacency.indptr)


def test_patching_a_few_edges_does_not_rebuild_the_matrix() -> None:
    rng = np.random.default_rng(0)
    src, dst = rng.integers(0, 500, 5000), rng.integers(0, 500, 5000)
    index = GraphIndex.from_edges(src, dst, rng.random(5000))
    before = index.full_rebuilds
    held = index.adjacency
    held_copy = held.toarray()
    index.add_edge(1, 2, EdgeType.CAUSED_BY, base_weight=0.7)
    index.add_edge(3, 4, EdgeType.APPROVED_BY, base_weight=0.2)
    after = index.adjacency
    assert index.full_rebuilds == before
    assert after[1, 2] == pytest.approx(held_copy[1, 2] + 0.7)
    np.testing.assert_array_equal(held.toarray(), held_copy)  # a returned matrix never changes


def test_stale_edge_is_down_weighted_not_deleted() -> None:
    index = GraphIndex(stale_factor=0.25)
    index.add_edge("a", "b", EdgeType.CAUSED_BY, base_weight=0.8, confidence=0.5)
    index.mark_stale("a", "b", EdgeType.CAUSED_BY)
    assert index.adjacency[0, 1] == pytest.approx(0.8 * 0.5 * 0.25)
    assert index.n_edges == 1


def test_weights_of_several_edge_types_between_a_pair_add_up() -> None:
    index = GraphIndex()
    index.add_edge("a", "b", EdgeType.CAUSED_BY, base_weight=0.5)
    index.add_edge("a", "b", EdgeType.REFERENCES, base_weight=0.25)
    assert index.adjacency[0, 1] == pytest.approx(0.75)
    assert index.edge_weight("a", "b", EdgeType.REFERENCES) == pytest.approx(0.25)


def test_bulk_build_keeps_the_last_duplicate() -> None:
    index = GraphIndex.from_edges(["a", "a"], ["b", "b"], [1.0, 3.0])
    assert index.adjacency.toarray().tolist() == [[0.0, 3.0], [0.0, 0.0]]


def test_removed_node_leaves_an_empty_row_and_other_rows_stay() -> None:
    index = GraphIndex()
    index.add_edge("a", "b")
    index.add_edge("b", "c", base_weight=2.0)
    index.remove_node("a")
    assert index.row_of("c") == 2
    assert index.id_of(0) is None
    assert index.adjacency.toarray().tolist() == [[0, 0, 0], [0, 0, 2.0], [0, 0, 0]]


def test_symmetric_graph_normalises_by_total_degree_and_zeroes_isolated_nodes() -> None:
    dense = np.array([[0, 2.0, 0], [1.0, 0, 0], [0, 0, 0]])
    graph = symmetric_graph(dense)
    sym = dense + dense.T
    degree = sym.sum(axis=1)
    expected = np.zeros((3, 3))
    expected[:2, :2] = sym[:2, :2] / np.sqrt(np.outer(degree[:2], degree[:2]))
    np.testing.assert_allclose(graph.ahat.toarray(), expected)
    assert graph.inv_sqrt_degree[2] == 0.0


def test_typed_edges_carry_effective_weights_and_times() -> None:
    index = GraphIndex(stale_factor=0.5)
    index.add_edge("a", "b", EdgeType.CAUSED_BY, base_weight=0.8, confidence=0.5, time=3.0)
    index.add_edge("b", "c", EdgeType.APPROVED_BY, time=5.0)
    index.mark_stale("b", "c", EdgeType.APPROVED_BY)
    edges = index.typed_edges()
    assert edges.weight.tolist() == [0.4, 0.5]
    assert edges.time.tolist() == [3.0, 5.0]
    assert [EDGE_TYPES[c] for c in edges.edge_type] == [EdgeType.CAUSED_BY, EdgeType.APPROVED_BY]


def test_an_edge_type_code_outside_the_vocabulary_is_refused() -> None:
    last = len(EDGE_TYPES) - 1
    assert edge_code(last) == last
    assert edge_code(EDGE_TYPES[last].value) == last
    with pytest.raises(ValueError, match=rf"^unknown edge type code {last + 1}$"):
        edge_code(last + 1)
    with pytest.raises(ValueError, match=r"^unknown edge type code -1$"):
        edge_code(-1)


@pytest.mark.parametrize(
    "given",
    [
        [[0, 2], [1, 0]],  # a dense integer matrix
        sp.coo_array(np.array([[0, 2], [1, 0]])),  # another sparse format
        sp.csr_array(np.array([[0, 2], [1, 0]])),  # CSR, but integer
    ],
)
def test_any_adjacency_is_read_as_a_float_csr_with_its_weights(given: object) -> None:
    csr = as_csr(given)  # type: ignore[arg-type]
    assert isinstance(csr, sp.csr_array)
    assert csr.dtype == np.float64
    assert csr.toarray().tolist() == [[0.0, 2.0], [1.0, 0.0]]


def test_a_repeated_entry_is_summed_once() -> None:
    # two stored entries for (0, 1), as a hand-built CSR may carry
    repeated = sp.csr_array(
        (np.array([0.5, 0.25]), np.array([1, 1]), np.array([0, 2, 2])), shape=(2, 2)
    )
    csr = as_csr(repeated)
    assert csr.nnz == 1
    assert csr.has_canonical_format
    assert csr[0, 1] == pytest.approx(0.75)


def test_a_non_square_adjacency_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^adjacency must be square, got \(2, 3\)$"):
        as_csr(np.zeros((2, 3)))


def test_an_edge_removed_without_its_type_is_the_default_one() -> None:
    index = GraphIndex()
    index.add_edge("a", "b")
    index.add_edge("a", "b", EdgeType.REFERENCES, confidence=0.5)
    assert index.remove_edge("a", "b")
    assert index.edge_weight("a", "b", 0) == 0.0  # gone, and an absent edge weighs nothing
    assert index.edge_weight("a", "b", EdgeType.REFERENCES) == 0.5
    assert not index.remove_edge("a", "b")  # nothing left of that type to remove
    assert not index.remove_edge("a", "zzz")


def test_typed_edges_name_their_rows_and_the_graph_size() -> None:
    index = GraphIndex()
    index.add_node("lonely")
    index.add_edge("a", "b")
    edges = index.typed_edges()
    rows = (index.row_of("a"), index.row_of("b"))
    assert (edges.src.tolist(), edges.dst.tolist()) == ([rows[0]], [rows[1]])
    assert edges.n_nodes == 3


def test_changing_an_edge_that_is_not_there_names_it() -> None:
    index = GraphIndex()
    index.add_edge("a", "b")
    with pytest.raises(KeyError) as missing:
        index.set_confidence("a", "b", EdgeType.REFERENCES, 0.5)
    assert missing.value.args == (("a", "b", "references"),)


def test_a_bulk_build_without_weights_gives_whole_fresh_edges_of_the_first_type() -> None:
    edges = GraphIndex.from_edges(["a", "b"], ["b", "c"]).typed_edges()
    assert edges.weight.tolist() == [1.0, 1.0]
    assert edges.time.tolist() == [0.0, 0.0]
    assert [EDGE_TYPES[c] for c in edges.edge_type] == [EDGE_TYPES[0]] * 2


def test_a_bulk_build_keeps_each_edges_type_time_and_last_weight() -> None:
    index = GraphIndex.from_edges(
        ["a", "a", "a"],
        ["b", "b", "b"],
        [0.3, 0.9, 0.6],
        edge_type=[EdgeType.CAUSED_BY, EdgeType.CAUSED_BY, EdgeType.REFERENCES],
        time=[1.0, 2.0, 7.0],
    )
    assert index.edge_weight("a", "b", EdgeType.CAUSED_BY) == 0.9  # the later duplicate
    assert index.edge_weight("a", "b", EdgeType.REFERENCES) == 0.6
    edges = index.typed_edges()
    assert sorted(zip(edges.time.tolist(), edges.weight.tolist(), strict=True)) == [
        (2.0, 0.9),
        (7.0, 0.6),
    ]


def test_a_graph_past_the_key_layout_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import graph.core.matrix as matrix

    monkeypatch.setattr(matrix, "_MAX_ROWS", 2)  # 2^28 rows would take gigabytes to build
    with pytest.raises(ValueError, match=r"^too many nodes for the edge key layout$"):
        GraphIndex.from_edges(["a", "b"], ["b", "c"])
    index = GraphIndex()
    index.add_edge("a", "b")  # rows 0 and 1 fit
    with pytest.raises(ValueError, match=r"^too many nodes for the edge key layout$"):
        index.add_node("c")


def test_a_node_without_edges_keeps_its_row_in_a_bulk_build() -> None:
    index = GraphIndex.from_edges(["a"], ["b"], node_ids=["a", "b", "lonely"])
    assert index.adjacency.shape == (3, 3)


def test_only_a_bulk_build_or_a_large_change_rebuilds_the_whole_matrix() -> None:
    index = GraphIndex.from_edges(["a"], ["b"])
    assert index.full_rebuilds == 1
    for k in range(300):  # more touched pairs than a patch handles
        index.add_edge(f"n{k}", f"n{k + 1}")
    assert index.adjacency.nnz == 301
    assert index.full_rebuilds == 2


def test_an_edge_added_without_type_or_time_is_of_the_first_type_at_time_zero() -> None:
    index = GraphIndex()
    index.add_edge("a", "b")
    edges = index.typed_edges()
    assert [EDGE_TYPES[c] for c in edges.edge_type] == [EDGE_TYPES[0]]
    assert edges.time.tolist() == [0.0]


def test_the_cached_views_follow_every_change() -> None:
    index = GraphIndex()
    index.add_edge("a", "b", confidence=0.5)
    assert index.transposed().toarray().tolist() == [[0.0, 0.0], [0.5, 0.0]]
    assert index.symmetric().sym.toarray().tolist() == [[0.0, 0.5], [0.5, 0.0]]
    index.add_edge("b", "c")
    assert len(index.typed_edges()) == 2
    assert index.transposed().toarray().tolist() == [
        [0.0, 0.0, 0.0],
        [0.5, 0.0, 0.0],
        [0.0, 1.0, 0.0],
    ]
    assert index.symmetric().degree.tolist() == [0.5, 1.5, 1.0]


def test_a_stale_edge_may_keep_all_or_none_of_its_weight_but_no_more() -> None:
    for factor in (0.0, 1.0):
        index = GraphIndex(stale_factor=factor)
        index.add_edge("a", "b")
        index.mark_stale("a", "b", 0)
        assert index.edge_weight("a", "b", 0) == factor
    with pytest.raises(ValueError, match=r"^stale_factor must lie in \[0, 1\]$"):
        GraphIndex(stale_factor=1.5)


def test_an_empty_index_has_empty_views() -> None:
    index = GraphIndex()
    assert index.transposed().shape == (0, 0)
    assert index.symmetric().n_nodes == 0


@pytest.mark.parametrize(
    ("edges", "patched", "rebuilt"),
    [
        (300, 256, 257),  # a small graph: up to 256 changed pairs are patched in place
        (32 * 400, 400, 401),  # a large one: up to 1/32 of its stored entries
    ],
)
def test_a_change_is_patched_up_to_its_bound_and_rebuilt_past_it(
    edges: int, patched: int, rebuilt: int
) -> None:
    # The bound is what keeps a live graph's writes cheap (bench_graph_db counts the rebuilds):
    # a batch of changes up to it costs a patch of the touched entries, never a whole rebuild.
    for changes, rebuilds in ((patched, 1), (rebuilt, 2)):
        index = GraphIndex.from_edges(
            [f"s{k}" for k in range(edges)], [f"d{k}" for k in range(edges)]
        )
        assert index.adjacency.nnz == edges
        for k in range(changes):
            index.set_confidence(f"s{k}", f"d{k}", 0, 0.5)
        assert index.adjacency.nnz == edges
        assert index.full_rebuilds == rebuilds, (edges, changes)
