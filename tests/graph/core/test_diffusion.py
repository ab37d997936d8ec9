from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.core.diffusion import (
    best_hop_count,
    causal_accuracy,
    diffusion_operator,
    h_hop,
    noise_from_gap,
    optimal_hops,
    ppr,
    ppr_power_iteration,
    ppr_push,
    ppr_with_stats,
    spectral_gap,
)
from graph.core.matrix import SymmetricGraph, symmetric_graph

# docs/math.md §13 (the paper's example): vendor proposal -> evaluation -> approval -> payment.
CHAIN = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=float)
CHAIN_X = np.array([1.0, 0.3, 0.1, 0.0])


def random_graph(rng: np.random.Generator, n: int, density: float, isolated: int = 0):
    dense = (rng.random((n, n)) < density) * rng.uniform(0.05, 1.0, (n, n))
    np.fill_diagonal(dense, 0.0)
    if isolated:
        dense[:isolated, :] = 0.0
        dense[:, :isolated] = 0.0
    return sp.csr_array(dense), dense


def dense_ahat(dense: np.ndarray) -> np.ndarray:
    sym = dense + dense.T
    degree = sym.sum(axis=1)
    inv = np.where(degree > 0, 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0)), 0.0)
    return inv[:, None] * sym * inv[None, :]


def test_seed_chain_example_raw_diffusion_boosts_approval_and_payment() -> None:
    scores = h_hop(CHAIN, CHAIN_X, gamma=0.7, hops=3)
    # x + 0.7*A^T x + 0.49*(A^T)^2 x + 0.343*(A^T)^3 x, worked by hand.
    np.testing.assert_allclose(scores, [1.0, 1.0, 0.8, 0.56], atol=1e-15)
    assert scores[2] > CHAIN_X[2]
    assert scores[3] > CHAIN_X[3]


def test_seed_chain_example_with_symmetric_normalisation_still_boosts_the_tail() -> None:
    scores = h_hop(CHAIN, CHAIN_X, gamma=0.7, hops=3, normalisation="sym")
    r = 1 / math.sqrt(2)  # Ahat weights: 1/sqrt(1*2), 1/sqrt(2*2), 1/sqrt(2*1)
    expected = [
        1.0,
        0.3 + 0.7 * r,
        0.1 + 0.7 * 0.5 * 0.3 + 0.49 * 0.5 * r,
        0.7 * r * 0.1 + 0.49 * r * 0.5 * 0.3 + 0.343 * r * 0.5 * r,
    ]
    np.testing.assert_allclose(scores, expected, atol=1e-15)
    assert scores[2] > CHAIN_X[2]
    assert scores[3] > CHAIN_X[3]


