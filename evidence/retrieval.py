"""Pure core of hybrid retrieval: BM25 (bm25s) and exact dense search, fused by weighted
min-max scores. Storage-backed legs (pgvector) plug into `fuse` with their own top-k lists.
And the scope rule they search under: documents at every level of the tree, inherited by
the zones beneath, the nearest level's title winning (`in_view`, `overrides`).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from evidence.text import tokenize

ParagraphId = Hashable
Mask = NDArray[np.bool_]

DEFAULT_K = 15
DEFAULT_DENSE_WEIGHT = 0.7
DEFAULT_SPARSE_WEIGHT = 0.3


@dataclass(frozen=True, slots=True)
class Ranked:
    """One leg's top-k: ids best first, with their raw scores (cosine or BM25)."""

    ids: Sequence[ParagraphId]
    scores: NDArray[np.float32]

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, slots=True)
class HybridHit:
    """A fused result. `dense` and `sparse` are the leg scores min-max normalised to [0, 1]
    (0 when the leg did not return the item), so `fused = w_d * dense + w_s * sparse`;
    `cosine` and `bm25` are the raw leg scores, None where the leg did not return it."""

    id: ParagraphId
    fused: float
    dense: float
    sparse: float
    cosine: float | None
    bm25: float | None


def top_k_indices(scores: NDArray[np.floating], k: int) -> NDArray[np.intp]:
    """Indices of the k largest scores, best first; ties go to the lower index."""
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return np.empty(0, dtype=np.intp)
    if k < n:
        # argpartition is O(n); only the k survivors are sorted.
        chosen = np.argpartition(-scores, k - 1)[:k]
        # Among exact ties at the k-th score argpartition picks arbitrarily: take the lowest
        # indices instead, so results do not depend on numpy's partition internals.
        kth = scores[chosen].min()
        if np.count_nonzero(scores == kth) > np.count_nonzero(scores[chosen] == kth):
            above = np.flatnonzero(scores > kth)
            tied = np.flatnonzero(scores == kth)[: k - above.size]
            chosen = np.concatenate([above, tied])
    else:
        chosen = np.arange(n)
    order = np.lexsort((chosen, -scores[chosen]))
    return chosen[order]


def ids_fingerprint(ids: Sequence[ParagraphId]) -> tuple[int, int]:
    """(len, hash) of the id sequence: lets two indexes prove cheaply they share row order."""
    return len(ids), hash(tuple(ids))


def _check_mask(mask: Mask | None, n: int) -> Mask | None:
    if mask is None:
        return None
    mask = np.asarray(mask)
    if mask.dtype != np.bool_ or mask.shape != (n,):
        raise ValueError(
            f"mask must be a boolean array of shape ({n},), got {mask.dtype} {mask.shape}"
        )
    return mask


# ---------------------------------------------------------------------------------------
# Sparse leg: BM25
# ---------------------------------------------------------------------------------------


# bm25s variants whose score is 0 for a paragraph without a query term, and never below.
_NON_NEGATIVE_METHODS = frozenset({"lucene", "robertson", "atire"})


def bm25_idf(df: NDArray[np.floating], n: int, method: str) -> NDArray[np.float64]:
    """idf as bm25s computes it: lucene ln(1 + (N - df + 0.5)/(df + 0.5)); robertson
    ln(max(1, (N - df + 0.5)/(df + 0.5))); atire ln(N / df)."""
    df = np.asarray(df, dtype=np.float64)
    if method == "atire":
        return np.log(n / np.maximum(df, 1.0))
    ratio = (n - df + 0.5) / (df + 0.5)
    return np.log1p(ratio) if method == "lucene" else np.log(np.maximum(ratio, 1.0))


def bm25_tfc(
    tf: NDArray[np.floating],
    length: NDArray[np.floating],
    avgdl: float,
    k1: float,
    b: float,
    method: str,
) -> NDArray[np.float64]:
    """Term-frequency part as bm25s computes it: tf / (tf + k1 (1 - b + b |d| / avgdl)),
    times (k1 + 1) for atire."""
    tf = np.asarray(tf, dtype=np.float64)
    tfc = tf / (tf + k1 * (1 - b + b * np.asarray(length, dtype=np.float64) / avgdl))
    return tfc * (k1 + 1) if method == "atire" else tfc


