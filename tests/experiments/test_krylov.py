"""Certified GMRES and the functional-graph solve against dense LU."""

import numpy as np
import pytest

import nsrl
from nsrl.batched.linalg import gmres
from nsrl.batched.linalg.state import Batch


@pytest.mark.parametrize("shape", [(60, 3, 1), (60, 3, 2), (60, 4, 10)])
@pytest.mark.parametrize("m", [1, 3, 12])
def test_loop_values_match_the_dense_solve(shape, m):
    mdp = nsrl.garnet(*shape, seed=5)
    b = Batch(mdp)
    windows = np.random.default_rng(m).integers(0, shape[1], size=(4, m, shape[0]))
    c = gmres.loop_rhs(b.nxt, b.probs, mdp.R, mdp.gamma, windows)
    x, ok, used = gmres.loop_values(b.nxt, b.probs, windows, mdp.gamma**m, c, np.zeros_like(c))
    exact = b.loop_value(windows)
    assert np.all(used > 0)
    np.testing.assert_allclose(x[ok], exact[ok], rtol=0, atol=1e-9)
    np.testing.assert_allclose(b.loop_krylov(windows, np.zeros_like(c)), exact, atol=1e-9)
    if shape[2] == 10 or m >= 3:
        assert ok.all()  # mixing loops certify well within the budget


@pytest.mark.parametrize("shape", [(60, 3, 2), (60, 4, 10)])
@pytest.mark.parametrize("m", [1, 3, 12])
def test_loop_fixed_points_certify_without_the_loops_rhs(shape, m):
    """x = L x solved from the residual L x0 - x0 alone meets its certified bound."""
    mdp = nsrl.garnet(*shape, seed=6)
    b = Batch(mdp)
    windows = np.random.default_rng(m).integers(0, shape[1], size=(4, m, shape[0]))
    exact = b.loop_value(windows)
    x0 = exact + np.random.default_rng(1).normal(size=exact.shape)  # a poor warm start
    x, ok, used = gmres.loop_fixed_points(b.nxt, b.probs, mdp.R, mdp.gamma, windows, x0)
    assert ok.all() and np.all(used > 0)
    # the promise: ||x - x*||_inf <= rtol ||L x0||_2 (plus the dense solve's own rounding)
    L_x0 = np.empty_like(x0)
    for r in range(len(x0)):
        gmres._chain(b.nxt, b.probs, b.R, mdp.gamma, windows[r], x0[r], L_x0[r],
                      np.empty(shape[0]))
    bound = gmres.RTOL * np.linalg.norm(L_x0, axis=1)
    assert np.all(np.abs(x - exact).max(axis=1) <= bound + 1e-11)
    # a start at the solution is certified at once, with no product
    x, ok, used = gmres.loop_fixed_points(b.nxt, b.probs, mdp.R, mdp.gamma, windows, x)
    assert ok.all() and np.all(used == 0)


def test_functional_values_solve_deterministic_policies_exactly():
    mdp = nsrl.garnet(80, 3, 1, seed=2)
    b = Batch(mdp)
    acts = np.random.default_rng(0).integers(0, 3, size=(5, 80))
    x = gmres.functional_values(b.nxt, acts[:, None, :], mdp.R[b.states, acts], mdp.gamma)
    np.testing.assert_allclose(x, b.evaluate(*b.rows(acts)), rtol=0, atol=1e-10)


@pytest.mark.parametrize("transpose", [False, True])
def test_table_values_and_products(transpose):
    mdp = nsrl.garnet(50, 4, 2, seed=1)
    b = Batch(mdp)
    T = np.random.default_rng(3).dirichlet(np.ones(4), size=(3, 50))
    P = np.einsum("sat,rsa->rst", mdp.P, T)
    x = np.random.default_rng(4).random((3, 50))
    want = np.einsum("rst,rs->rt", P, x) if transpose else np.einsum("rst,rt->rs", P, x)
    np.testing.assert_allclose(gmres.table_mv(b.nxt, b.probs, T, x, transpose), want, atol=1e-13)
    A = np.eye(50) - mdp.gamma * P
    A = np.swapaxes(A, 1, 2) if transpose else A
    sol, ok, _ = gmres.table_values(b.nxt, b.probs, mdp.gamma, T, x, np.zeros_like(x), transpose)
    assert ok.all()
    np.testing.assert_allclose(sol, np.linalg.solve(A, x[..., None])[..., 0], atol=1e-9)
    # an absolute target stops early, and the residual honours it
    loose, ok, used = gmres.table_values(b.nxt, b.probs, mdp.gamma, T, x, np.zeros_like(x),
                                          transpose, atol=np.full(3, 1e-2))
    res = x - np.einsum("rst,rt->rs", A, loose)
    assert ok.all() and np.all(np.linalg.norm(res, axis=1) <= 1e-2)


def test_woodbury_inverses_follow_changing_policies():
    """Low-rank updates of the inverse give the dense solve's values, step after step."""
    from nsrl.batched.linalg.woodbury import PolicyInverse

    mdp = nsrl.garnet(60, 4, 2, seed=8)
    b = Batch(mdp)
    rng = np.random.default_rng(1)
    acts = rng.integers(0, 4, size=(3, 60))
    inverse = PolicyInverse(b, acts)
    for k in range(25):
        acts = acts.copy()
        changed = rng.random(acts.shape) < (0.6 if k == 10 else 0.1)  # k = 10: re-inverted
        acts[changed] = rng.integers(0, 4, changed.sum())
        np.testing.assert_allclose(inverse.values(acts), b.evaluate(*b.rows(acts)),
                                   rtol=0, atol=1e-10)


@pytest.mark.parametrize("m", [1, 4, 30])
def test_functional_values_solve_deterministic_loops_exactly(m):
    mdp = nsrl.garnet(70, 3, 1, seed=9)
    b = Batch(mdp)
    windows = np.random.default_rng(m).integers(0, 3, size=(4, m, 70))
    c = gmres.loop_rhs(b.nxt, b.probs, mdp.R, mdp.gamma, windows)
    x = gmres.functional_values(b.nxt, windows, c, mdp.gamma**m)
    np.testing.assert_allclose(x, b.loop_value(windows), rtol=0, atol=1e-9)


def test_line_search_choice_flags_candidates_whose_intervals_overlap_the_best():
    """choose() keeps rules' first best and marks what its bounds cannot rank."""
    from nsrl.batched.linalg.linesearch import choose
    from nsrl.schemes import rules

    alpha = np.array([0.3, 0.0, 1.0, 1e-3])
    owner, steps = rules.line_search_steps(alpha)
    score = np.zeros(owner.size)
    score[owner == 3] = -np.abs(np.log2(steps[owner == 3]) + 5)  # best at step 2^-5 > 1e-3
    score[owner == 0] = [1.0, 1.0, 0.0]  # a tie: the first (smaller step) wins
    best, uncertain = choose(owner, score, np.zeros(owner.size))
    assert steps[best].tolist()[:2] == [0.3, 1.0] and steps[best][2] == 0.032
    assert uncertain[owner == 0].tolist() == [True, True, False]  # tied: not certified apart
    err = np.full(owner.size, 1e-3)
    _, loose = choose(owner, score, err)
    assert not loose[owner == 2].any()  # a run with one candidate is always settled
