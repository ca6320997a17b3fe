"""Exact values of small models by dense linear algebra, as in every earlier version.

Used by :class:`nsrl.exact.ExactBackend` up to ``DENSE_MAX_STATES`` states: one LU per
stationary policy (``numpy.linalg.solve``), loops as ``(I - M) v = c`` with M dense, repeated
segments by repeated squaring. ``I - gamma P_pi`` has condition number at most
(1 + gamma) / (1 - gamma), 2e3 at gamma = 0.999, so float64 keeps about 12 correct digits.
"""

from __future__ import annotations

from typing import overload

import numpy as np

from nsrl.exact.operators import apply_policy
from nsrl.model.mdp import FiniteMDP
from nsrl.policies import Policy, action_table, stationary_table

DENSE_MAX_STATES = 300  # dense LU up to here; certified iterative solves above (measured)


def transition_matrix(mdp: FiniteMDP, table: np.ndarray) -> np.ndarray:
    """P_pi[s, s'] = sum_a pi[s, a] P[s, a, s'] (batched over leading axes of ``table``).

    Built from the sparse successors by one weighted ``bincount``: O(S A b) work per table
    instead of the O(S^2 A) of a dense contraction.
    """
    nxt, probs = mdp.successors
    n = mdp.n_states
    table = np.asarray(table, dtype=np.float64)
    batch = table.shape[:-2]
    weights = table[..., None] * probs  # [..., s, a, j]
    flat = np.arange(n)[:, None, None] * n + nxt  # index of (s, s') in the S x S matrix
    offsets = np.arange(int(np.prod(batch, dtype=np.int64))).reshape(batch + (1, 1, 1)) * n * n
    counts = np.bincount(
        (flat + offsets).ravel(),
        weights.ravel(),
        minlength=weights.size and int(np.prod(batch, dtype=np.int64)) * n * n,
    )
    return counts.reshape(batch + (n, n))


def evaluate_tables(mdp: FiniteMDP, tables: np.ndarray) -> np.ndarray:
    """Values v_pi of a batch of stationary tables pi[..., s, a] (one batched LU solve)."""
    tables = np.asarray(tables, dtype=np.float64)
    r_pi = (tables * mdp.R).sum(axis=-1)
    A = np.eye(mdp.n_states) - mdp.gamma * transition_matrix(mdp, tables)
    return np.linalg.solve(A, r_pi[..., None])[..., 0]


def evaluate_actions(mdp: FiniteMDP, actions: np.ndarray) -> np.ndarray:
    """v_pi of the deterministic policy pi(s) = actions[s] (one dense LU)."""
    s = np.arange(mdp.n_states)
    A = np.eye(mdp.n_states) - mdp.gamma * mdp.P[s, actions]
    return np.linalg.solve(A, mdp.R[s, actions])


def propagate(mdp: FiniteMDP, pi: Policy, M: np.ndarray) -> np.ndarray:
    """gamma P_pi M for a matrix M[s', j] (sparse successors)."""
    nxt, probs = mdp.successors
    if getattr(pi, "stochastic", False):
        w = pi.table(mdp)[:, :, None] * probs  # [s, a, j]
        return mdp.gamma * np.einsum("saj,sajk->sk", w, M[nxt])
    a = action_table(pi, mdp)
    s = np.arange(mdp.n_states)
    return mdp.gamma * np.einsum("sj,sjk->sk", probs[s, a], M[nxt[s, a]])


# A policy repeated more than this many times in a row is applied in closed form.
_REPEAT_BY_POWERS = 16


@overload
def repeat(mdp: FiniteMDP, pi: Policy, count: int, c: np.ndarray,
           M: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def repeat(mdp: FiniteMDP, pi: Policy, count: int, c: np.ndarray,
           M: None = None) -> tuple[np.ndarray, None]: ...
def repeat(mdp: FiniteMDP, pi: Policy, count: int, c: np.ndarray,
           M: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """(T_pi^count c, (gamma P_pi)^count M): ``count`` applications of one stationary policy.

    Up to a few repeats, one Bellman step (and sparse propagation) at a time. Beyond, in
    closed form with G = gamma P_pi and v_pi = (I - G)^{-1} r_pi:
    T_pi^j c = G^j c + (I - G^j) v_pi, G^j by repeated squaring: O(n^3 log j) whatever j
    (NSPI(m)'s start holds m copies of pi_0, for any m).
    """
    if count <= _REPEAT_BY_POWERS:
        for _ in range(count):
            c = apply_policy(mdp, pi, c)
            M = None if M is None else propagate(mdp, pi, M)
        return c, M
    table = stationary_table(pi, mdp)
    G = mdp.gamma * transition_matrix(mdp, table)
    v_pi = evaluate_tables(mdp, table)
    power, base, j = np.eye(mdp.n_states), G, count
    while j:
        if j & 1:
            power = power @ base
        j >>= 1
        if j:
            base = base @ base
    c = power @ c + v_pi - power @ v_pi
    return c, None if M is None else power @ M