@dataclass(frozen=True, slots=True)
class _Segment:
    """Paragraphs as term ids: `tokens[offsets[i]:offsets[i + 1]]` is paragraph i."""

    tokens: NDArray[np.int32]
    offsets: NDArray[np.int64]

    @classmethod
    def of(cls, docs: Sequence[Sequence[int]]) -> _Segment:
        lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
        flat = np.fromiter(
            itertools.chain.from_iterable(docs), dtype=np.int32, count=int(lengths.sum())
        )
        return cls(flat, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> NDArray[np.int64]:
        return np.diff(self.offsets)

    def rows(self) -> NDArray[np.int64]:
        """The paragraph of every token."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths)

    def docs(self) -> list[list[int]]:
        flat = self.tokens.tolist()
        bounds = self.offsets.tolist()
        return [flat[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def document_frequencies(self, n_terms: int) -> NDArray[np.int64]:
        """df(t): how many paragraphs hold term t at least once."""
        pairs = np.unique(self.rows() * n_terms + self.tokens)
        return np.bincount(pairs % n_terms, minlength=n_terms)

    def __add__(self, other: _Segment) -> _Segment:
        return _Segment(
            np.concatenate([self.tokens, other.tokens]),
            np.concatenate([self.offsets, other.offsets[1:] + self.offsets[-1]]),
        )


class BM25Index:
    """BM25 over paragraphs, tokenised with `evidence.text.tokenize`, scored by bm25s.

    bm25s defaults: Lucene variant, k1=1.5, b=0.75, idf = ln(1 + (N - df + 0.5)/(df + 0.5)).
    Top-k is selected among the paragraphs that share a term with the query: bm25s's own
    `retrieve` argpartitions the whole score vector, which is slow on long runs of tied
    zeros (100k paragraphs, content-word queries: ~2.5 ms against ~0.1 ms here; see
    bench/bench_retrieval_core.py).

    Growing without a rebuild: `added` returns an index with more paragraphs in a small
    tail, scored by the same formula with N, df and the mean length counted over every
    paragraph (so a tail paragraph scores exactly as after a full rebuild), while the base,
    bm25s's precomputed matrix, keeps the statistics of its build. `rebuilt` folds the tail
    into a new base from the stored term ids, without tokenising again.
    """

    def __init__(
        self,
        ids: Sequence[ParagraphId],
        texts: Sequence[str] | None = None,
        *,
        tokens: Sequence[list[str]] | None = None,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        tokenizer: Callable[[str], list[str]] = tokenize,
    ) -> None:
        if method not in _NON_NEGATIVE_METHODS:
            # BM25L / BM25+ give non-matching paragraphs a score too; selection assumes 0.
            raise ValueError(f"BM25 method must be one of {sorted(_NON_NEGATIVE_METHODS)}")
        corpus = _tokenised(texts, tokens, tokenizer, len(ids))
        terms: dict[str, int] = {}
        docs = [[terms.setdefault(t, len(terms)) for t in doc] for doc in corpus]
        self._setup(list(ids), list(terms), _Segment.of(docs), k1, b, method, tokenizer)

    def _setup(
        self,
        ids: list[ParagraphId],
        terms: list[str],
        base: _Segment,
        k1: float,
        b: float,
        method: str,
        tokenizer: Callable[[str], list[str]],
    ) -> None:
        """Index `base` (paragraphs as ids into `terms`) with an empty tail."""
        self.k1, self.b, self.method = k1, b, method
        self._tokenize = tokenizer
        self._terms = terms  # term id -> term; never changed once built
        self._term_ids = {term: i for i, term in enumerate(terms)}
        self._base = base
        self._base_df = base.document_frequencies(len(terms))
        self._base_length = int(base.tokens.size)
        self.bm25 = bm25s.BM25(k1=k1, b=b, method=method)
        # bm25s cannot index a corpus without a single term (its average length would be 0).
        self._indexed = base.tokens.size > 0
        if self._indexed:
            vocabulary = dict(self._term_ids)  # bm25s keeps (and may extend) what it is given
            self.bm25.index(
                (base.docs(), vocabulary), create_empty_token=False, show_progress=False
            )
        self._set_tail(ids, [], _Segment.of([]))

    def _set_tail(self, ids: list[ParagraphId], new_terms: list[str], tail: _Segment) -> None:
        """The paragraphs after the base, with `new_terms` (terms the base lacks) numbered
        after the base's terms."""
        self.ids: list[ParagraphId] = ids
        self.ids_fingerprint = ids_fingerprint(ids)
        self._new_terms = new_terms
        self._new_term_ids = {t: len(self._terms) + i for i, t in enumerate(new_terms)}
        self._tail = tail
        n_terms = len(self._terms) + len(new_terms)
        self._tail_df = tail.document_frequencies(n_terms)
        # Tail term frequencies as a (terms x paragraphs) CSR: one row per query term.
        self._tail_tf = sp.csr_matrix(
            (np.ones(tail.tokens.size, dtype=np.float32), (tail.tokens, tail.rows())),
            shape=(n_terms, len(tail)),
        )
        self._tail_tf.sum_duplicates()

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def tail_size(self) -> int:
        """Paragraphs added since the last full build."""
        return len(self._tail)

    def _term_id(self, term: str) -> int | None:
        found = self._term_ids.get(term)
        return found if found is not None else self._new_term_ids.get(term)

    def added(
        self,
        ids: Sequence[ParagraphId],
        texts: Sequence[str] | None = None,
        *,
        tokens: Sequence[list[str]] | None = None,
    ) -> BM25Index:
        """This index with more paragraphs after its own (ids never seen before); the base is
        shared, only the tail is indexed again. This index is left as it was."""
        corpus = _tokenised(texts, tokens, self._tokenize, len(ids))
        clash = set(ids) & set(self.ids)
        if clash:
            raise ValueError(f"paragraphs already indexed: {sorted(map(str, clash))[:5]}")
        new_terms = list(self._new_terms)
        known = dict(self._new_term_ids)
        docs = []
        for doc in corpus:
            row = []
            for term in doc:
                term_id = self._term_ids.get(term)
                if term_id is None:
                    term_id = known.get(term)
                if term_id is None:
                    term_id = known[term] = len(self._terms) + len(new_terms)
                    new_terms.append(term)
                row.append(term_id)
            docs.append(row)
        grown = copy.copy(self)
        grown._set_tail(self.ids + list(ids), new_terms, self._tail + _Segment.of(docs))
        return grown

    def rebuilt(self) -> BM25Index:
        """The same paragraphs in the same order, all in a freshly built base (exact BM25)."""
        fresh = object.__new__(BM25Index)
        fresh._setup(
            list(self.ids),
            self._terms + self._new_terms,
            self._base + self._tail,
            self.k1,
            self.b,
            self.method,
            self._tokenize,
        )
        return fresh

    def rebased(self, base: BM25Index) -> BM25Index:
        """This index on top of `base`, a rebuild of its first len(base) paragraphs: what
        this index holds beyond them becomes the tail of the result."""
        n = len(base)
        if base.tail_size or self.ids[:n] != base.ids:
            raise ValueError("the base must be a rebuild of this index's first paragraphs")
        skip = n - len(self._base)
        if skip < 0:
            raise ValueError("the base is older than this index's own base")
        rest = self._tail.docs()[skip:]
        vocabulary = self._terms + self._new_terms
        return base.added(self.ids[n:], tokens=[[vocabulary[t] for t in doc] for doc in rest])

    def scores(self, query: str) -> NDArray[np.float32]:
        """BM25(q, d) = sum_{t in q} idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl)), all d."""
        return self.scores_for_tokens(self._tokenize(query))

    def scores_for_tokens(self, query_tokens: Sequence[str]) -> NDArray[np.float32]:
        """BM25 score of every paragraph for an already tokenised query."""
        # Terms outside the vocabulary score nothing. A repeated query term counts again.
        term_ids = [i for i in map(self._term_id, query_tokens) if i is not None]
        n_base = len(self._base)
        base_ids = [i for i in term_ids if i < len(self._terms)]
        if self._indexed and base_ids:
            base = np.asarray(self.bm25.get_scores_from_ids(base_ids), dtype=np.float32)
        else:
            base = np.zeros(n_base, dtype=np.float32)
        if not self.tail_size:
            return base
        return np.concatenate([base, self._tail_scores(term_ids)])

    def _tail_scores(self, term_ids: list[int]) -> NDArray[np.float32]:
        """The tail's scores with N, df and avgdl over base and tail together."""
        scores = np.zeros(self.tail_size, dtype=np.float64)
        if not term_ids:
            return scores.astype(np.float32)
        n = len(self.ids)
        avgdl = (self._base_length + self._tail.tokens.size) / n
        lengths = self._tail.lengths
        for term_id in term_ids:
            start, end = self._tail_tf.indptr[term_id], self._tail_tf.indptr[term_id + 1]
            if start == end:
                continue
            rows = self._tail_tf.indices[start:end]
            base_df = self._base_df[term_id] if term_id < len(self._terms) else 0
            idf = bm25_idf(np.asarray([base_df + self._tail_df[term_id]]), n, self.method)[0]
            tfc = bm25_tfc(
                self._tail_tf.data[start:end], lengths[rows], avgdl, self.k1, self.b, self.method
            )
            scores[rows] += idf * tfc
        return scores.astype(np.float32)

    def search(self, query: str, k: int = DEFAULT_K, *, mask: Mask | None = None) -> Ranked:
        """Top-k paragraphs by BM25 among those allowed by `mask`; no match, no result."""
        return self.search_tokens(self._tokenize(query), k, mask=mask)

    def search_tokens(
        self, query_tokens: Sequence[str], k: int = DEFAULT_K, *, mask: Mask | None = None
    ) -> Ranked:
        """`search` for an already tokenised query."""
        mask = _check_mask(mask, len(self.ids))
        scores = self.scores_for_tokens(query_tokens)
        # Lucene idf is positive, so a score > 0 means "shares a term": only those compete.
        matched = scores > 0 if mask is None else (scores > 0) & mask
        n_matched = int(np.count_nonzero(matched))
        if n_matched * 4 < len(self.ids):
            # Few matches (the usual case): select among them, never among the tied zeros.
            candidates = np.flatnonzero(matched)
            best = candidates[top_k_indices(scores[candidates], k)]
        else:
            # Most paragraphs match (a very common term): one pass beats compacting. Scores
            # are >= 0, so unmatched paragraphs (0) only need hiding when a mask is given.
            ranked = scores if mask is None else np.where(matched, scores, -np.inf)
            best = top_k_indices(ranked, min(k, n_matched))
        return Ranked([self.ids[i] for i in best], scores[best])


def _tokenised(
    texts: Sequence[str] | None,
    tokens: Sequence[list[str]] | None,
    tokenizer: Callable[[str], list[str]],
    n: int,
) -> list[list[str]]:
    if (texts is None) == (tokens is None):
        raise ValueError("give either texts or pre-tokenised tokens")
    corpus = [tokenizer(t) for t in texts] if texts is not None else [list(t) for t in tokens or ()]
    if len(corpus) != n:
        raise ValueError(f"{n} ids but {len(corpus)} texts")
    return corpus


# ---------------------------------------------------------------------------------------
# Dense leg: exact inner product
# ---------------------------------------------------------------------------------------


class DenseIndex:
    """Exact cosine search over a float32 matrix of unit rows (cosine = dot product)."""

    def __init__(self, ids: Sequence[ParagraphId], vectors: NDArray[np.floating]) -> None:
        matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"expected {len(ids)} vectors as rows, got shape {matrix.shape}")
        norms = np.linalg.norm(matrix, axis=1)
        # Zero rows are allowed (a paragraph with no features); anything else must be unit.
        if not np.all((np.abs(norms - 1.0) < 1e-3) | (norms == 0.0)):
            raise ValueError("vectors must be L2-normalised rows (see embeddings.l2_normalise)")
        self.ids: list[ParagraphId] = list(ids)
        self.ids_fingerprint = ids_fingerprint(self.ids)
        self.vectors = matrix

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def scores(self, query_vector: NDArray[np.floating]) -> NDArray[np.float32]:
        """cos(q, v_i) = v_i . q / ||q|| for every row (rows are unit)."""
        query = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim:
            raise ValueError(f"query has {query.shape[0]} dimensions, index has {self.dim}")
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return np.zeros(len(self.ids), dtype=np.float32)
        scores: NDArray[np.float32] = self.vectors @ (query / np.float32(norm))
        return scores

    def search(
        self, query_vector: NDArray[np.floating], k: int = DEFAULT_K, *, mask: Mask | None = None
    ) -> Ranked:
        """Top-k rows by cosine among those allowed by `mask`."""
        mask = _check_mask(mask, len(self.ids))
        scores = self.scores(query_vector)
        if mask is None:
            best = top_k_indices(scores, k)
        else:
            allowed = np.flatnonzero(mask)
            best = allowed[top_k_indices(scores[allowed], k)]
        return Ranked([self.ids[i] for i in best], scores[best])