def test_relevance_does_not_flow_against_edge_direction() -> None:
    scores = h_hop(CHAIN, np.array([0.0, 0.0, 0.0, 1.0]), gamma=0.7, hops=3)
    np.testing.assert_array_equal(scores, [0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("normalisation", ["raw", "row", "sym"])
def test_h_hop_matches_dense_matrix_powers(normalisation: str) -> None:
    for seed in range(10):
        rng = np.random.default_rng(seed)
        adjacency, dense = random_graph(rng, 40, 0.1, isolated=2)
        x = rng.random(40)
        if normalisation == "row":
            out = dense.sum(axis=1, keepdims=True)
            norm = np.divide(dense, out, out=np.zeros_like(dense), where=out > 0)
        elif normalisation == "sym":
            degree = (dense + dense.T).sum(axis=1)
            inv = np.where(degree > 0, 1 / np.sqrt(np.where(degree > 0, degree, 1)), 0.0)
            norm = inv[:, None] * dense * inv[None, :]
        else:
            norm = dense
        expected = sum(0.6**t * np.linalg.matrix_power(norm.T, t) @ x for t in range(5))
        got = h_hop(adjacency, x, 0.6, 4, normalisation=normalisation)  # type: ignore[arg-type]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_ppr_matches_dense_solve_on_random_graphs() -> None:
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(5, 120))
        adjacency, dense = random_graph(rng, n, float(rng.uniform(0.02, 0.3)), isolated=1)
        x = rng.random(n)
        rho = float(rng.uniform(0.5, 0.95))
        exact = (1 - rho) * np.linalg.solve(np.eye(n) - rho * dense_ahat(dense), x)
        np.testing.assert_allclose(ppr(adjacency, x, rho, tol=1e-12), exact, rtol=0, atol=1e-9)
        relative = np.linalg.norm(ppr(adjacency, x, rho) - exact) / np.linalg.norm(exact)
        assert relative <= 1e-8  # the stated guarantee of the default tolerance


def test_ppr_of_isolated_node_is_its_teleport_share() -> None:
    adjacency, _ = random_graph(np.random.default_rng(3), 30, 0.2, isolated=3)
    x = np.linspace(0.1, 1.0, 30)
    assert ppr(adjacency, x, 0.85)[0] == pytest.approx(0.15 * x[0], abs=1e-12)


def test_ppr_cg_needs_fewer_matvecs_than_power_iteration_for_the_same_answer() -> None:
    rng = np.random.default_rng(7)
    adjacency, dense = random_graph(rng, 300, 0.03)
    x = rng.random(300)
    exact = 0.15 * np.linalg.solve(np.eye(300) - 0.85 * dense_ahat(dense), x)
    cg = ppr_with_stats(adjacency, x, 0.85, 1e-10)
    power = ppr_power_iteration(adjacency, x, 0.85, 1e-10)
    assert cg.converged
    assert power.converged
    np.testing.assert_allclose(cg.scores, exact, atol=1e-9)
    np.testing.assert_allclose(power.scores, exact, atol=1e-9)
    assert cg.matvecs < power.matvecs / 2


def test_ppr_of_zero_query_is_zero_without_work() -> None:
    adjacency, _ = random_graph(np.random.default_rng(1), 10, 0.3)
    result = ppr_with_stats(adjacency, np.zeros(10))
    assert result.matvecs == 0
    assert not result.scores.any()


@pytest.mark.parametrize("eps", [1e-2, 1e-4, 1e-6])
def test_local_push_stays_within_its_error_guarantee(eps: float) -> None:
    for seed in range(8):
        rng = np.random.default_rng(seed)
        n = 80
        adjacency, dense = random_graph(rng, n, 0.05, isolated=1)
        graph = symmetric_graph(adjacency)
        source = int(rng.integers(1, n))
        exact = 0.15 * np.linalg.solve(np.eye(n) - 0.85 * dense_ahat(dense), np.eye(n)[source])
        local = ppr_push(graph, source, 0.85, eps)
        gap = exact - local.dense(n)
        assert gap.min() >= -1e-12  # push never overshoots
        bound = eps * np.sqrt(graph.degree[source] * graph.degree)
        assert np.all(gap <= bound + 1e-12)


def test_local_push_of_an_isolated_seed_is_its_teleport_share() -> None:
    adjacency, _ = random_graph(np.random.default_rng(2), 20, 0.2, isolated=1)
    local = ppr_push(adjacency, 0)
    assert local.nodes.tolist() == [0]
    assert local.scores.tolist() == [pytest.approx(0.15)]


@pytest.mark.parametrize(
    ("B", "N", "h_star", "rounded"),
    [(0.42, 0.095, 3.42, 3), (0.38, 0.11, 2.45, 2), (0.31, 0.13, 1.38, 1)],
)
def test_optimal_hops_reproduce_the_seed_datasets(B: float, N: float, h_star: float, rounded: int):
    assert round(optimal_hops(B, N), 2) == h_star
    assert best_hop_count(B, N) == rounded


def test_optimal_hops_clip_at_zero_when_noise_outweighs_signal() -> None:
    assert optimal_hops(0.1, 0.2) == 0.0
    assert best_hop_count(0.1, 0.2) == 0
    with pytest.raises(ValueError, match="must be > 0"):
        optimal_hops(0.3, 0.0)


def test_an_h_star_below_one_is_flat_retrieval_while_one_hop_gains_nothing() -> None:
    """§5.2: h* = B/N - 1 below 1 means the integer depths are 0 and 1; one hop beats flat
    retrieval only when C(1) = B ln 2 - N > 0 = C(0), that is h* > 1/ln 2 - 1 = 0.443."""
    edge = 1 / math.log(2) - 1
    N = 0.1
    assert best_hop_count(N * (1 + edge - 0.01), N) == 0  # h* = 0.433: flat
    assert best_hop_count(N * (1 + edge + 0.01), N) == 1  # h* = 0.453: one hop
    assert best_hop_count(N * 1.2, N) == 0  # h* = 0.2


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.01, 5.0),
    st.floats(0.01, 5.0),
    st.floats(0.0, 50.0),
)
def test_optimal_hops_maximise_causal_accuracy(B: float, N: float, h: float) -> None:
    best = optimal_hops(B, N)
    assert causal_accuracy(best, B, N) >= causal_accuracy(h, B, N) - 1e-12
    integer = best_hop_count(B, N)
    assert causal_accuracy(integer, B, N) >= causal_accuracy(math.floor(h), B, N) - 1e-12


