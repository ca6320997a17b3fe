"""v* by modified policy iteration against a dense solve, and the honesty of its certificate.

The reference is independent of the backend: brute-force policy iteration on the dense P,
each policy evaluated by ``numpy.linalg.solve`` (the ``dense_v_star`` fixture). Theory says
every certified bound must hold: ``|v - v*|_inf <= bound`` (a recomputed Bellman residual;
MacQueen's midpoint only decides when to certify), so each test checks it against the true
error.
"""

import numpy as np
import pytest

import nsrl
from nsrl.exact import ExactBackend, NotCertifiedError, mpi, operators
from nsrl.exact.mpi import optimal_mpi

MODELS = {
    "garnet b=1": lambda g: nsrl.garnet(150, 4, 1, gamma=g, seed=1),
    "garnet b=2": lambda g: nsrl.garnet(200, 5, 2, gamma=g, seed=2),
    "garnet b=8": lambda g: nsrl.garnet(120, 3, 8, gamma=g, seed=3),
    "gridworld": lambda g: nsrl.gridworld(12, gamma=g, seed=0),
    "mountain car": lambda g: nsrl.mountain_car(12, 12, gamma=g),
}


@pytest.mark.parametrize("gamma", [0.5, 0.99, 0.999])
@pytest.mark.parametrize("name", list(MODELS))
def test_mpi_matches_the_dense_solve_within_its_certified_bound(name, gamma, dense_v_star):
    mdp = MODELS[name](gamma)
    tol = 1e-10 * mdp.r_max / (1 - gamma)
    v, bound, stats = optimal_mpi(mdp, tol)
    error = np.abs(v - dense_v_star(mdp)).max()
    assert 0 < bound <= tol
    assert error <= bound, (error, bound)
    assert stats["greedy"] >= 2  # at least one greedy step and the certifying one


def test_the_krylov_evaluation_gives_the_same_certified_v_star(monkeypatch, dense_v_star):
    mdp = nsrl.gridworld(12, gamma=0.999, seed=0)
    tol = 1e-10 * mdp.r_max / (1 - mdp.gamma)
    calls = []
    krylov = mpi._Rows.krylov

    def counted(self, *args):
        calls.append(1)
        return krylov(self, *args)

    monkeypatch.setattr(mpi, "KRYLOV_AFTER", 0)
    monkeypatch.setattr(mpi._Rows, "krylov", counted)
    v, bound, _ = optimal_mpi(mdp, tol)
    assert calls, "the Krylov evaluation was not used"
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= tol


def test_a_loose_tolerance_is_certified_and_honest(dense_v_star):
    mdp = nsrl.garnet(200, 5, 2, seed=4)
    v, bound, _ = optimal_mpi(mdp, 1e-3)
    assert np.abs(v - dense_v_star(mdp)).max() <= bound <= 1e-3


def test_a_warm_start_at_v_star_needs_one_evaluation():
    mdp = nsrl.garnet(200, 5, 2, seed=4)
    tol = 1e-10 / (1 - mdp.gamma)
    v, _, _ = optimal_mpi(mdp, tol)
    _, bound, stats = optimal_mpi(mdp, tol, v0=v)
    assert bound <= tol and stats["greedy"] <= 3


def test_when_rounding_exceeds_the_tolerance_mpi_refuses_rather_than_returns(monkeypatch):
    mdp = nsrl.garnet(200, 5, 2, seed=4)
    monkeypatch.setattr(mpi, "residual_rounding", lambda *_: 1.0)
    with pytest.raises(NotCertifiedError, match="certified error of"):
        optimal_mpi(mdp, 1e-6)


def test_the_backend_uses_mpi_above_the_dense_size_and_reports_its_bound(monkeypatch, dense_v_star):
    mdp = nsrl.garnet(400, 4, 2, seed=0)
    used = []
    monkeypatch.setattr(mpi, "optimal_mpi",
                        lambda *a, **k: used.append(1) or optimal_mpi(*a, **k))
    b = ExactBackend(mdp)
    v = b.optimal_value()
    assert used and not b.dense
    assert np.abs(v - dense_v_star(mdp)).max() <= b.v_star_bound <= b.value_tol


def test_the_span_test_never_stands_in_for_the_certificate():
    # The certificate is gamma (|T w - w| + delta) / (1 - gamma) of the returned v = fl(T w):
    # so |T v - v| <= gamma |T w - w| <= (1 - gamma) bound, up to rounding.
    mdp = nsrl.garnet(300, 6, 3, seed=5)
    v, bound, _ = optimal_mpi(mdp, 1e-6)
    residual = np.abs(operators.q_values(mdp, v).max(axis=1) - v).max()
    assert residual / (1 - mdp.gamma) <= bound + operators.residual_rounding(mdp, v) / (
        1 - mdp.gamma)