# ---------------------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------------------


def min_max(scores: NDArray[np.floating]) -> NDArray[np.float64]:
    """(s - min s) / (max s - min s) over the candidates; all ones when they are all equal."""
    values = np.asarray(scores, dtype=np.float64)
    if values.size == 0:
        return values
    low, high = float(values.min()), float(values.max())
    if high == low:
        # One candidate, or all tied: each is as good as the best the leg found.
        return np.ones_like(values)
    return (values - low) / (high - low)


def fuse(
    dense: Ranked,
    sparse: Ranked,
    *,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
    sparse_weight: float = DEFAULT_SPARSE_WEIGHT,
    k: int = DEFAULT_K,
) -> list[HybridHit]:
    """fused(d) = w_d * minmax(dense)(d) + w_s * minmax(sparse)(d); a missing leg counts 0.

    Min-max over each leg's candidates puts cosine and unbounded BM25 on one [0, 1] scale,
    best = 1, without a corpus-wide statistic. Each leg lists ids best first. Ties go to the
    rank in the more heavily weighted leg, then the rank in the other.
    """
    if dense_weight < 0 or sparse_weight < 0 or dense_weight + sparse_weight == 0:
        raise ValueError(
            f"weights must be non-negative and not both zero: {dense_weight}, {sparse_weight}"
        )
    dense_norm = min_max(dense.scores)
    sparse_norm = min_max(sparse.scores)
    dense_at = {pid: i for i, pid in enumerate(dense.ids)}
    sparse_at = {pid: i for i, pid in enumerate(sparse.ids)}
    absent = len(dense_at) + len(sparse_at)  # ranks past every real one
    dense_first = dense_weight >= sparse_weight
    hits: list[tuple[tuple[float, int, int], HybridHit]] = []
    for pid in list(dense_at) + [pid for pid in sparse_at if pid not in dense_at]:
        d, s = dense_at.get(pid), sparse_at.get(pid)
        dense_score = float(dense_norm[d]) if d is not None else 0.0
        sparse_score = float(sparse_norm[s]) if s is not None else 0.0
        hit = HybridHit(
            id=pid,
            fused=dense_weight * dense_score + sparse_weight * sparse_score,
            dense=dense_score,
            sparse=sparse_score,
            cosine=float(dense.scores[d]) if d is not None else None,
            bm25=float(sparse.scores[s]) if s is not None else None,
        )
        dense_rank = d if d is not None else absent
        sparse_rank = s if s is not None else absent
        # Ties go to the heavier leg's rank, then the other's: with one weight at 0 the
        # result is exactly the other leg's order.
        ranks = (dense_rank, sparse_rank) if dense_first else (sparse_rank, dense_rank)
        hits.append(((-hit.fused, *ranks), hit))
    hits.sort(key=lambda pair: pair[0])
    return [hit for _, hit in hits[:k]]


