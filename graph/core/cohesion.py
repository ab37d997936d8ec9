"""Evidence cohesion on the graph: set density, cohesion-aware evidence selection, gaps.

docs/math.md §16: Cohesion(S) = (1/|S|^2) * sum_{i,j in S} A_ij.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import TypeAlias

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.sparse.csgraph import connected_components

from graph.core.matrix import as_csr

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Adjacency: TypeAlias = ArrayLike | sp.sparray | sp.spmatrix


def _unique_rows(nodes: ArrayLike) -> IntArray:
    return np.unique(np.asarray(nodes, dtype=np.int64))


def _induced_weight(csr: sp.csr_array, members: IntArray) -> float:
    """sum_{i,j in S} A_ij for sorted unique S, reading only the rows of S."""
    # Gather the stored entries of the |S| rows in one vectorised pass, then keep the ones
    # whose column is in S: O(sum of degrees in S), no submatrix is materialised.
    starts = csr.indptr[members]
    lengths = csr.indptr[members + 1] - starts
    offsets = np.cumsum(lengths) - lengths
    gather = np.arange(offsets[-1] + lengths[-1]) + np.repeat(starts - offsets, lengths)
    columns = csr.indices[gather]
    slot = np.searchsorted(members, columns)
    slot[slot == members.shape[0]] = 0
    return float(csr.data[gather][members[slot] == columns].sum())


def set_cohesion(adjacency: Adjacency, nodes: ArrayLike) -> float:
    """Cohesion(S) = (1/|S|^2) * sum_{i,j in S} A_ij, 0 for the empty set.

    A is used as given: a directed edge counts once, so pass A + A^T (or a symmetric
    relation matrix) when both directions should count. Negative entries (contradicting
    items) lower cohesion, as docs/math.md §4 and §16 ask.
    """
    members = _unique_rows(nodes)
    if members.size == 0:
        return 0.0
    csr = as_csr(adjacency)
    return _induced_weight(csr, members) / float(members.size) ** 2


@dataclass(frozen=True)
class EvidenceSelection:
    """Chosen evidence nodes in pick order with the marginal gain each pick added."""

    nodes: IntArray
    gains: FloatArray
    objective: float
    cohesion: float


def select_evidence(
    adjacency: Adjacency,
    relevance: ArrayLike,
    k: int,
    lam: float = 1.0,
    *,
    candidates: ArrayLike | None = None,
) -> EvidenceSelection:
    """Greedy max of F(S) = sum_{i in S} r_i + lam * (1/k^2) * sum_{i,j in S} A_ij, |S| <= k.

    With |S| = k this is relevance + lam * Cohesion(S). The Graph-RAG paper cites the (1-1/e)
    guarantee of greedy for monotone submodular objectives (Nemhauser-Wolsey-Fisher). For
    non-negative A the cohesion term is supermodular instead (a node's gain grows as its
    neighbours join), so here greedy is a good heuristic without that bound, and lazy greedy
    (stale gains as upper bounds) would be unsound; gains are recomputed exactly each step,
    O(k * |candidates| + degrees). Restrict `candidates` to a pool (e.g. the top diffusion
    scores) on large graphs.
    """
    csr = as_csr(adjacency)
    scores = np.asarray(relevance, dtype=np.float64)
    if scores.shape != (csr.shape[0],):
        raise ValueError("relevance needs one score per node")
    if k < 0:
        raise ValueError("k must be >= 0")
    pool = np.arange(csr.shape[0]) if candidates is None else _unique_rows(candidates)
    pool_csr = sp.csr_array(csr[pool][:, pool])
    both = sp.csr_array(pool_csr + pool_csr.T)
    self_loops = pool_csr.diagonal()
    coefficient = lam / float(k) ** 2 if k else 0.0
    link = np.zeros(pool.shape[0])
    open_mask = np.ones(pool.shape[0], dtype=bool)
    picks: list[int] = []
    gains: list[float] = []
    base = scores[pool]
    for _ in range(min(k, pool.shape[0])):
        gain = np.where(open_mask, base + coefficient * (link + self_loops), -np.inf)
        best = int(np.argmax(gain))
        picks.append(best)
        gains.append(float(gain[best]))
        open_mask[best] = False
        start, end = both.indptr[best], both.indptr[best + 1]
        link[both.indices[start:end]] += both.data[start:end]
    chosen = pool[np.asarray(picks, dtype=np.int64)]
    return EvidenceSelection(
        nodes=chosen,
        gains=np.asarray(gains),
        objective=float(np.sum(gains)),
        cohesion=set_cohesion(csr, chosen),
    )


@dataclass(frozen=True)
class StructuralGaps:
    """Connected pieces of an evidence set and the piece pairs no path inside the set joins."""

    components: list[IntArray]
    gaps: list[tuple[int, int]]

    @property
    def connected(self) -> bool:
        return len(self.components) <= 1


def structural_gaps(adjacency: Adjacency, nodes: ArrayLike) -> StructuralGaps:
    """Weak components of the subgraph induced by S over positive edges, and their pairs.

    A qualified graph answer (graph gate, cohesion in [tau_c/2, tau_c)) must list these:
    two pieces with no path inside S are a causal link the evidence does not show. Negative
    (contradicting) entries do not connect anything.
    """
    members = _unique_rows(nodes)
    if members.size == 0:
        return StructuralGaps([], [])
    induced = sp.csr_array(as_csr(adjacency)[members][:, members])
    induced.data = np.where(induced.data > 0, induced.data, 0.0)
    induced.eliminate_zeros()
    count, labels = connected_components(induced, directed=True, connection="weak")
    pieces = [members[labels == label] for label in range(count)]
    pieces.sort(key=lambda piece: (-piece.size, int(piece[0])))
    return StructuralGaps(pieces, list(combinations(range(count), 2)))


def unrelated_pairs(adjacency: Adjacency, nodes: ArrayLike) -> list[tuple[int, int]]:
    """The pairs {i, j} of S with R_ij <= 0 and R_ji <= 0: what an escalated answer lists as
    missing (seed 002 §14.5), each pair once, in row order.

    Row ids of `adjacency`; positive entries only relate (as `structural_gaps`)."""
    members = _unique_rows(nodes)
    induced = as_csr(adjacency)[members][:, members].toarray()
    related = (induced > 0) | (induced.T > 0)
    return [
        (int(members[a]), int(members[b]))
        for a, b in combinations(range(members.size), 2)
        if not related[a, b]
    ]
