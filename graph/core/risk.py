"""Risk concentration: the share of causal paths that pass through each node (docs/math.md §18).

B(v) = |{p in P : v in p}| / |P|, P the source-to-sink paths of the causal DAG, counted by DP.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from graph.core.paths import CausalSubgraph

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class RiskConcentration:
    """Path share of every DAG node and the nodes at or above the escalation threshold."""

    nodes: IntArray
    share: FloatArray
    path_count: float
    hotspots: IntArray

    def share_of(self, node: int) -> float:
        at = int(np.searchsorted(self.nodes, node))
        if at < self.nodes.size and self.nodes[at] == node:
            return float(self.share[at])
        return 0.0


def path_shares(src: ArrayLike, dst: ArrayLike) -> tuple[IntArray, FloatArray, float]:
    """B(v) = f(v) * g(v) / |P| with f = #paths from sources into v, g = #paths from v to sinks.

    Paths are node sequences (parallel edges count once) from an in-degree-0 node to an
    out-degree-0 node. Counts are float64: exact up to 2^53 paths, relative error beyond.
    Raises ValueError if the edges contain a cycle (path counts would be infinite).
    """
    tails = np.asarray(src, dtype=np.int64)
    heads = np.asarray(dst, dtype=np.int64)
    nodes, compact = np.unique(np.concatenate([tails, heads]), return_inverse=True)
    if nodes.size == 0:
        return nodes, np.zeros(0), 0.0
    m, k = tails.shape[0], nodes.shape[0]
    forward = sp.csr_array((np.ones(m), (compact[:m], compact[m:])), shape=(k, k))
    forward.sum_duplicates()
    forward.data[:] = 1.0
    backward = sp.csr_array(forward.T)
    order = _topological_order(forward, backward)
    into = np.zeros(k)
    into[np.diff(backward.indptr) == 0] = 1.0
    for v in order:
        parents = backward.indices[backward.indptr[v] : backward.indptr[v + 1]]
        if parents.size:
            into[v] = into[parents].sum()
    out_of = np.zeros(k)
    out_of[np.diff(forward.indptr) == 0] = 1.0
    for v in order[::-1]:
        children = forward.indices[forward.indptr[v] : forward.indptr[v + 1]]
        if children.size:
            out_of[v] = out_of[children].sum()
    total = float(out_of[np.diff(backward.indptr) == 0].sum())
    return nodes, into * out_of / total, total


def _topological_order(forward: sp.csr_array, backward: sp.csr_array) -> list[int]:
    """Kahn's algorithm; a leftover node means a cycle."""
    waiting = np.diff(backward.indptr).astype(np.int64)
    ready = list(np.flatnonzero(waiting == 0).tolist())
    order: list[int] = []
    while ready:
        v = ready.pop()
        order.append(v)
        children = forward.indices[forward.indptr[v] : forward.indptr[v + 1]]
        waiting[children] -= 1
        ready.extend(children[waiting[children] == 0].tolist())
    if len(order) != forward.shape[0]:
        raise ValueError("the causal graph has a cycle: path shares are undefined")
    return order


def risk_concentration(
    src: ArrayLike, dst: ArrayLike, *, threshold: float = 0.5, exclude: ArrayLike = ()
) -> RiskConcentration:
    """Nodes with B(v) >= threshold, highest first, are escalated (docs/math.md §18)."""
    nodes, share, total = path_shares(src, dst)
    candidates = (share >= threshold) & ~np.isin(nodes, np.asarray(exclude, dtype=np.int64))
    ranked = np.flatnonzero(candidates)
    ranked = ranked[np.argsort(-share[ranked], kind="stable")]
    return RiskConcentration(nodes, share, total, nodes[ranked])


def subgraph_risk(subgraph: CausalSubgraph, *, threshold: float = 0.5) -> RiskConcentration:
    """Risk concentration over the causal subgraph of an outcome, the outcome itself excluded
    (it lies on every path by construction, so its share of 1 says nothing)."""
    return risk_concentration(
        subgraph.src, subgraph.dst, threshold=threshold, exclude=[subgraph.outcome]
    )