def hybrid_search(
    query: str,
    query_vector: NDArray[np.floating],
    *,
    dense_index: DenseIndex,
    sparse_index: BM25Index,
    mask: Mask | None = None,
    k: int = DEFAULT_K,
    dense_weight: float = DEFAULT_DENSE_WEIGHT,
    sparse_weight: float = DEFAULT_SPARSE_WEIGHT,
    candidates: int | None = None,
) -> list[HybridHit]:
    """Top-k by `fuse` of each leg's top `candidates` (default 2k), both under `mask`.

    Both indexes must hold the same ids in the same order, so one mask (zone scope, not
    superseded) means the same paragraphs to both.
    """
    if dense_index.ids_fingerprint != sparse_index.ids_fingerprint:
        raise ValueError("dense and sparse indexes must hold the same ids in the same order")
    pool = candidates if candidates is not None else 2 * k
    if pool < k:
        raise ValueError(f"candidates ({pool}) must be at least k ({k})")
    dense = dense_index.search(query_vector, pool, mask=mask)
    sparse = sparse_index.search(query, pool, mask=mask)
    return fuse(dense, sparse, dense_weight=dense_weight, sparse_weight=sparse_weight, k=k)


# ---------------------------------------------------------------------------------------
# Scope: documents at every level of the tree, the nearest level's title winning
# ---------------------------------------------------------------------------------------


