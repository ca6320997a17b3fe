"""Sparse primitives of the batched engines: compiled (numba) products over the successor lists.

Every product with the transition model goes through the b successors of each (state,
action) (``nxt[s, a, j]``, ``probs[s, a, j]``): one row (:func:`row_dot`), Q-values, greedy
steps and Bellman steps of deterministic policies, products with a stochastic table's P_T
and its transpose, chains of Bellman operators, and the sparse updates of dense systems.

Each mirrors one operation of the reference path (:mod:`nsrl.exact`) with a leading run axis,
in the same arithmetic order where it matters (the greedy argmax takes the first maximum).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(inline="always")
def row_dot(nxt, probs, s, a, x):  # pragma: no cover - compiled
    """sum_j probs[s, a, j] x[nxt[s, a, j]], summed in j order (unrolled for b = 1, 2, 10).

    The paper's branchings get straight-line code (faster than the loop with a run-time
    trip count; docs/benchmarks.md); the sum is the loop's, bit for bit.
    """
    width = nxt.shape[2]
    if width == 2:
        return probs[s, a, 0] * x[nxt[s, a, 0]] + probs[s, a, 1] * x[nxt[s, a, 1]]
    if width == 1:
        return probs[s, a, 0] * x[nxt[s, a, 0]]
    if width == 10:
        p, q = probs[s, a], nxt[s, a]
        return (p[0] * x[q[0]] + p[1] * x[q[1]] + p[2] * x[q[2]] + p[3] * x[q[3]]
                + p[4] * x[q[4]] + p[5] * x[q[5]] + p[6] * x[q[6]] + p[7] * x[q[7]]
                + p[8] * x[q[8]] + p[9] * x[q[9]])
    acc = 0.0
    for j in range(width):
        acc += probs[s, a, j] * x[nxt[s, a, j]]
    return acc


@njit(cache=True)
def gather(nxt, probs, T, x, out):  # pragma: no cover - compiled
    """out = P_T x for one table T[s, a] (skipping the actions it does not use)."""
    for s in range(x.shape[0]):
        acc = 0.0
        for a in range(T.shape[1]):
            w = T[s, a]
            if w != 0.0:
                acc += w * row_dot(nxt, probs, s, a, x)
        out[s] = acc


@njit(cache=True)
def scatter(nxt, probs, T, x, out):  # pragma: no cover - compiled
    """out = P_T^T x for one table T[s, a] (the transpose of :func:`gather`)."""
    width = nxt.shape[2]
    out[:] = 0.0
    for s in range(x.shape[0]):
        for a in range(T.shape[1]):
            w = T[s, a] * x[s]
            if w != 0.0:
                for j in range(width):
                    out[nxt[s, a, j]] += w * probs[s, a, j]


@njit(cache=True)
def chain(nxt, probs, R, gamma, window, x, out, tmp):  # pragma: no cover - compiled
    """out = T_{w_0} T_{w_1} ... T_{w_{m-1}} x (w_{m-1} applied first; out may not be x)."""
    n = x.shape[0]
    tmp[:] = x
    for i in range(window.shape[0] - 1, -1, -1):
        for s in range(n):
            a = window[i, s]
            out[s] = R[s, a] + gamma * row_dot(nxt, probs, s, a, tmp)
        tmp[:] = out


@njit(cache=True)
def loop_rhs(nxt, probs, R, gamma, windows):  # pragma: no cover - compiled
    """c[r] = T_{w_0} T_{w_1} ... T_{w_{m-1}} 0 for every run's window (deterministic T's)."""
    n_runs, m, n = windows.shape
    c = np.empty((n_runs, n))
    zero = np.zeros(n)
    tmp = np.empty(n)
    for r in range(n_runs):
        chain(nxt, probs, R, gamma, windows[r], zero, c[r], tmp)
    return c


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
    """argmax_a of :func:`q_values` (the first maximum, as numpy.argmax), without Q."""
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


@njit(cache=True)
def _table_vectors(nxt, probs, T, x, transpose):  # pragma: no cover - compiled
    """y[r] = P_{T[r]} x[r] (or P_{T[r]}^T x[r]) for every run."""
    y = np.empty_like(x)
    for r in range(x.shape[0]):
        if transpose:
            scatter(nxt, probs, T[r], x[r], y[r])
        else:
            gather(nxt, probs, T[r], x[r], y[r])
    return y


@njit(cache=True)
def _difference_vectors(nxt, probs, acts, T, x):  # pragma: no cover - compiled
    """y[r] = P_{acts[r]} x[r] - P_{T[r]} x[r]: a deterministic policy against a table."""
    n_runs, n = x.shape
    y = np.empty_like(x)
    for r in range(n_runs):
        gather(nxt, probs, T[r], x[r], y[r])
        xr = x[r]
        for s in range(n):
            y[r, s] = row_dot(nxt, probs, s, acts[r, s], xr) - y[r, s]
    return y


@njit(cache=True)
def _table_columns(nxt, probs, T, X):  # pragma: no cover - compiled
    """Y[r] = P_{T[r]} X[r] for blocks X of shape (R, n, J)."""
    n_runs, n, J = X.shape
    width = nxt.shape[2]
    Y = np.zeros_like(X)
    for r in range(n_runs):
        for s in range(n):
            for a in range(T.shape[2]):
                w = T[r, s, a]
                if w != 0.0:
                    for j in range(width):
                        p = w * probs[s, a, j]
                        t = nxt[s, a, j]
                        for k in range(J):
                            Y[r, s, k] += p * X[r, t, k]
    return Y


def table_mv(nxt, probs, T, x, transpose=False):
    """P_T x (or P_T^T x, vectors only) for every run: x of shape (R, n) or (R, n, J)."""
    T = np.ascontiguousarray(T)
    if x.ndim == 2:
        return _table_vectors(nxt, probs, T, np.ascontiguousarray(x), transpose)
    if transpose:
        raise ValueError("transposed products take vectors (R, n), not blocks (R, n, J).")
    return _table_columns(nxt, probs, T, np.ascontiguousarray(x))


def difference_mv(nxt, probs, acts, T, x):
    """(P_pi' - P_T) x for every run: pi' = acts[r] deterministic, T[r] a table; x (R, n)."""
    return _difference_vectors(nxt, probs, np.ascontiguousarray(acts), np.ascontiguousarray(T),
                               np.ascontiguousarray(x))
