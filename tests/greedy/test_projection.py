"""The projected operator's Pi_{Phi,rho}: the same least-squares projection on every path.

A new rho is projected with ``lstsq``; a rho seen again with the thin SVD kept from its second
call. Both must be the rho-weighted orthogonal projection on span(Phi), minimum-norm where
sqrt(rho) Phi is rank-deficient (a rho of small support, repeated features).
"""

import numpy as np
import pytest

import nsrl


def _reference(phi, v, rho):
    w = np.sqrt(rho)
    return phi @ np.linalg.lstsq(w[:, None] * phi, w * v, rcond=None)[0]


def _rhos(n, rng):
    uniform = np.full(n, 1.0 / n)
    positive = rng.random(n) + 0.01
    small = np.zeros(n)
    small[rng.choice(n, size=3, replace=False)] = 1.0  # support 3 < p: rank-deficient
    return {"uniform": uniform, "positive": positive / positive.sum(), "small support": small / 3}


@pytest.mark.parametrize("repeated_feature", [False, True])
def test_every_call_on_a_rho_is_the_least_squares_projection(repeated_feature):
    mdp = nsrl.garnet(80, 3, 2, n_features=8, seed=4)
    phi = mdp.features
    if repeated_feature:  # Phi itself rank-deficient
        phi = np.hstack([phi, phi[:, :2]])
    op = nsrl.ProjectedGreedy(mdp, features=phi)
    rng = np.random.default_rng(0)
    for name, rho in _rhos(mdp.n_states, rng).items():
        for call in range(4):  # call 0: lstsq; 1: the SVD is computed; 2, 3: kept
            v = rng.uniform(-40, 60, size=mdp.n_states)
            out = op.project(v, rho)
            ref = _reference(op.features, v, rho)
            assert np.abs(out - ref).max() <= 1e-9 * np.abs(ref).max(), (name, call)
            # the rho-weighted residual is orthogonal to every feature, and Pi is idempotent
            # on the states rho weighs
            residual = op.features.T @ (rho * (v - out))
            assert np.abs(residual).max() <= 1e-9 * np.abs(op.features.T @ (rho * v)).max()
            again = op.project(out, rho)
            assert np.abs((again - out)[rho > 0]).max() <= 1e-9 * np.abs(out).max()
        assert op._kept is not None and op._kept[1] is not None  # the SVD was kept


def test_a_new_rho_replaces_the_kept_one_and_the_old_one_is_recomputed_right():
    mdp = nsrl.garnet(60, 2, 2, n_features=6, seed=5)
    op = nsrl.ProjectedGreedy(mdp)
    rng = np.random.default_rng(1)
    rhos = list(_rhos(mdp.n_states, rng).values())
    for rho in [rhos[0], rhos[0], rhos[1], rhos[0], rhos[0], rhos[2], rhos[1]]:
        v = rng.uniform(0, 10, size=mdp.n_states)
        ref = _reference(op.features, v, rho)
        assert np.abs(op.project(v, rho) - ref).max() <= 1e-9 * np.abs(ref).max()
    # the kept rho is a copy: changing the caller's array in place cannot reuse a stale SVD
    rho = rhos[1].copy()
    op.project(np.ones(mdp.n_states), rho)
    op.project(np.ones(mdp.n_states), rho)
    rho[:] = rhos[0]
    v = rng.uniform(0, 10, size=mdp.n_states)
    ref = _reference(op.features, v, rho)
    assert np.abs(op.project(v, rho) - ref).max() <= 1e-9 * np.abs(ref).max()
