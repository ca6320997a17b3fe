"""The iterative exact backend (large models) against the dense one, at small sizes.

Every code path of the large-model backend runs here on models of a few hundred states
with ``dense=False`` forced, and is compared with the dense LU of the same backend.
"""

import numpy as np
import pytest

import nsrl
from nsrl.exact import (
    ExactBackend,
    NotCertifiedError,
    certified_solve,
    functional_solve,
    iterative,
    q_values,
)


def _pair(mdp):
    dense, large = ExactBackend(mdp), ExactBackend(mdp)
    large.dense = False
    assert dense.dense
    return dense, large


def _policies(mdp, seed=0):
    rng = np.random.default_rng(seed)
    det = [nsrl.Deterministic(rng.integers(mdp.n_actions, size=mdp.n_states)) for _ in range(4)]
    table = rng.random((mdp.n_states, mdp.n_actions))
    mixture = nsrl.Mixture([(0.3, det[0]), (0.5, det[1]), (0.2, det[2])])
    return {
        "deterministic": det[0],
        "stochastic": nsrl.Stochastic(table / table.sum(axis=1, keepdims=True)),
        "mixture": mixture,
        "sequence": nsrl.NonStationary(det[:3], loop=False),
        "repeated sequence": nsrl.NonStationary.repeated(det[1], 40, loop=False),
        "loop": nsrl.NonStationary(det[:3], loop=True),
        "loop with a mixture": nsrl.NonStationary([det[0], mixture], loop=True),
        "repeated loop": nsrl.NonStationary.repeated(det[2], 10**9),
        "long loop": nsrl.NonStationary(det * 30, loop=True),
        "prepended": nsrl.NonStationary.empty().prepend(det[0]).prepend(det[1]),
    }


@pytest.mark.parametrize("branching", [1, 2, 10])
def test_every_policy_kind_matches_the_dense_backend(branching):
    mdp = nsrl.garnet(120, 4, branching, seed=branching)
    dense, large = _pair(mdp)
    for name, pi in _policies(mdp).items():
        v_dense, v_large = dense.value(pi), large.value(pi)
        assert np.abs(v_dense - v_large).max() <= large.value_tol + 1e-9, name


@pytest.mark.parametrize("branching", [1, 2, 10])
def test_optimal_value_is_certified_and_matches(branching):
    mdp = nsrl.garnet(150, 5, branching, seed=3)
    dense, large = _pair(mdp)
    v = large.optimal_value()
    assert 0 < large.v_star_bound <= large.value_tol or branching == 1
    assert np.abs(v - dense.optimal_value()).max() <= large.value_tol
    # the certificate is what it says: |T v - v| / (1 - gamma)
    residual = np.abs(q_values(mdp, v).max(axis=1) - v).max()
    assert residual / (1 - mdp.gamma) <= large.v_star_bound * (1 + 1e-6) + 1e-12


def test_occupancy_and_loss_match_the_dense_backend():
    mdp = nsrl.garnet(100, 3, 2, seed=5)
    dense, large = _pair(mdp)
    for name in ("deterministic", "mixture"):
        pi = _policies(mdp)[name]
        d_dense, d_large = dense.occupancy(pi), large.occupancy(pi)
        assert np.abs(d_dense - d_large).sum() <= 1e-9 and abs(d_large.sum() - 1) < 1e-12
        assert abs(dense.loss(pi) - large.loss(pi)) <= 2 * large.value_tol


def test_functional_solve_is_exact_on_cycles_and_trees():
    F = np.array([1, 2, 0, 0, 3, 5])  # a 3-cycle, a tree into it, a fixed point
    c = np.arange(6, dtype=float)
    x = functional_solve(F, c, 0.9)
    np.testing.assert_allclose(x, c + 0.9 * x[F], atol=1e-12)


