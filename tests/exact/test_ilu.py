"""The ILU(0)-preconditioned step of the certified solve, at small sizes, against exact facts."""

import numpy as np
import pytest
import scipy.sparse as sp

import nsrl
from nsrl.exact import ExactBackend, certified_solve, dense, evaluation, iterative
from nsrl.exact.operators import policy_rows

ilu = pytest.importorskip("nsrl.exact.ilu", exc_type=ImportError)  # compiled only


def _factors(A):
    lu, diag = ilu.ilu0(A.indptr, A.indices, A.data)
    F = sp.csr_matrix((lu, A.indices, A.indptr), shape=A.shape).toarray()
    L = np.tril(F, -1) + np.eye(A.shape[0])
    return L, np.triu(F), diag


def _car_system(n=12, seed=0, transpose=False):
    mdp = nsrl.mountain_car(n, n + 1)
    pi = nsrl.Deterministic(np.random.default_rng(seed).integers(3, size=mdp.n_states))
    P, r = policy_rows(mdp, pi)
    M = (mdp.gamma * (P.T if transpose else P)).tocsr()
    return mdp, M, ((1 - mdp.gamma) * mdp.start if transpose else r)


@pytest.mark.parametrize("transpose", [False, True])
def test_ilu0_reproduces_the_matrix_on_its_pattern(transpose):
    """The defining property of ILU(0): (L U)_ij = a_ij wherever a_ij is stored."""
    _, M, _ = _car_system(transpose=transpose)
    A = ilu.system_matrix(M)
    L, U, diag = _factors(A)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    np.testing.assert_allclose((L @ U)[rows, A.indices], A.data, atol=1e-14)
    assert (np.diag(U) > 0).all() and (A.indices[diag] == np.arange(A.shape[0])).all()


def test_without_fill_ilu0_is_the_exact_lu_and_one_iteration_solves():
    """A chain s -> s + 1 (bidiagonal I - M): no fill, so the preconditioner is A^-1."""
    n = 400
    M = sp.csr_matrix((np.full(n - 1, 0.99), (np.arange(1, n), np.arange(n - 1))), shape=(n, n))
    A = ilu.system_matrix(M)
    L, U, _ = _factors(A)
    np.testing.assert_allclose(L @ U, A.toarray(), atol=1e-15)
    c = np.random.default_rng(0).random(n)
    x = np.zeros(n)
    lu, diag = ilu.ilu0(A.indptr, A.indices, A.data)
    assert ilu.preconditioned_bicgstab(A.indptr, A.indices, A.data, lu, diag, c, x, 1e-12,
                                       50)[0] == 1
    np.testing.assert_allclose(A @ x, c, atol=1e-12)


@pytest.mark.parametrize("transpose", [False, True])
def test_the_preconditioned_solve_certifies_the_exact_solution(monkeypatch, transpose):
    """Plain BiCGSTAB stopped after 1 iteration, no later method: ILU(0) alone certifies."""
    monkeypatch.setattr(iterative, "_PLAIN_ITER", 1)

    def not_reached(*args, **kwargs):
        raise AssertionError("the ILU(0) step should have certified the solve")

    monkeypatch.setattr(iterative, "gmres", not_reached)
    monkeypatch.setattr(iterative, "_sparse_direct", not_reached)
    mdp, M, c = _car_system(transpose=transpose)
    tol = 1e-10 if transpose else 1e-8
    x, bound = certified_solve(M, c, mdp.gamma, tol, order=1 if transpose else np.inf)
    exact = np.linalg.solve(np.eye(mdp.n_states) - M.toarray(), c)
    error = np.abs(x - exact).sum() if transpose else np.abs(x - exact).max()
    assert error <= bound <= tol


def test_fast_mixing_models_get_the_same_numbers_with_or_without_the_preconditioner():
    mdp = nsrl.garnet(500, 4, 4, seed=0)
    P, r = policy_rows(mdp, nsrl.Deterministic(np.zeros(500, dtype=int)))
    M = (mdp.gamma * P).tocsr()
    with_ilu = certified_solve(M, r, mdp.gamma, 1e-8)
    without = certified_solve(M, r, mdp.gamma, 1e-8, precondition=False)
    np.testing.assert_array_equal(with_ilu[0], without[0])
    assert with_ilu[1] == without[1]


def test_once_a_model_needed_the_preconditioner_later_values_start_with_it(monkeypatch):
    """The plain attempt stops at its cap (forced to 1 here): the first value is certified by
    the ILU(0) step, the next ones start there, and all match the dense LU."""
    mdp = nsrl.mountain_car(20, 20)
    monkeypatch.setattr(iterative, "_PLAIN_ITER", 1)
    backend = ExactBackend(mdp)
    backend.dense = False
    seen = []
    solve = iterative.certified_solve

    def spy(*args, **kwargs):
        seen.append(kwargs.get("precondition"))
        return solve(*args, **kwargs)

    monkeypatch.setattr(evaluation, "certified_solve", spy)
    rng = np.random.default_rng(0)
    for _ in range(3):
        pi = nsrl.Deterministic(rng.integers(mdp.n_actions, size=mdp.n_states))
        exact = dense.evaluate_actions(mdp, pi.act(np.arange(mdp.n_states)))
        assert np.abs(backend.value(pi) - exact).max() <= backend.value_tol
    assert seen == [True, "first", "first"]
