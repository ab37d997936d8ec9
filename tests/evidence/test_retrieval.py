from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from evidence.embeddings import HashingEmbedder, l2_normalise
from evidence.retrieval import (
    BM25Index,
    DenseIndex,
    Ranked,
    fuse,
    hybrid_search,
    min_max,
    top_k_indices,
)
from evidence.text import tokenize

PARAGRAPHS = {
    "p-ja-budget": "予算の承認は取締役会が行う。承認後に予算を執行する。",
    "p-ja-contract": "契約の締結には法務部の事前確認が必要である。",
    "p-ja-payment": "支払いは請求書の受領後30日以内に行う。",
    "p-en-budget": "The annual budget must be approved by the board before spending.",
    "p-en-contract": "Contracts above 10 million yen require legal review.",
    "p-en-travel": "Travel expenses are reimbursed within two weeks of the claim.",
    "p-en-minutes": "The minutes record that the board discussed the budget in March.",
}
IDS = list(PARAGRAPHS)
TEXTS = list(PARAGRAPHS.values())


def brute_force_bm25(
    corpus: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75
) -> np.ndarray:
    """Lucene BM25 straight from its definition, one document at a time."""
    n = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n
    df = Counter(t for d in corpus for t in set(d))
    scores = np.zeros(n)
    for j, doc in enumerate(corpus):
        tf = Counter(doc)
        for term in query:  # a repeated query term counts again, as in bm25s
            if tf[term] == 0:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            scores[j] += idf * tf[term] / (tf[term] + k1 * (1 - b + b * len(doc) / avgdl))
    return scores


def expected_top_k(scores: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[int]:
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    return [i for i in order if (allowed is None or allowed[i])][:k]


# --- top_k_indices ----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(np.float32, st.integers(0, 60), elements=st.integers(-3, 3).map(float)),
    st.integers(0, 70),
)
def test_top_k_indices_equals_stable_full_sort_even_with_ties(scores: np.ndarray, k: int) -> None:
    assert top_k_indices(scores, k).tolist() == expected_top_k(scores, k)


# --- BM25 -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bm25() -> BM25Index:
    return BM25Index(IDS, TEXTS)


@pytest.mark.parametrize(
    "query", ["予算の承認", "budget approved by the board", "契約 legal review", "30日以内"]
)
def test_bm25_scores_equal_brute_force_lucene_bm25(bm25: BM25Index, query: str) -> None:
    expected = brute_force_bm25([tokenize(t) for t in TEXTS], tokenize(query))

    np.testing.assert_allclose(bm25.scores(query), expected, rtol=1e-5, atol=1e-6)
    hits = bm25.search(query, k=3)
    assert hits.ids == [IDS[i] for i in expected_top_k(expected, 3) if expected[i] > 0]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30), st.data())
def test_bm25_search_ranks_like_brute_force_among_matching_docs(
    k: int, data: st.DataObject
) -> None:
    # A small vocabulary makes most paragraphs match, a large one few: both selection paths.
    n_vocab = data.draw(st.sampled_from([4, 12, 80]))
    vocabulary = st.sampled_from([f"t{i}" for i in range(n_vocab)])
    corpus = data.draw(st.lists(st.lists(vocabulary, max_size=15), min_size=1, max_size=40))
    query = data.draw(st.lists(vocabulary, min_size=1, max_size=5))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(corpus), max_size=len(corpus))))
    index = BM25Index(list(range(len(corpus))), tokens=corpus)
    expected = brute_force_bm25(corpus, query)

    hits = index.search_tokens(query, k, mask=mask)

    matching = (expected > 0) & mask
    wanted = expected_top_k(expected, k, allowed=matching)
    found = np.array(hits.ids, dtype=int)
    # The same number of distinct, allowed paragraphs whose true scores are the top k's. The
    # index scores in float32: two paragraphs whose scores differ only past its precision
    # (2 of 2 words against 6 of 12) may come in either order, so ids alone are not compared.
    assert len(set(hits.ids)) == len(hits.ids) == len(wanted)
    assert matching[found].all()
    np.testing.assert_allclose(expected[found], expected[np.array(wanted, dtype=int)], rtol=1e-5)
    np.testing.assert_allclose(hits.scores, expected[found], rtol=1e-5)