def test_certified_solve_returns_the_bound_it_certifies():
    rng = np.random.default_rng(0)
    P = rng.random((50, 50))
    P /= P.sum(axis=1, keepdims=True)
    c = rng.random(50)
    for M in (lambda x: 0.95 * P @ x, __import__("scipy.sparse").sparse.csr_matrix(0.95 * P)):
        x, bound = certified_solve(M, c, 0.95, 1e-9)
        exact = np.linalg.solve(np.eye(50) - 0.95 * P, c)
        assert np.abs(x - exact).max() <= bound <= 1e-9


def test_a_solve_that_cannot_reach_its_tolerance_raises(monkeypatch):
    monkeypatch.setattr(iterative, "_MAX_ITER", 1)
    monkeypatch.setattr(iterative, "_sparse_direct", lambda M, c: None)  # no memory for LU
    mdp = nsrl.garnet(200, 3, 2, seed=1)
    _, large = _pair(mdp)
    large._sweeps_win = False  # the Krylov path (MPI's sweeps would certify this Garnet)
    with pytest.raises(NotCertifiedError, match="above the tolerance"):
        large.value(nsrl.Deterministic(np.zeros(200, dtype=int)))


def test_large_models_pick_the_iterative_method():
    assert not ExactBackend(nsrl.garnet(400, 2, 2, seed=0)).dense
    assert ExactBackend(nsrl.garnet(300, 2, 2, seed=0)).dense


def test_a_chain_that_stalls_krylov_is_solved_by_the_sparse_lu_fallback(monkeypatch):
    """A near-deterministic cycle: with one Krylov iteration allowed, SuperLU certifies it."""
    import scipy.sparse as sp

    monkeypatch.setattr(iterative, "_MAX_ITER", 1)
    n = 500
    M = sp.csr_matrix((np.full(n, 0.999), (np.arange(n), (np.arange(n) + 1) % n)), shape=(n, n))
    c = np.random.default_rng(0).random(n)
    x, bound = certified_solve(M, c, 0.999, 1e-9)
    assert bound <= 1e-9 and np.abs(x - (c + M @ x)).max() <= 1e-9 * (1 - 0.999)


@pytest.mark.skipif(not iterative.HAVE_NUMBA, reason="the compiled BiCGSTAB needs numba")
def test_a_bicgstab_breakdown_stops_the_solver_instead_of_dividing_by_zero():
    """rhat . (I - M) p = 0 at the first step: c = e_1 and I - M = [[0, -1], [1, 0]]."""
    M = iterative.sp.csr_matrix(np.array([[1.0, 1.0], [-1.0, 1.0]]))
    x = np.zeros(2)
    its = iterative._bicgstab(M.indptr, M.indices, M.data, np.array([1.0, 0.0]), x, 1e-12, 10)
    assert its == 0 and np.array_equal(x, np.zeros(2))  # nothing done, nothing raised


def test_shifted_loops_start_from_the_previous_loop_and_match_the_dense_backend(monkeypatch):
    """NSPI(m)'s loops, each shifted by one policy: the solve of each loop after the first
    starts at T_pi of the previous loop's value, and every value is the dense one."""
    mdp = nsrl.garnet(150, 4, 3, seed=7)
    dense, large = _pair(mdp)
    starts = []
    solve = iterative.certified_solve

    def spy(M, c, kappa, tol, **kwargs):
        starts.append(kwargs.get("x0"))
        return solve(M, c, kappa, tol, **kwargs)

    monkeypatch.setattr("nsrl.exact.evaluation.certified_solve", spy)
    rng = np.random.default_rng(1)
    loop = nsrl.NonStationary.repeated(nsrl.Deterministic(np.zeros(mdp.n_states, int)), 4)
    previous = None
    for _ in range(6):
        loop = loop.shifted(nsrl.Deterministic(rng.integers(mdp.n_actions, size=mdp.n_states)))
        v = large.value(loop)
        assert np.abs(v - dense.value(loop)).max() <= large.value_tol + 1e-9
        if previous is not None:  # the start is T_pi v_previous, pi the loop's newest policy
            assert np.array_equal(starts[-1], nsrl.exact.apply_policy(
                mdp, loop.segments[0][0], previous))
        previous = v
    assert starts[0] is None and all(x is not None for x in starts[1:])
