"""Pure core of hybrid retrieval: BM25 (bm25s) and exact dense search, fused by weighted
min-max scores. Storage-backed legs (pgvector) plug into `fuse` with their own top-k lists.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
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


class BM25Index:
    """BM25 over paragraphs, tokenised with `evidence.text.tokenize`, scored by bm25s.

    bm25s defaults: Lucene variant, k1=1.5, b=0.75, idf = ln(1 + (N - df + 0.5)/(df + 0.5)).
    Top-k is selected among the paragraphs that share a term with the query: bm25s's own
    `retrieve` argpartitions the whole score vector, which is slow on long runs of tied
    zeros (100k paragraphs, content-word queries: ~2.5 ms against ~0.1 ms here; see
    bench/bench_retrieval_core.py).
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
        if (texts is None) == (tokens is None):
            raise ValueError("give either texts or pre-tokenised tokens")
        corpus = (
            [tokenizer(t) for t in texts] if texts is not None else [list(t) for t in tokens or ()]
        )
        if len(corpus) != len(ids):
            raise ValueError(f"{len(ids)} ids but {len(corpus)} texts")
        self.ids: list[ParagraphId] = list(ids)
        self.ids_fingerprint = ids_fingerprint(self.ids)
        self._tokenize = tokenizer
        self.bm25 = bm25s.BM25(k1=k1, b=b, method=method)
        # bm25s cannot index a corpus without a single term (its average length would be 0).
        self._indexed = any(corpus)
        if self._indexed:
            self.bm25.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str) -> NDArray[np.float32]:
        """BM25(q, d) = sum_{t in q} idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl)), all d."""
        return self.scores_for_tokens(self._tokenize(query))

    def scores_for_tokens(self, query_tokens: Sequence[str]) -> NDArray[np.float32]:
        """BM25 score of every paragraph for an already tokenised query."""
        n = len(self.ids)
        if not self._indexed:
            return np.zeros(n, dtype=np.float32)
        # Terms outside the vocabulary score nothing; bm25s drops them here.
        term_ids = self.bm25.get_tokens_ids(list(query_tokens))
        if not term_ids:
            return np.zeros(n, dtype=np.float32)
        return np.asarray(self.bm25.get_scores_from_ids(term_ids), dtype=np.float32)

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
