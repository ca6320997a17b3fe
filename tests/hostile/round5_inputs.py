"""Builders of tests/hostile/test_round5.py (issue 47): each cheap, each stating what it checks.

A ``*_holds`` builder asserts a property itself (a number computed right, compared with the
exactly normalised model or with another path); the others build an input that must be
refused in one line.
"""

from __future__ import annotations

import numpy as np

import nsrl
from nsrl import FiniteMDP


def _tables(n_states: int, n_actions: int, seed: int) -> np.ndarray:
    t = np.random.default_rng(seed).random((n_states, n_actions))
    return t / t.sum(axis=1, keepdims=True)


def _same_loss(mdp: FiniteMDP, given: object, normalised: object) -> None:
    """Both policies' losses agree within the backend's value tolerance (twice: two values)."""
    tol = 2 * nsrl.exact.backend(mdp).value_tol
    a, b = nsrl.loss(mdp, given), nsrl.loss(mdp, normalised)
    assert abs(a - b) <= tol, (a, b, tol)


def stochastic_sum_holds(gamma: float, excess: float = 1e-5) -> None:
    """Rows summing to 1 + excess give the loss of the exactly normalised table.

    Issue 47: at gamma 0.99999 the loss was -4.96e9 against 1.69e4; at 0.9999, 1138 against 1689.
    """
    mdp = nsrl.garnet(50, 2, 2, seed=0, gamma=gamma)
    t = _tables(50, 2, 0)
    _same_loss(mdp, nsrl.Stochastic(t * (1 + excess)), nsrl.Stochastic(t))


def float32_softmax_holds() -> None:
    """A float32 softmax (rows off by ~1e-7) is the distribution it stands for (gamma 0.9999)."""
    mdp = nsrl.garnet(50, 2, 2, seed=0, gamma=0.9999)
    logits = np.random.default_rng(3).normal(size=(50, 2)).astype(np.float32)
    soft = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert np.abs(soft.sum(axis=1, dtype=np.float64) - 1).max() > 1e-8  # really off
    exact = soft.astype(np.float64)
    exact /= exact.sum(axis=1, keepdims=True)
    _same_loss(mdp, nsrl.Stochastic(soft), nsrl.Stochastic(exact))


def mixture_weights_holds() -> None:
    """Mixture weights off by 1e-6 give the mixture of the normalised weights (gamma 0.99999)."""
    mdp = nsrl.garnet(50, 2, 2, seed=0, gamma=0.99999)
    a, b = nsrl.Deterministic([0] * 50), nsrl.Deterministic([1] * 50)
    off = nsrl.Mixture([(0.3, a), (0.7 + 1e-6, b)])
    assert abs(off.weights.sum() - 1) <= 4e-16
    _same_loss(mdp, off, nsrl.Mixture([(0.3 / (1 + 1e-6), a), (1 - 0.3 / (1 + 1e-6), b)]))


def transition_rows_holds(build: str) -> None:
    """Rows summing to 1 + 9e-9 (inside the old ROW_TOL) give the v* of the normalised model.

    Issue 47: v* moved by 65 while the certificate said 7.7e-6 (gamma 1 - 1e-5). Every
    constructor: successor lists, a dense P, a scipy.sparse P.
    """
    g = nsrl.garnet(50, 2, 2, seed=0, gamma=0.99999)
    nxt, p = g.successors
    p = p * (1 + 9e-9)
    if build == "successors":
        off = FiniteMDP.from_successors(nxt, p, g.R, g.gamma)
    elif build == "dense":
        off = FiniteMDP(g.P * (1 + 9e-9), g.R, g.gamma)
    else:
        off = FiniteMDP.from_sparse(g.P_csr * (1 + 9e-9), g.R, g.gamma)
    assert off.row_error <= 1e-15
    a, b = nsrl.optimal_value(off), nsrl.optimal_value(g)
    assert np.abs(a - b).max() <= a.bound + b.bound, (np.abs(a - b).max(), a.bound)


def start_sum_holds() -> None:
    """A start distribution off by 1e-6 is divided out (its sum is 1 within rounding)."""
    g = nsrl.garnet(20, 2, 2, seed=0)
    m = FiniteMDP.from_successors(*g.successors, g.R, 0.9, start=np.full(20, 0.05 * (1 + 1e-6)))
    assert abs(m.start.sum() - 1) <= 20 * np.finfo(float).eps


def inline_dict(n_states: int = 5, n_actions: int = 2, **change) -> dict:
    """A Garnet as FiniteMDP-v0's inline ``mdp=<dict>``, with next_states[3][1][0] = change."""
    from nsrl.envs.export import to_dict

    data = to_dict(nsrl.garnet(n_states, n_actions, 2, n_features=2, seed=0))
    if "successor" in change:
        data["next_states"][3][1][0] = change["successor"]
    return data


def make_inline(data: dict) -> object:
    import gymnasium as gym

    import nsrl.envs  # noqa: F401 - registers the ids

    return gym.make("FiniteMDP-v0", mdp=data)


def inline_dict_memory_holds() -> None:
    """A 20,000-state inline model is built from its successor lists, never a dense P.

    Issue 47: a dense (S, A, S) array first (6 GiB asked at 20,000 states). Here the machine
    has 64 MiB (pinned) and the build's own peak stays under 16 MiB, the model equal to the
    Garnet it describes.
    """
    import tracemalloc
    from unittest import mock

    from nsrl.envs.export import from_dict

    data = inline_dict(20_000, 2)
    with mock.patch.object(nsrl.model.memory, "available_memory", lambda: 64 * 2**20):
        tracemalloc.start()
        try:
            mdp = from_dict(data)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 16 * 2**20, peak
    assert mdp == nsrl.garnet(20_000, 2, 2, n_features=2, seed=0)


def cached_env_type_holds(env_id: str, name: str, value: int) -> None:
    """``name=float(value)`` is refused after an accepted call with ``name=value`` (issue 47).

    The env caches its model; 10 == 10.0 hashed alike, so the float found the int's model.
    """
    import gymnasium as gym
    import pytest

    gym.make(env_id, **{name: value})
    with pytest.raises(TypeError, match=rf"{name} should be an int, got {float(value)!r}"):
        gym.make(env_id, **{name: float(value)})
