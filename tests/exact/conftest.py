"""A reference v* for the exact backend's tests, independent of nsrl.exact."""

import numpy as np
import pytest


def _brute_force_v_star(mdp):
    """v* by policy iteration on the dense P, each policy solved by numpy.linalg.solve."""
    P, R, g = mdp.P, mdp.R, mdp.gamma
    s = np.arange(mdp.n_states)
    actions = np.zeros(mdp.n_states, dtype=int)
    for _ in range(1000):
        v = np.linalg.solve(np.eye(mdp.n_states) - g * P[s, actions], R[s, actions])
        q = R + g * P @ v
        better = q.max(axis=1) > q[s, actions] + 1e-13 * (1 + np.abs(v).max())
        if not better.any():
            return v
        actions = np.where(better, q.argmax(axis=1), actions)
    raise AssertionError("policy iteration did not converge")


@pytest.fixture
def dense_v_star():
    """The function mdp -> v* by brute-force dense policy iteration."""
    return _brute_force_v_star
