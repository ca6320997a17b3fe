"""Garnet random MDPs G(n_S, n_A, b, p) (Archibald et al. 1995), as in Scherrer (2014), suppl."""

from __future__ import annotations

import numbers

import numpy as np

from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory, format_bytes

# Peak bytes per entry of the dense (n_S, n_A, n_S) arrays while drawing: the sort keys, their
# argsort, P, and FiniteMDP's copy of P (8 bytes each), plus its checks (measured: 33.2).
_PEAK_BYTES_PER_ENTRY = 34


def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} should be an int, got {value!r}.")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} should be {bound}, got {value}.")
    return int(value)


def garnet_nbytes(n_states: int, n_actions: int, n_features: int) -> int:
    """Estimated peak memory of :func:`garnet` (bytes), dominated by the dense P."""
    return _PEAK_BYTES_PER_ENTRY * n_states * n_actions * n_states + 8 * n_states * n_features


def garnet(
    n_states: int,
    n_actions: int,
    branching: int,
    n_features: int | None = None,
    gamma: float = 0.99,
    *,
    seed: int | np.random.Generator,
) -> FiniteMDP:
    """Draw a Garnet MDP G(n_states, n_actions, branching, n_features).

    For each (s, a), ``branching`` distinct next states are drawn uniformly without
    replacement and the probability mass is split by ``branching - 1`` sorted uniform cut
    points in [0, 1]. The reward depends on the state only, r(s) ~ U[0, 1]; the features
    Phi are n_states x p with entries ~ U[0, 1], p = n_states // 10 by default (at least 1).
    The dense P takes n_states^2 n_actions 8 bytes (drawing it about four times that): a
    size that does not fit in the available memory is refused before anything is allocated.
    Draws happen in this order from one PCG64 generator: successors, cut points, rewards,
    features; the same seed gives the same instance on any machine.

    Args:
        n_states: number of states n_S >= 1.
        n_actions: number of actions n_A >= 1.
        branching: number of successors b of each (s, a), 1 <= b <= n_states.
        n_features: number of features p (default n_states // 10, at least 1).
        gamma: discount factor in (0, 1).
        seed: the instance seed (int) or a Generator.

    Returns:
        The Garnet as a FiniteMDP with ``features`` set.

    Raises:
        ValueError: a size out of range, or too large for the available memory.
        TypeError: a size or seed that is not an int.

    Examples:
        >>> mdp = garnet(50, 2, 1, seed=0)
        >>> mdp.P.shape, mdp.features.shape
        ((50, 2, 50), (50, 5))
    """
    n_states = _check_int("n_states", n_states, 1)
    n_actions = _check_int("n_actions", n_actions, 1)
    branching = _check_int("branching", branching, 1, n_states)
    if n_features is None:
        n_features = max(1, n_states // 10)
    n_features = _check_int("n_features", n_features, 1)
    check_memory(garnet_nbytes(n_states, n_actions, n_features),
                 f"garnet({n_states}, {n_actions}, {branching}) (its dense P[s, a, s'] is "
                 f"{format_bytes(8 * n_states * n_actions * n_states)}, drawn with ~4 such arrays)",
                 "use fewer states or actions")
    if isinstance(seed, np.random.Generator):
        rng = seed
    elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        rng = np.random.Generator(np.random.PCG64(int(seed)))
    else:
        raise TypeError(f"seed should be a non-negative int or a numpy Generator, got {seed!r}.")
    # b distinct successors per (s, a): the first b entries of a uniform random permutation.
    keys = rng.random((n_states, n_actions, n_states))
    succ = np.argsort(keys, axis=2, kind="stable")[:, :, :branching]
    cuts = np.sort(rng.random((n_states, n_actions, branching - 1)), axis=2)
    edges = np.concatenate(
        [np.zeros((n_states, n_actions, 1)), cuts, np.ones((n_states, n_actions, 1))], axis=2
    )
    probs = np.diff(edges, axis=2)
    P = np.zeros((n_states, n_actions, n_states))
    np.put_along_axis(P, succ, probs, axis=2)
    r = rng.random(n_states)
    features = rng.random((n_states, n_features))
    return FiniteMDP(P, r, gamma, features=features)
