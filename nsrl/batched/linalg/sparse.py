"""Compiled (numba) kernels of the batched engines, for R runs at once.

Q-values, greedy steps, Bellman steps and sparse system updates over the successor lists.

Each mirrors one operation of the reference path (:mod:`nsrl.exact`) with a leading run axis,
in the same arithmetic order where it matters (the greedy argmax takes the first maximum).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nsrl.batched.linalg.gmres import row_dot


@njit(cache=True)
def q_values(R, nxt, probs, gamma, V):  # pragma: no cover - compiled
    """Q[r, s, a] = R[s, a] + gamma sum_j probs[s, a, j] V[r, nxt[s, a, j]]."""
    n_runs, n = V.shape
    n_actions = nxt.shape[1]
    Q = np.empty((n_runs, n, n_actions))
    for r in range(n_runs):
        v = V[r]
        for s in range(n):
            for a in range(n_actions):
                Q[r, s, a] = R[s, a] + gamma * row_dot(nxt, probs, s, a, v)
    return Q


@njit(cache=True)
def greedy(R, nxt, probs, gamma, V):  # pragma: no cover - compiled
    """argmax_a of :func:`_q_values` (the first maximum, as numpy.argmax), without Q."""
    n_runs, n = V.shape
    n_actions = nxt.shape[1]
    acts = np.empty((n_runs, n), dtype=np.int64)
    for r in range(n_runs):
        v = V[r]
        for s in range(n):
            best, arg = -np.inf, 0
            for a in range(n_actions):
                q = R[s, a] + gamma * row_dot(nxt, probs, s, a, v)
                if q > best:
                    best, arg = q, a
            acts[r, s] = arg
    return acts


@njit(cache=True)
def apply_policies(R, nxt, probs, gamma, acts, V):  # pragma: no cover - compiled
    """(T_pi V)[r, s] = R[s, pi(s)] + gamma sum_j p_j V[r, next_j] for deterministic pi."""
    n_runs, n = V.shape
    out = np.empty((n_runs, n))
    for r in range(n_runs):
        v = V[r]
        for s in range(n):
            a = acts[r, s]
            out[r, s] = R[s, a] + gamma * row_dot(nxt, probs, s, a, v)
    return out


@njit(cache=True)
def propagate(nxt, probs, gamma, acts, M, out):  # pragma: no cover - compiled
    """out[r] = gamma P_{acts[r]} M[r] with sparse successors (nsrl.exact._propagate)."""
    n_runs, n = acts.shape
    width = nxt.shape[2]
    for r in range(n_runs):
        for s in range(n):
            a = acts[r, s]
            row = out[r, s]
            row[:] = 0.0
            for j in range(width):
                p = probs[s, a, j]
                if p != 0.0:
                    src = M[r, nxt[s, a, j]]
                    for t in range(M.shape[2]):
                        row[t] += p * src[t]
            for t in range(M.shape[2]):
                row[t] *= gamma


@njit(cache=True)
def mixed_systems(P, R, gamma, Asys, run_of, rpi, acts, owner, steps, A, b):  # pragma: no cover
    """A[c] = (1 - a) Asys[run_of[c]] + a (I - gamma P_x), b[c] = (1 - a) r_pi + a r_x.

    The systems of the mixtures (1 - a) pi_o + a pi'_o (CPI+'s candidates c, owner o, step a,
    pi' = acts[o]); a == 1 is pi'_o itself (rules.replaces).
    """
    n = P.shape[0]
    for c in range(owner.shape[0]):
        o, a, q = owner[c], steps[c], run_of[c]
        for s in range(n):
            x = acts[o, s]
            row = A[c, s]
            if a == 1.0:
                for t in range(n):
                    row[t] = -gamma * P[s, x, t]
                row[s] += 1.0
                b[c, s] = R[s, x]
            else:
                for t in range(n):
                    row[t] = (1.0 - a) * Asys[q, s, t] - a * gamma * P[s, x, t]
                row[s] += a
                b[c, s] = (1.0 - a) * rpi[o, s] + a * R[s, x]


@njit(cache=True)
def mix_systems(A, nxt, probs, gamma, runs, acts, alpha):  # pragma: no cover - compiled
    """A[runs[i]] <- (1 - a_i) A[runs[i]] + a_i (I - gamma P_{acts[i]}), in place, sparse.

    a_i == 1 gives I - gamma P_{acts[i]} exactly (rules.replaces).
    """
    n = A.shape[1]
    width = nxt.shape[2]
    for i in range(runs.shape[0]):
        r, a = runs[i], alpha[i]
        M = A[r]
        if a == 1.0:
            M[:, :] = 0.0
        else:
            for s in range(n):
                for t in range(n):
                    M[s, t] *= 1.0 - a
        for s in range(n):
            M[s, s] += a
            x = acts[i, s]
            for j in range(width):
                p = probs[s, x, j]
                if p != 0.0:
                    M[s, nxt[s, x, j]] -= a * gamma * p