def test_bm25_japanese_query_retrieves_japanese_paragraph(bm25: BM25Index) -> None:
    hits = bm25.search("予算を承認するのは誰か")

    assert hits.ids[0] == "p-ja-budget"


def test_bm25_returns_only_paragraphs_sharing_a_term(bm25: BM25Index) -> None:
    hits = bm25.search("travel claim", k=15)

    assert hits.ids == ["p-en-travel"]
    assert (hits.scores > 0).all()


def test_bm25_unknown_or_empty_query_finds_nothing(bm25: BM25Index) -> None:
    assert len(bm25.search("xylophone quasar")) == 0
    assert len(bm25.search("")) == 0


def test_bm25_mask_excludes_superseded_paragraphs(bm25: BM25Index) -> None:
    assert bm25.search("board budget").ids[0] == "p-en-budget"
    mask = np.array([pid != "p-en-budget" for pid in IDS])

    hits = bm25.search("board budget", mask=mask)

    assert hits.ids == ["p-en-minutes"]  # the other budget paragraph still answers


def test_bm25_rejects_a_mask_of_the_wrong_shape(bm25: BM25Index) -> None:
    with pytest.raises(ValueError, match="mask"):
        bm25.search("予算", mask=np.ones(3, dtype=bool))


def test_bm25_empty_index_finds_nothing() -> None:
    assert len(BM25Index([], []).search("予算")) == 0


def test_bm25_refuses_variants_that_score_non_matching_paragraphs() -> None:
    with pytest.raises(ValueError, match="method"):
        BM25Index(IDS, TEXTS, method="bm25+")


def test_bm25_needs_as_many_texts_as_ids() -> None:
    with pytest.raises(ValueError, match="ids"):
        BM25Index(["a", "b"], ["only one"])


# --- BM25 that grows without a rebuild -------------------------------------------------


@st.composite
def growing_corpus(draw: st.DrawFn) -> tuple[list[list[str]], list[int]]:
    """Paragraphs of a small vocabulary, and where the base ends and each later batch ends."""
    n_vocab = draw(st.sampled_from([3, 10, 40]))
    vocabulary = st.sampled_from([f"t{i}" for i in range(n_vocab)])
    corpus = draw(st.lists(st.lists(vocabulary, max_size=12), min_size=1, max_size=30))
    cuts = sorted(draw(st.lists(st.integers(0, len(corpus)), min_size=1, max_size=3)))
    return corpus, cuts


def grown_index(corpus: list[list[str]], cuts: list[int], method: str = "lucene") -> BM25Index:
    """Built on corpus[:cuts[0]], then grown batch by batch up to the whole corpus."""
    bounds = [*cuts, len(corpus)]
    index = BM25Index(list(range(bounds[0])), tokens=corpus[: bounds[0]], method=method)
    for start, end in itertools.pairwise(bounds):
        index = index.added(list(range(start, end)), tokens=corpus[start:end])
    return index