def in_view(node: str, scopes: Sequence[str] | None) -> bool:
    """Whether documents of tree node `node` are in view of `scopes` (None: everything): a
    scope is the node or a dotted prefix of it (the scope holds its documents), or the node
    is a dotted prefix of a scope (the scope inherits them). A sibling subtree never is."""
    if scopes is None:
        return True
    return any(
        node == scope or node.startswith(f"{scope}.") or scope.startswith(f"{node}.")
        for scope in scopes
    )


@dataclass(frozen=True, slots=True)
class PlacedDocument:
    """A document, its title and the tree node (G to G.U.P.Z) it belongs to."""

    id: int
    title: str
    node: str

    @property
    def depth(self) -> int:
        return self.node.count(".") + 1


def _overridden_in(documents: Sequence[PlacedDocument], scope: str) -> dict[int, PlacedDocument]:
    """Along `scope`'s lineage (its node and its ancestors), each document that a document
    with the same title on a nearer level overrides, to the nearest such document."""
    lineage = [d for d in documents if d.node == scope or scope.startswith(f"{d.node}.")]
    nearest: dict[str, PlacedDocument] = {}
    for document in sorted(lineage, key=lambda d: (-d.depth, d.id)):
        nearest.setdefault(document.title, document)
    return {d.id: nearest[d.title] for d in lineage if d.depth < nearest[d.title].depth}


def overrides(
    documents: Iterable[PlacedDocument], scopes: Sequence[str] | None
) -> dict[int, PlacedDocument]:
    """The documents no scope still sees, each to the document that overrides it (for the
    first scope that overrides it).

    In a scope's lineage the nearest level's document of a title wins: a zone's "Travel
    policy" overrides its planet's and its galaxy's, a planet's overrides the galaxy's for
    every zone beneath the planet. A document on a scope's own node or beneath it is never
    overridden there (it is the scope's, or a subtree's it holds), and one that some scope
    still sees stays in view. `documents` must hold every document on the scopes' lineages
    (others are ignored); None scopes (everything) override nothing.
    """
    if scopes is None:
        return {}
    placed = list(documents)
    nodes = {document.node for document in placed}
    found: dict[int, PlacedDocument] = {}
    kept: set[int] = set()
    for scope in scopes:
        here = _overridden_in(placed, scope)
        seen = {node for node in nodes if in_view(node, [scope])}  # once per node
        for document in placed:
            if document.id in here:
                found.setdefault(document.id, here[document.id])
            elif document.node in seen:
                kept.add(document.id)
    return {pk: by for pk, by in found.items() if pk not in kept}
