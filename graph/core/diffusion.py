"""Relevance diffusion over the knowledge graph: h-hop scores, PPR (CG and local push), hop depth.

docs/math.md §12-§15. Edge i->j is A_ij; relevance flows from a node to its consequences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from graph.core.matrix import SymmetricGraph, as_csr, symmetric_graph

FloatArray = NDArray[np.float64]
Normalisation: TypeAlias = Literal["raw", "row", "sym"]
GraphLike: TypeAlias = ArrayLike | sp.sparray | sp.spmatrix | SymmetricGraph

# Below this many nodes a dense eigensolver is both exact and faster than Lanczos.
_DENSE_EIGEN_LIMIT = 400


def _as_symmetric(adjacency: GraphLike) -> SymmetricGraph:
    return adjacency if isinstance(adjacency, SymmetricGraph) else symmetric_graph(adjacency)


def diffusion_operator(
    adjacency: ArrayLike | sp.sparray | sp.spmatrix, normalisation: Normalisation = "raw"
) -> sp.sparray:
    """M = N(A)^T, so that (M x)_j = sum_i N(A)_ij x_i carries relevance along i->j."""
    csr = as_csr(adjacency)
    if normalisation == "raw":
        return csr.T
    if normalisation == "row":
        # Random-walk normalisation D_out^-1 A: a node splits its relevance among its
        # consequences; nodes without out-edges (final outcomes) pass nothing on.
        out_degree = np.asarray(csr.sum(axis=1)).ravel()
        scale = np.divide(1.0, out_degree, out=np.zeros_like(out_degree), where=out_degree > 0)
        return (sp.diags_array(scale) @ csr).T
    if normalisation == "sym":
        # D from the symmetrised degree (in + out): with out-degree alone, a sink such as a
        # payment at the end of a chain would have D = 0 and never receive relevance.
        inv_sqrt = symmetric_graph(csr).inv_sqrt_degree
        scale = sp.diags_array(inv_sqrt)
        return (scale @ csr @ scale).T
    raise ValueError(f"unknown normalisation {normalisation!r}")


def h_hop(
    adjacency: ArrayLike | sp.sparray | sp.spmatrix,
    x: ArrayLike,
    gamma: float,
    hops: int,
    *,
    normalisation: Normalisation = "raw",
) -> FloatArray:
    """s_h = sum_{t=0..h} gamma^t M^t x with M = N(A)^T (relevance flows along edge direction).

    The default is the raw weighted A, as docs/math.md §13 defines s_h and computes its
    worked example; edge weights are confidences in [0, 1] and h stays small (h* of 5.3),
    so the finite sum is bounded. Pass normalisation="sym" (D^-1/2 A D^-1/2, docs/math.md §12)
    when hub degrees would dominate or gamma * rho(A) >= 1 would let noise grow with h.
    """
    if hops < 0:
        raise ValueError("hops must be >= 0")
    operator = diffusion_operator(adjacency, normalisation)
    term = np.asarray(x, dtype=np.float64)
    scores = term.copy()
    for _ in range(hops):
        term = gamma * (operator @ term)
        scores += term
    return scores


@dataclass(frozen=True)
class PPRResult:
    """PPR scores with the work it took: matvecs with Ahat (the final residual check included)
    and the relative residual ||b - (I - rho*Ahat) s/(1-rho)|| / ||b||."""

    scores: FloatArray
    matvecs: int
    residual: float
    converged: bool


def _ppr_rhs(graph: SymmetricGraph, x: ArrayLike, rho: float) -> FloatArray:
    if not 0.0 < rho < 1.0:
        raise ValueError("rho must lie in (0, 1)")
    b = np.asarray(x, dtype=np.float64)
    if b.shape != (graph.n_nodes,):
        raise ValueError(f"x must have shape ({graph.n_nodes},), got {b.shape}")
    return b


def ppr_with_stats(
    adjacency: GraphLike,
    x: ArrayLike,
    rho: float = 0.85,
    tol: float = 1e-8,
    *,
    maxiter: int | None = None,
) -> PPRResult:
    """s = (1-rho)(I - rho*Ahat)^-1 x solved by conjugate gradients, ||s - s*|| <= tol*||s*||.

    I - rho*Ahat is symmetric with spectrum in [1-rho, 1+rho], so CG converges at rate
    (sqrt(k)-1)/(sqrt(k)+1) with k = (1+rho)/(1-rho): ~0.56 per matvec at rho = 0.85,
    against 0.85 for the power iteration. The residual target is tightened by 1/k so that
    the stated tolerance bounds the error of s itself, not just the residual.
    """
    graph = _as_symmetric(adjacency)
    b = _ppr_rhs(graph, x, rho)
    b_norm = float(np.linalg.norm(b))
    if b_norm == 0.0:
        return PPRResult(np.zeros_like(b), 0, 0.0, True)
    ahat = graph.ahat
    count = 0

    def apply(v: FloatArray) -> FloatArray:
        nonlocal count
        count += 1
        return v - rho * (ahat @ v)

    system = spla.LinearOperator(ahat.shape, matvec=apply, dtype=np.float64)
    rtol = tol * (1.0 - rho) / (1.0 + rho)
    solution, info = spla.cg(system, b, rtol=rtol, atol=0.0, maxiter=maxiter)
    # Isolated nodes decouple (their row of the system is the identity): write them exactly.
    isolated = graph.degree == 0.0
    solution[isolated] = b[isolated]
    residual = float(np.linalg.norm(b - apply(solution))) / b_norm
    return PPRResult((1.0 - rho) * solution, count, residual, info == 0)


def ppr(adjacency: GraphLike, x: ArrayLike, rho: float = 0.85, tol: float = 1e-8) -> FloatArray:
    """s = (1-rho)(I - rho*Ahat)^-1 x, Ahat = D^-1/2 (A + A^T) D^-1/2."""
    return ppr_with_stats(adjacency, x, rho, tol).scores


def ppr_power_iteration(
    adjacency: GraphLike,
    x: ArrayLike,
    rho: float = 0.85,
    tol: float = 1e-8,
    *,
    maxiter: int = 10_000,
) -> PPRResult:
    """s <- rho*Ahat*s + (1-rho)*x until rho/(1-rho)*||s_k - s_k-1|| <= tol*||s_k||.

    The power iteration of docs/math.md §14; kept as the like-for-like baseline of the CG solver.
    """
    graph = _as_symmetric(adjacency)
    b = _ppr_rhs(graph, x, rho)
    teleport = (1.0 - rho) * b
    scores = teleport.copy()
    bound = rho / (1.0 - rho)
    for k in range(1, maxiter + 1):
        updated = rho * (graph.ahat @ scores) + teleport
        change = float(np.linalg.norm(updated - scores))
        scores = updated
        if bound * change <= tol * float(np.linalg.norm(scores)):
            return PPRResult(scores, k, change, True)
    return PPRResult(scores, maxiter, change, False)


@dataclass(frozen=True)
class LocalPPR:
    """Approximate PPR of one seed on the nodes the push touched (all others are ~0)."""

    nodes: NDArray[np.int64]
    scores: FloatArray
    pushes: int
    eps: float

    def dense(self, n_nodes: int) -> FloatArray:
        out = np.zeros(n_nodes)
        out[self.nodes] = self.scores
        return out


def ppr_push(adjacency: GraphLike, seed: int, rho: float = 0.85, eps: float = 1e-4) -> LocalPPR:
    """Local push (Andersen-Chung-Lang) for x = e_seed; 0 <= s*_w - s_w <= eps*sqrt(d_seed*d_w).

    With W = S D^-1 the column-stochastic walk, Ahat = D^-1/2 W D^1/2, so
    s = sqrt(d_seed) * D^-1/2 * p where p = (1-rho)(I - rho*W)^-1 e_seed is the classic PPR
    vector. Push keeps p + PPR(r) = p* and stops once every residual r_v <= eps*d_v, which
    bounds p*_w - p_w by eps*d_w on a symmetric graph. Nodes are pushed in synchronous
    rounds (all over-threshold nodes at once) so each round is a few vectorised gathers;
    the order does not affect the guarantee, and only the neighbourhood is ever read.
    Pass the graph's SymmetricGraph (GraphIndex.symmetric()) to keep a query local.
    """
    graph = _as_symmetric(adjacency)
    if not 0.0 < rho < 1.0:
        raise ValueError("rho must lie in (0, 1)")
    if eps <= 0.0:
        raise ValueError("eps must be > 0")
    degree, indptr, indices, data = (
        graph.degree,
        graph.sym.indptr,
        graph.sym.indices,
        graph.sym.data,
    )
    if degree[seed] == 0.0:
        return LocalPPR(np.array([seed]), np.array([1.0 - rho]), 0, eps)
    teleport = 1.0 - rho
    n = graph.n_nodes
    estimate = np.zeros(n)
    residual = np.zeros(n)
    residual[seed] = 1.0
    active = np.array([seed], dtype=np.int64)
    seen = [active]
    pushes = 0
    while active.size:
        pushes += int(active.size)
        mass = residual[active]
        residual[active] = 0.0
        estimate[active] += teleport * mass
        starts = indptr[active].astype(np.int64)
        lengths = indptr[active + 1] - starts
        offsets = np.cumsum(lengths) - lengths
        gather = np.arange(int(lengths.sum())) + np.repeat(starts - offsets, lengths)
        targets = indices[gather]
        share = np.repeat(rho * mass / degree[active], lengths)
        np.add.at(residual, targets, data[gather] * share)
        candidates = np.unique(targets)
        seen.append(candidates)
        active = candidates[residual[candidates] > eps * degree[candidates]]
    nodes = np.unique(np.concatenate(seen))
    scores = math.sqrt(degree[seed]) * estimate[nodes] * graph.inv_sqrt_degree[nodes]
    return LocalPPR(nodes, scores, pushes, eps)


def causal_accuracy(h: float | ArrayLike, B: float, N: float) -> float | FloatArray:
    """C(h) = B*log(1+h) - N*h (docs/math.md §15)."""
    result = B * np.log1p(np.asarray(h, dtype=np.float64)) - N * np.asarray(h, dtype=np.float64)
    return float(result) if np.ndim(result) == 0 else result


def optimal_hops(B: float, N: float) -> float:
    """h* = max(0, B/N - 1), the stationary point of C(h) = B*log(1+h) - N*h.

    Clipped at 0: when B <= N, C'(h) = B/(1+h) - N < 0 for every h >= 0, so extra hops only
    add noise and flat retrieval (h = 0) is best; a negative hop count means nothing.
    """
    if B <= 0.0 or N <= 0.0:
        raise ValueError("B and N must be > 0 (C(h) has no finite maximum otherwise)")
    return max(0.0, B / N - 1.0)


def best_hop_count(B: float, N: float) -> int:
    """argmax over integer h >= 0 of C(h); C is concave, so floor(h*) or ceil(h*)."""
    h_star = optimal_hops(B, N)
    low, high = math.floor(h_star), math.ceil(h_star)
    return low if causal_accuracy(low, B, N) >= causal_accuracy(high, B, N) else high


def spectral_gap(adjacency: GraphLike, *, tol: float = 1e-10) -> float:
    """1 - lambda_2 of Ahat = D^-1/2 (A + A^T) D^-1/2, lambda_2 by Lanczos (eigsh)."""
    graph = _as_symmetric(adjacency)
    n = graph.n_nodes
    if n < 2:
        raise ValueError("a spectral gap needs at least two nodes")
    if n <= _DENSE_EIGEN_LIMIT:
        eigenvalues = np.linalg.eigvalsh(graph.ahat.toarray())
        return float(1.0 - eigenvalues[-2])
    # A fixed start vector keeps the Lanczos result reproducible run to run.
    start = np.random.default_rng(0).random(n) + 0.5
    eigenvalues = spla.eigsh(
        graph.ahat, k=2, which="LA", tol=tol, v0=start, return_eigenvectors=False
    )
    return float(1.0 - np.sort(eigenvalues)[0])


def noise_from_gap(N0: float, gap: float) -> float:
    """N = N0 / (1 - lambda_2) = N0 / gap (docs/math.md §15); infinite for a disconnected graph."""
    if gap < 0.0:
        raise ValueError("the spectral gap 1 - lambda_2 is never negative")
    return math.inf if gap == 0.0 else N0 / gap