@settings(max_examples=150, deadline=None)
@given(
    growing_corpus(), st.lists(st.sampled_from(["t0", "t1", "t2", "t5", "t9", "t33"]), max_size=4)
)
def test_added_paragraphs_score_as_in_a_full_build_and_the_base_as_built(
    grown: tuple[list[list[str]], list[int]], query: list[str]
) -> None:
    # Given a base and the paragraphs added to it since
    corpus, cuts = grown
    index = grown_index(corpus, cuts)
    base = cuts[0]
    # When it scores a query
    scores = index.scores_for_tokens(query)
    # Then the added paragraphs score what BM25 over the whole corpus gives them, the base
    # what BM25 over the base gave them, and a rebuild gives every paragraph its full score
    np.testing.assert_allclose(
        scores[base:], brute_force_bm25(corpus, query)[base:], rtol=1e-5, atol=1e-6
    )
    if base:
        np.testing.assert_allclose(
            scores[:base], brute_force_bm25(corpus[:base], query), rtol=1e-5, atol=1e-6
        )
    rebuilt = index.rebuilt()
    assert rebuilt.ids == index.ids
    assert rebuilt.tail_size == 0
    np.testing.assert_allclose(
        rebuilt.scores_for_tokens(query), brute_force_bm25(corpus, query), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_added_paragraphs_score_as_bm25s_scores_them_in_every_variant(method: str) -> None:
    corpus = [tokenize(t) for t in TEXTS]
    full = BM25Index(IDS, tokens=corpus, method=method)
    grown = grown_index(corpus, [3, 5], method=method)
    for query in ("予算の承認", "budget approved by the board", "契約 legal review"):
        expected = full.scores(query)
        np.testing.assert_allclose(grown.scores(query)[3:], expected[3:], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grown.rebuilt().scores(query), expected, rtol=1e-5, atol=1e-6)


def test_added_paragraphs_are_found_and_masked_like_the_others(bm25: BM25Index) -> None:
    grown = bm25.added(["p-new"], ["Quarterly travel budgets are approved by the board."])

    assert "p-new" in grown.search("travel budget approved").ids
    assert "p-new" not in bm25.search("travel budget approved").ids  # the original is unchanged
    mask = np.array([pid != "p-new" for pid in grown.ids])
    assert "p-new" not in grown.search("travel budget approved", mask=mask).ids
    assert grown.search("quarterly").ids == ["p-new"]  # a term the base never saw


def test_an_index_refuses_a_paragraph_it_already_holds(bm25: BM25Index) -> None:
    with pytest.raises(ValueError, match="already indexed"):
        bm25.added(["p-en-budget"], ["Budget."])


def test_a_rebuilt_base_takes_over_with_what_was_added_meanwhile() -> None:
    # Given an index rebuilt from a snapshot, while two more paragraphs arrived
    corpus = [tokenize(t) for t in TEXTS]
    snapshot = grown_index(corpus[:4], [2])
    rebuilt = snapshot.rebuilt()
    later = snapshot.added(IDS[4:6], tokens=corpus[4:6])
    # When the rebuild is put under the later index
    rebased = later.rebased(rebuilt)
    # Then it holds the same paragraphs, scored as the rebuild grown by the newer ones
    assert rebased.ids == list(range(4)) + IDS[4:6]
    assert rebased.tail_size == 2
    expected = rebuilt.added(IDS[4:6], tokens=corpus[4:6])
    for query in ("予算の承認", "contracts legal review"):
        np.testing.assert_allclose(rebased.scores(query), expected.scores(query), rtol=1e-6)
    with pytest.raises(ValueError, match="rebuild"):
        rebuilt.rebased(later.rebuilt())  # not a prefix of it


# --- dense ------------------------------------------------------------------------------


def unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    return l2_normalise(np.random.default_rng(seed).normal(size=(n, dim)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.integers(0, 40), st.integers(0, 2**32 - 1), st.booleans())
def test_dense_top_k_equals_full_argsort(n: int, k: int, seed: int, masked: bool) -> None:
    vectors = unit_rows(n, 16, seed)
    rng = np.random.default_rng(seed + 1)
    query = rng.normal(size=16)
    mask = rng.random(n) < 0.5 if masked else None
    index = DenseIndex(list(range(n)), vectors)

    hits = index.search(query, k, mask=mask)

    cosines = vectors @ (query / np.linalg.norm(query))
    assert hits.ids == expected_top_k(cosines, k, allowed=mask)
    np.testing.assert_allclose(
        hits.scores, cosines[np.array(hits.ids, dtype=int)], rtol=1e-5, atol=1e-6
    )


def test_dense_mask_that_allows_nothing_finds_nothing() -> None:
    index = DenseIndex(["a", "b"], unit_rows(2, 4, 0))

    assert len(index.search(np.ones(4), mask=np.zeros(2, dtype=bool))) == 0


def test_dense_rejects_rows_that_are_not_unit_length() -> None:
    with pytest.raises(ValueError, match="L2-normalised"):
        DenseIndex(["a"], np.array([[3.0, 4.0]]))


def test_dense_rejects_a_query_of_another_dimension() -> None:
    index = DenseIndex(["a"], unit_rows(1, 4, 0))

    with pytest.raises(ValueError, match="dimensions"):
        index.search(np.ones(5))


def test_dense_zero_query_scores_zero_everywhere() -> None:
    index = DenseIndex(["a", "b"], unit_rows(2, 4, 0))

    assert not index.scores(np.zeros(4)).any()


# --- fusion -----------------------------------------------------------------------------


def test_min_max_maps_best_to_one_and_worst_to_zero() -> None:
    np.testing.assert_allclose(min_max(np.array([2.0, 4.0, 3.0])), [0.0, 1.0, 0.5])
    np.testing.assert_allclose(min_max(np.array([7.0, 7.0])), [1.0, 1.0])
    assert min_max(np.array([])).size == 0


def test_fuse_sums_weighted_normalised_scores_and_zero_for_a_missing_leg() -> None:
    dense = Ranked(["a", "b", "c"], np.array([0.9, 0.7, 0.5], dtype=np.float32))
    sparse = Ranked(["c", "d"], np.array([12.0, 4.0], dtype=np.float32))

    # the default weights, as DESIGN.md sets them: dense 0.7, BM25 0.3
    hits = {h.id: h for h in fuse(dense, sparse)}

    assert hits["a"].fused == pytest.approx(0.7 * 1.0)
    assert hits["b"].fused == pytest.approx(0.7 * 0.5)
    assert hits["c"].fused == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    assert hits["d"].fused == pytest.approx(0.0)
    assert (hits["d"].cosine, hits["d"].bm25) == (None, pytest.approx(4.0))
    assert (hits["a"].cosine, hits["a"].bm25) == (pytest.approx(0.9), None)
    assert [h.id for h in fuse(dense, sparse)] == ["a", "b", "c", "d"]


def test_fuse_lets_a_strong_sparse_match_overtake_when_weighted() -> None:
    dense = Ranked(["a", "b", "c"], np.array([0.80, 0.78, 0.40], dtype=np.float32))
    sparse = Ranked(["b"], np.array([9.0], dtype=np.float32))

    fused = fuse(dense, sparse, dense_weight=0.7, sparse_weight=0.3)
    dense_only = fuse(dense, sparse, dense_weight=1.0, sparse_weight=0.0)

    assert [h.id for h in fused] == ["b", "a", "c"]
    assert [h.id for h in dense_only] == ["a", "b", "c"]


def test_fuse_keeps_only_k() -> None:
    dense = Ranked(list(range(10)), np.linspace(1, 0, 10).astype(np.float32))
    sparse = Ranked(list(range(10, 20)), np.linspace(5, 1, 10).astype(np.float32))

    assert len(fuse(dense, sparse, k=4)) == 4


@pytest.mark.parametrize(("dense_weight", "sparse_weight"), [(-0.1, 1.0), (0.0, 0.0)])
def test_fuse_rejects_negative_or_all_zero_weights(
    dense_weight: float, sparse_weight: float
) -> None:
    empty = Ranked([], np.zeros(0, dtype=np.float32))

    with pytest.raises(ValueError, match="weights"):
        fuse(empty, empty, dense_weight=dense_weight, sparse_weight=sparse_weight)


ranked_scores = hnp.arrays(
    np.float32, st.integers(0, 20), elements=st.floats(-1, 1, width=32), unique=True
)


@st.composite
def two_legs(draw: st.DrawFn) -> tuple[Ranked, Ranked]:
    dense_scores = -np.sort(-draw(ranked_scores))
    sparse_scores = -np.sort(-draw(ranked_scores.map(np.abs)))
    pool = draw(st.permutations(list(range(40))))
    dense_ids = pool[: len(dense_scores)]
    # The sparse leg shares some ids with the dense one and brings some of its own.
    sparse_pool = draw(st.permutations(pool[:10] + pool[len(dense_scores) + 10 :]))
    return (
        Ranked(dense_ids, dense_scores),
        Ranked(sparse_pool[: len(sparse_scores)], sparse_scores),
    )


@settings(max_examples=200, deadline=None)
@given(two_legs(), st.integers(1, 40))
def test_fuse_with_zero_sparse_weight_keeps_the_dense_order(
    legs: tuple[Ranked, Ranked], k: int
) -> None:
    dense, sparse = legs

    hits = fuse(dense, sparse, dense_weight=1.0, sparse_weight=0.0, k=k)

    expected = dense.ids[:k]
    assert [h.id for h in hits[: len(expected)]] == expected


@settings(max_examples=200, deadline=None)
@given(two_legs(), st.integers(1, 40))
def test_fuse_with_zero_dense_weight_keeps_the_sparse_order(
    legs: tuple[Ranked, Ranked], k: int
) -> None:
    dense, sparse = legs

    hits = fuse(dense, sparse, dense_weight=0.0, sparse_weight=1.0, k=k)

    expected = sparse.ids[:k]
    assert [h.id for h in hits[: len(expected)]] == expected


@settings(max_examples=200, deadline=None)
@given(two_legs(), st.floats(0, 1), st.floats(0.01, 1))
def test_fused_score_is_the_weighted_sum_in_range(
    legs: tuple[Ranked, Ranked], dense_weight: float, sparse_weight: float
) -> None:
    dense, sparse = legs

    hits = fuse(dense, sparse, dense_weight=dense_weight, sparse_weight=sparse_weight, k=100)

    assert len(hits) == len(set(dense.ids) | set(sparse.ids))
    for hit in hits:
        assert 0.0 <= hit.dense <= 1.0
        assert 0.0 <= hit.sparse <= 1.0
        assert hit.fused == pytest.approx(dense_weight * hit.dense + sparse_weight * hit.sparse)


# --- hybrid_search ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture(scope="module")
def dense(embedder: HashingEmbedder) -> DenseIndex:
    return DenseIndex(IDS, embedder.embed(TEXTS))


def test_hybrid_japanese_query_puts_the_japanese_paragraph_first(
    embedder: HashingEmbedder, dense: DenseIndex, bm25: BM25Index
) -> None:
    query = "予算の承認"

    hits = hybrid_search(
        query, embedder.embed([query])[0], dense_index=dense, sparse_index=bm25, k=3
    )

    assert hits[0].id == "p-ja-budget"
    assert hits[0].fused == pytest.approx(1.0)  # best in both legs
    # Nothing else shares a term with the query: the rest trail far behind.
    assert all(h.fused < 0.5 for h in hits[1:])


def test_hybrid_mask_applies_to_both_legs(
    embedder: HashingEmbedder, dense: DenseIndex, bm25: BM25Index
) -> None:
    query = "budget approved by the board"
    out_of_scope = {"p-en-budget", "p-en-minutes"}
    mask = np.array([pid not in out_of_scope for pid in IDS])

    hits = hybrid_search(
        query, embedder.embed([query])[0], dense_index=dense, sparse_index=bm25, mask=mask, k=15
    )

    assert hits
    assert not out_of_scope & {h.id for h in hits}


def test_hybrid_refuses_indexes_over_different_paragraphs(
    embedder: HashingEmbedder, bm25: BM25Index
) -> None:
    other = DenseIndex(IDS[::-1], embedder.embed(TEXTS[::-1]))

    with pytest.raises(ValueError, match="same ids"):
        hybrid_search("予算", embedder.embed(["予算"])[0], dense_index=other, sparse_index=bm25)


def test_hybrid_refuses_fewer_candidates_than_k(
    embedder: HashingEmbedder, dense: DenseIndex, bm25: BM25Index
) -> None:
    with pytest.raises(ValueError, match="candidates"):
        hybrid_search(
            "予算",
            embedder.embed(["予算"])[0],
            dense_index=dense,
            sparse_index=bm25,
            k=10,
            candidates=5,
        )