@pytest.mark.parametrize("n", [60, 700])
def test_spectral_gap_matches_dense_eigenvalues(n: int) -> None:
    rng = np.random.default_rng(n)
    adjacency, _dense = random_graph(rng, n, 8 / n)
    # A ring keeps the graph connected, so lambda_1 = 1 is simple.
    ring = sp.csr_array((np.ones(n), (np.arange(n), (np.arange(n) + 1) % n)), shape=(n, n))
    adjacency = sp.csr_array(adjacency + ring)
    eigenvalues = np.linalg.eigvalsh(dense_ahat(adjacency.toarray()))
    assert spectral_gap(adjacency) == pytest.approx(1 - eigenvalues[-2], abs=1e-8)


def test_disconnected_graph_has_no_gap_and_infinite_noise() -> None:
    two_pairs = np.array([[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=float)
    gap = spectral_gap(two_pairs)
    assert gap == pytest.approx(0.0, abs=1e-12)
    assert noise_from_gap(0.05, 0.0) == math.inf
    assert optimal_hops(0.4, noise_from_gap(0.05, 0.0)) == 0.0


def test_noise_from_gap_scales_base_noise() -> None:
    assert noise_from_gap(0.05, 0.5) == pytest.approx(0.1)


# --- what a caller is told, and the work each solver reports -------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: h_hop(CHAIN, CHAIN_X, 0.8, -1), r"^hops must be >= 0$"),
        (lambda: diffusion_operator(CHAIN, "cubic"), r"^unknown normalisation 'cubic'$"),  # type: ignore[arg-type]
        (lambda: ppr(CHAIN, CHAIN_X, 0.0), r"^rho must lie in \(0, 1\)$"),
        (lambda: ppr(CHAIN, CHAIN_X, 1.0), r"^rho must lie in \(0, 1\)$"),
        (lambda: ppr(CHAIN, CHAIN_X[:3]), r"^x must have shape \(4,\), got \(3,\)$"),
        (lambda: ppr_push(CHAIN, 0, 0.0), r"^rho must lie in \(0, 1\)$"),
        (lambda: ppr_push(CHAIN, 0, 1.0), r"^rho must lie in \(0, 1\)$"),
        (lambda: ppr_push(CHAIN, 0, 0.85, 0.0), r"^eps must be > 0$"),
        (lambda: noise_from_gap(1.0, -0.1), r"^the spectral gap 1 - lambda_2 is never negative$"),
    ],
)
def test_a_wrong_diffusion_input_is_refused_by_name(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_the_default_operator_is_the_raw_transpose_and_row_normalisation_spares_sinks() -> None:
    np.testing.assert_array_equal(diffusion_operator(CHAIN).toarray(), CHAIN.T)
    fork = np.array([[0.0, 1.0, 3.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    # node 0 splits its relevance 1:3 between its consequences; the sinks pass nothing on
    np.testing.assert_array_equal(
        diffusion_operator(fork, "row").toarray(),
        [[0.0, 0.0, 0.0], [0.25, 0.0, 0.0], [0.75, 0.0, 0.0]],
    )


def test_a_one_hot_query_may_be_given_as_integers() -> None:
    as_ints = h_hop(CHAIN, [1, 0, 0, 0], 0.8, 3)
    np.testing.assert_allclose(as_ints, [1.0, 0.8, 0.64, 0.512])
    assert h_hop(CHAIN, [1, 0, 0, 0], 0.8, 0).tolist() == [1.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(ppr(CHAIN, [1, 0, 0, 0]), ppr(CHAIN, [1.0, 0.0, 0.0, 0.0]))


class CountingAhat:
    """Ahat that counts the products taken with it: the solvers' reported work is checked."""

    def __init__(self, matrix: sp.csr_array) -> None:
        self.matrix = matrix
        self.shape = matrix.shape
        self.dtype = matrix.dtype
        self.products = 0

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        self.products += 1
        return self.matrix @ v


def counted(adjacency: sp.csr_array) -> tuple[SymmetricGraph, CountingAhat]:
    graph = symmetric_graph(adjacency)
    ahat = CountingAhat(graph.ahat)
    return dataclasses.replace(graph, ahat=ahat), ahat  # type: ignore[arg-type]


def test_cg_reports_the_products_it_took_and_its_true_residual() -> None:
    rng = np.random.default_rng(11)
    adjacency, dense = random_graph(rng, 40, 0.1)
    x = rng.random(40)
    graph, ahat = counted(adjacency)
    result = ppr_with_stats(graph, x, 0.85, 1e-6)
    assert result.matvecs == ahat.products
    system = np.eye(40) - 0.85 * dense_ahat(dense)
    true_residual = np.linalg.norm(x - system @ (result.scores / 0.15)) / np.linalg.norm(x)
    assert result.residual == pytest.approx(true_residual, rel=1e-6, abs=1e-15)
    assert result.converged


def test_a_zero_query_converges_with_no_residual() -> None:
    adjacency, _ = random_graph(np.random.default_rng(1), 10, 0.3)
    result = ppr_with_stats(adjacency, np.zeros(10))
    assert (result.residual, result.converged) == (0.0, True)


def test_power_iteration_reports_its_rounds_and_stops_at_maxiter_unconverged() -> None:
    rng = np.random.default_rng(5)
    adjacency, dense = random_graph(rng, 30, 0.15)
    x = rng.random(30)
    graph, ahat = counted(adjacency)
    stopped = ppr_power_iteration(graph, x, 0.85, 1e-12, maxiter=3)
    assert (stopped.matvecs, ahat.products, stopped.converged) == (3, 3, False)
    # three rounds of s <- rho*Ahat*s + (1-rho)*x from s = (1-rho)*x
    ahat_dense = dense_ahat(dense)
    s = 0.15 * x
    for _ in range(3):
        last, s = s, 0.85 * ahat_dense @ s + 0.15 * x
    np.testing.assert_allclose(stopped.scores, s, rtol=1e-12)
    assert stopped.residual == pytest.approx(np.linalg.norm(s - last), rel=1e-9)
    graph, ahat = counted(adjacency)
    done = ppr_power_iteration(graph, x)  # the defaults: rho 0.85, tol 1e-8
    assert done.converged
    assert done.matvecs == ahat.products
    np.testing.assert_allclose(done.scores, ppr(adjacency, x, 0.85, 1e-10), rtol=1e-6)


def test_local_push_counts_every_node_it_pushed() -> None:
    # two nodes joined by one edge (degree 1 each), seed 0, rho 0.85, eps 0.5: the residual
    # bounces 1 -> 0.85 -> 0.7225 -> 0.614 -> 0.522 -> 0.444, pushed while above 0.5 * 1:
    # five pushes, one per round.
    link = np.array([[0.0, 1.0], [0.0, 0.0]])
    assert ppr_push(link, 0, 0.85, 0.5).pushes == 5
    lonely = ppr_push(np.zeros((2, 2)), 1, 0.85, 0.5)
    assert (lonely.pushes, lonely.eps) == (0, 0.5)


def test_causal_accuracy_of_one_hop_count_is_a_number_and_of_several_an_array() -> None:
    one = causal_accuracy(1.0, 2.0, 0.5)
    assert isinstance(one, float)
    assert one == pytest.approx(2.0 * math.log(2.0) - 0.5)
    several = causal_accuracy([0.0, 1.0], 2.0, 0.5)
    assert isinstance(several, np.ndarray)
    np.testing.assert_allclose(several, [0.0, 2.0 * math.log(2.0) - 0.5])


def test_hop_and_gap_inputs_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^B and N must be > 0 \(C\(h\) has no finite maximum"):
        optimal_hops(0.0, 1.0)
    with pytest.raises(ValueError, match=r"^a spectral gap needs at least two nodes$"):
        spectral_gap(np.zeros((1, 1)))
    # two linked nodes: Ahat has eigenvalues 1 and -1, so the gap is 2
    assert spectral_gap(np.array([[0.0, 1.0], [0.0, 0.0]])) == pytest.approx(2.0)


def test_the_tolerance_asked_for_is_the_one_solved_to() -> None:
    rng = np.random.default_rng(13)
    adjacency, dense = random_graph(rng, 60, 0.08)
    x = rng.random(60)
    exact = 0.15 * np.linalg.solve(np.eye(60) - 0.85 * dense_ahat(dense), x)
    loose = ppr_with_stats(adjacency, x, 0.85, 0.5)
    np.testing.assert_array_equal(ppr(adjacency, x, 0.85, 0.5), loose.scores)
    default = ppr_with_stats(adjacency, x)  # tol 1e-8
    assert np.linalg.norm(default.scores - exact) <= 1e-8 * np.linalg.norm(exact)
    converged = ppr_power_iteration(adjacency, x)
    assert 0.0 < converged.residual < 1e-6


def test_a_local_push_lists_the_nodes_it_reached_and_its_eps() -> None:
    pushed = ppr_push(np.array([[0.0, 1.0], [0.0, 0.0]]), 0, 0.85, 0.5)
    assert pushed.nodes.tolist() == [0, 1]
    assert pushed.eps == 0.5


@pytest.mark.parametrize(("rho", "tol"), [(0.85, 1e-4), (0.5, 1e-6), (0.95, 1e-3)])
def test_conjugate_gradients_stop_at_the_residual_that_bounds_the_error_and_no_later(
    rho: float, tol: float
) -> None:
    # The residual target is the tolerance tightened by the condition number's 1/k
    # (I - rho*Ahat has spectrum [1-rho, 1+rho]): tight enough that the scores' error is
    # within tol, no tighter, so a query pays no matvec it does not need.
    rng = np.random.default_rng(29)
    adjacency, dense = random_graph(rng, 200, 0.03)
    x = rng.random(200)
    target = tol * (1.0 - rho) / (1.0 + rho)
    solved = ppr_with_stats(adjacency, x, rho, tol)
    assert solved.converged
    assert solved.residual <= target
    one_short = ppr_with_stats(adjacency, x, rho, tol, maxiter=solved.matvecs - 3)
    assert one_short.residual > target
    exact = (1 - rho) * np.linalg.solve(np.eye(200) - rho * dense_ahat(dense), x)
    assert np.linalg.norm(solved.scores - exact) <= tol * np.linalg.norm(exact)
