"""The knowledge graph as a CSR adjacency with stable node rows and incremental edge updates.

A_ij = sum over edge types of base_weight * confidence (* stale_factor when stale), edge i->j.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from graph.core.types import EDGE_TYPES, EdgeType, edge_code

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Edge keys pack (src row, dst row, type code) into one int: 28 bits of rows, 4 bits of type.
_TYPE_BITS = 4
_ROW_BITS = 28
_MAX_ROWS = 1 << _ROW_BITS


def _edge_key(src: int, dst: int, code: int) -> int:
    return (((src << _ROW_BITS) | dst) << _TYPE_BITS) | code


@dataclass(frozen=True)
class EdgeArrays:
    """Live typed edges in row space: one entry per (src, dst, type)."""

    src: IntArray
    dst: IntArray
    edge_type: NDArray[np.int8]
    weight: FloatArray
    time: FloatArray
    n_nodes: int

    def __len__(self) -> int:
        return int(self.src.shape[0])


@dataclass(frozen=True)
class SymmetricGraph:
    """The symmetrised graph S = A + A^T with its degrees and Ahat = D^-1/2 S D^-1/2."""

    sym: sp.csr_array
    degree: FloatArray
    inv_sqrt_degree: FloatArray
    ahat: sp.csr_array

    @property
    def n_nodes(self) -> int:
        return int(self.sym.shape[0])


def as_csr(adjacency: ArrayLike | sp.sparray | sp.spmatrix) -> sp.csr_array:
    """The adjacency as a canonical float64 CSR array (no copy when it already is one)."""
    if isinstance(adjacency, sp.csr_array) and adjacency.dtype == np.float64:
        csr = adjacency
    elif sp.issparse(adjacency):
        csr = sp.csr_array(adjacency, dtype=np.float64)
    else:
        csr = sp.csr_array(np.asarray(adjacency, dtype=np.float64))
    if csr.shape[0] != csr.shape[1]:
        raise ValueError(f"adjacency must be square, got {csr.shape}")
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()
    return csr


def symmetric_graph(adjacency: ArrayLike | sp.sparray | sp.spmatrix) -> SymmetricGraph:
    """Ahat = D^-1/2 (A + A^T) D^-1/2 with D_ii = sum_j (A + A^T)_ij; zero-degree rows stay 0."""
    csr = as_csr(adjacency)
    sym = sp.csr_array(csr + csr.T)
    sym.sum_duplicates()
    degree = np.asarray(sym.sum(axis=1), dtype=np.float64).ravel()
    inv_sqrt = np.zeros_like(degree)
    # An isolated node has no walk to take: its row and column of Ahat are zero, so PPR
    # returns (1 - rho) * x there instead of dividing by zero.
    positive = degree > 0
    inv_sqrt[positive] = 1.0 / np.sqrt(degree[positive])
    ahat = sym.copy()
    row_of_entry = np.repeat(np.arange(sym.shape[0]), np.diff(sym.indptr))
    ahat.data = sym.data * inv_sqrt[row_of_entry] * inv_sqrt[sym.indices]
    return SymmetricGraph(sym=sym, degree=degree, inv_sqrt_degree=inv_sqrt, ahat=ahat)


class GraphIndex:
    """CSR adjacency over node ids, updated edge by edge without a rebuild per change.

    Edges live in growable column arrays (a slot per (src, dst, type)); changes only record
    the (src, dst) pairs they touch. The CSR is brought up to date lazily, on the next read:
    a few touched pairs are patched into the existing matrix (an in-place value update, or
    one linear-time sparse addition when the sparsity pattern changes), and only when a
    large share of the pairs changed is the matrix rebuilt from the column arrays. This
    keeps a live graph (edges added as decisions move) cheap to query between changes.
    Rows are stable: a removed node leaves an empty row so other rows keep their meaning.
    """

    def __init__(self, *, stale_factor: float = 0.5) -> None:
        if not 0.0 <= stale_factor <= 1.0:
            raise ValueError("stale_factor must lie in [0, 1]")
        self.stale_factor = stale_factor
        self._row_of: dict[Hashable, int] = {}
        self._id_of: list[Hashable | None] = []
        self._slot_of: dict[int, int] = {}
        self._size = 0
        self._src = np.zeros(0, dtype=np.int64)
        self._dst = np.zeros(0, dtype=np.int64)
        self._type = np.zeros(0, dtype=np.int8)
        self._base = np.zeros(0, dtype=np.float64)
        self._confidence = np.zeros(0, dtype=np.float64)
        self._stale = np.zeros(0, dtype=bool)
        self._time = np.zeros(0, dtype=np.float64)
        self._alive = np.zeros(0, dtype=bool)
        self._csr = sp.csr_array((0, 0), dtype=np.float64)
        self._touched: set[tuple[int, int]] = set()
        self._symmetric: SymmetricGraph | None = None
        self._transposed: sp.csr_array | None = None
        self.full_rebuilds = 0

    # ----- construction -------------------------------------------------------------

    @classmethod
    def from_edges(
        cls,
        src: ArrayLike,
        dst: ArrayLike,
        base_weight: ArrayLike | None = None,
        *,
        confidence: ArrayLike | None = None,
        edge_type: ArrayLike | None = None,
        time: ArrayLike | None = None,
        stale: ArrayLike | None = None,
        node_ids: Sequence[Hashable | None] | None = None,
        stale_factor: float = 0.5,
    ) -> GraphIndex:
        """Bulk build from parallel arrays of node ids (vectorised; later duplicates win)."""
        index = cls(stale_factor=stale_factor)
        src_ids = np.asarray(src)
        dst_ids = np.asarray(dst)
        m = src_ids.shape[0]
        if node_ids is None:
            uniques, inverse = np.unique(np.concatenate([src_ids, dst_ids]), return_inverse=True)
            ids: list[Hashable] = uniques.tolist()
            src_rows = inverse[:m].astype(np.int64)
            dst_rows = inverse[m:].astype(np.int64)
            index._id_of = list(ids)
            index._row_of = {node: row for row, node in enumerate(ids)}
        else:
            for node in node_ids:
                if node is None:
                    index._id_of.append(None)  # the empty row of a removed node
                else:
                    index.add_node(node)
            src_rows = np.fromiter((index._row_of[s] for s in src_ids.tolist()), np.int64, m)
            dst_rows = np.fromiter((index._row_of[d] for d in dst_ids.tolist()), np.int64, m)
        if len(index._id_of) >= _MAX_ROWS:
            raise ValueError("too many nodes for the edge key layout")
        codes = (
            np.zeros(m, dtype=np.int8)
            if edge_type is None
            else np.fromiter((edge_code(t) for t in np.asarray(edge_type).tolist()), np.int8, m)
        )
        keys = (((src_rows << _ROW_BITS) | dst_rows) << _TYPE_BITS) | codes.astype(np.int64)
        # Keep the last occurrence of each key, as repeated add_edge calls would.
        _, last_from_end = np.unique(keys[::-1], return_index=True)
        keep = np.sort(m - 1 - last_from_end)
        count = keep.shape[0]

        def column(values: ArrayLike | None, default: float | bool, dtype: type) -> NDArray:
            if values is None:
                return np.full(count, default, dtype=dtype)
            return np.asarray(values, dtype=dtype)[keep]

        index._src = src_rows[keep]
        index._dst = dst_rows[keep]
        index._type = codes[keep]
        index._base = column(base_weight, 1.0, np.float64)
        index._confidence = column(confidence, 1.0, np.float64)
        index._stale = column(stale, False, bool)
        index._time = column(time, 0.0, np.float64)
        index._alive = np.ones(count, dtype=bool)
        index._size = count
        index._slot_of = dict(zip(keys[keep].tolist(), range(count), strict=True))
        index._csr = index._build_full()
        return index

    # ----- nodes --------------------------------------------------------------------

    @property
    def n_rows(self) -> int:
        """Matrix dimension: live nodes plus the empty rows of removed ones."""
        return len(self._id_of)

    @property
    def node_ids(self) -> list[Hashable | None]:
        """Node id of each row (None for a removed node's row)."""
        return list(self._id_of)

    def row_of(self, node: Hashable) -> int:
        return self._row_of[node]

    def id_of(self, row: int) -> Hashable | None:
        return self._id_of[row]

    def __contains__(self, node: object) -> bool:
        return node in self._row_of

    def add_node(self, node: Hashable) -> int:
        """Row of the node, appending a new empty row if it is new."""
        row = self._row_of.get(node)
        if row is None:
            row = len(self._id_of)
            if row >= _MAX_ROWS:
                raise ValueError("too many nodes for the edge key layout")
            self._row_of[node] = row
            self._id_of.append(node)
            self._invalidate()
        return row

    def remove_node(self, node: Hashable) -> None:
        """Drop the node and its incident edges; its row stays, empty, so rows stay stable."""
        row = self._row_of.pop(node)
        self._id_of[row] = None
        live = self._alive[: self._size]
        incident = np.flatnonzero(
            live & ((self._src[: self._size] == row) | (self._dst[: self._size] == row))
        )
        for slot in incident.tolist():
            self._kill(slot)
        self._invalidate()

    # ----- edges --------------------------------------------------------------------

    def add_edge(
        self,
        src: Hashable,
        dst: Hashable,
        edge_type: EdgeType | str | int = 0,
        *,
        base_weight: float = 1.0,
        confidence: float = 1.0,
        time: float = 0.0,
    ) -> None:
        """Add or replace the (src, dst, type) edge; a replaced edge is no longer stale."""
        s, d, code = self.add_node(src), self.add_node(dst), edge_code(edge_type)
        key = _edge_key(s, d, code)
        slot = self._slot_of.get(key)
        if slot is None:
            slot = self._append_slot()
            self._slot_of[key] = slot
            self._src[slot], self._dst[slot], self._type[slot] = s, d, code
            self._alive[slot] = True
        self._base[slot] = base_weight
        self._confidence[slot] = confidence
        self._stale[slot] = False
        self._time[slot] = time
        self._touch(s, d)

    def remove_edge(
        self, src: Hashable, dst: Hashable, edge_type: EdgeType | str | int = 0
    ) -> bool:
        """Delete the edge outright (for retractions; stale evidence should be marked stale)."""
        slot = self._find(src, dst, edge_type)
        if slot is None:
            return False
        self._kill(slot)
        return True

    def set_confidence(
        self, src: Hashable, dst: Hashable, edge_type: EdgeType | str | int, confidence: float
    ) -> None:
        """New confidence for an edge as later documents corroborate or contradict it."""
        slot = self._require(src, dst, edge_type)
        self._confidence[slot] = confidence
        self._touch(int(self._src[slot]), int(self._dst[slot]))

    def mark_stale(
        self, src: Hashable, dst: Hashable, edge_type: EdgeType | str | int, stale: bool = True
    ) -> None:
        """Down-weight an edge no recent document supports; kept for history (docs/math.md §12)."""
        slot = self._require(src, dst, edge_type)
        self._stale[slot] = stale
        self._touch(int(self._src[slot]), int(self._dst[slot]))

    def edge_weight(self, src: Hashable, dst: Hashable, edge_type: EdgeType | str | int) -> float:
        """Effective weight base * confidence (* stale_factor) of one typed edge, 0 if absent."""
        slot = self._find(src, dst, edge_type)
        return 0.0 if slot is None else float(self._effective(np.array([slot]))[0])

    @property
    def n_edges(self) -> int:
        return len(self._slot_of)

    # ----- reads --------------------------------------------------------------------

    @property
    def adjacency(self) -> sp.csr_array:
        """A with A_ij the summed effective weight of the edges i->j (never mutated later)."""
        self._flush()
        return self._csr

    def transposed(self) -> sp.csr_array:
        """A^T as CSR, cached: diffusion runs along edge direction, M = A^T."""
        if self._transposed is None:
            self._transposed = sp.csr_array(self.adjacency.T)
        return self._transposed

    def symmetric(self) -> SymmetricGraph:
        """The symmetrised, normalised graph PPR runs on, cached until the next change."""
        if self._symmetric is None:
            self._symmetric = symmetric_graph(self.adjacency)
        return self._symmetric

    def typed_edges(self) -> EdgeArrays:
        """Live typed edges with effective weights, for path queries."""
        slots = np.flatnonzero(self._alive[: self._size])
        return EdgeArrays(
            src=self._src[slots].copy(),
            dst=self._dst[slots].copy(),
            edge_type=self._type[slots].copy(),
            weight=self._effective(slots),
            time=self._time[slots].copy(),
            n_nodes=self.n_rows,
        )

    # ----- internals ----------------------------------------------------------------

    def _effective(self, slots: NDArray[np.int64]) -> FloatArray:
        weight = self._base[slots] * self._confidence[slots]
        return np.where(self._stale[slots], weight * self.stale_factor, weight)

    def _find(self, src: Hashable, dst: Hashable, edge_type: EdgeType | str | int) -> int | None:
        s, d = self._row_of.get(src), self._row_of.get(dst)
        if s is None or d is None:
            return None
        return self._slot_of.get(_edge_key(s, d, edge_code(edge_type)))

    def _require(self, src: Hashable, dst: Hashable, edge_type: EdgeType | str | int) -> int:
        slot = self._find(src, dst, edge_type)
        if slot is None:
            raise KeyError((src, dst, str(edge_type)))
        return slot

    def _kill(self, slot: int) -> None:
        s, d, code = int(self._src[slot]), int(self._dst[slot]), int(self._type[slot])
        del self._slot_of[_edge_key(s, d, code)]
        self._alive[slot] = False
        self._touch(s, d)

    def _append_slot(self) -> int:
        if self._size == self._src.shape[0]:
            capacity = max(16, 2 * self._size)
            for name in (
                "_src",
                "_dst",
                "_type",
                "_base",
                "_confidence",
                "_stale",
                "_time",
                "_alive",
            ):
                old = getattr(self, name)
                grown = np.zeros(capacity, dtype=old.dtype)
                grown[: self._size] = old[: self._size]
                setattr(self, name, grown)
        self._size += 1
        return self._size - 1

    def _touch(self, src: int, dst: int) -> None:
        self._touched.add((src, dst))
        self._invalidate()

    def _invalidate(self) -> None:
        self._symmetric = None
        self._transposed = None

    def _pair_weight(self, src: int, dst: int) -> float:
        total = 0.0
        for code in range(len(EDGE_TYPES)):
            slot = self._slot_of.get(_edge_key(src, dst, code))
            if slot is not None:
                weight = self._base[slot] * self._confidence[slot]
                total += weight * self.stale_factor if self._stale[slot] else weight
        return total

    def _build_full(self) -> sp.csr_array:
        self.full_rebuilds += 1
        slots = np.flatnonzero(self._alive[: self._size])
        n = self.n_rows
        coo = sp.coo_array(
            (self._effective(slots), (self._src[slots], self._dst[slots])), shape=(n, n)
        )
        csr = sp.csr_array(coo)
        csr.sum_duplicates()
        csr.eliminate_zeros()
        return csr

    def _flush(self) -> None:
        n = self.n_rows
        if not self._touched and self._csr.shape == (n, n):
            return
        csr = self._csr
        if len(self._touched) > max(256, csr.nnz // 32):
            self._csr = self._build_full()
            self._touched.clear()
            return
        if csr.shape[0] < n:
            # New nodes only add empty rows and columns: pad indptr, share the rest.
            indptr = np.concatenate(
                [csr.indptr, np.full(n - csr.shape[0], csr.indptr[-1], csr.indptr.dtype)]
            )
            csr = sp.csr_array((csr.data, csr.indices, indptr), shape=(n, n))
        pairs = sorted(self._touched)
        rows = np.fromiter((p[0] for p in pairs), np.int64, len(pairs))
        cols = np.fromiter((p[1] for p in pairs), np.int64, len(pairs))
        exact = np.fromiter((self._pair_weight(r, c) for r, c in pairs), np.float64, len(pairs))
        position = _locate(csr, rows, cols)
        present = position >= 0
        structural = bool(np.any(~present & (exact != 0.0)) or np.any(present & (exact == 0.0)))
        if structural:
            old = np.zeros(len(pairs))
            old[present] = csr.data[position[present]]
            delta = sp.csr_array((exact - old, (rows, cols)), shape=(n, n))
            csr = sp.csr_array(csr + delta)
            # The addition may leave rounding residue; write the exact sums back.
            position = _locate(csr, rows, cols)
            present = position >= 0
        data = csr.data.copy()
        data[position[present]] = exact[present]
        csr = sp.csr_array((data, csr.indices, csr.indptr), shape=(n, n))
        if structural:
            csr.eliminate_zeros()
        self._csr = csr
        self._touched.clear()


def _locate(csr: sp.csr_array, rows: IntArray, cols: IntArray) -> IntArray:
    """Position in csr.data of each (row, col) entry, -1 where it is not stored."""
    position = np.full(rows.shape[0], -1, dtype=np.int64)
    indptr, indices = csr.indptr, csr.indices
    for k, (row, col) in enumerate(zip(rows.tolist(), cols.tolist(), strict=True)):
        start, end = int(indptr[row]), int(indptr[row + 1])
        at = start + int(np.searchsorted(indices[start:end], col))
        if at < end and indices[at] == col:
            position[k] = at
    return position
