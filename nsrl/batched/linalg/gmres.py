"""Certified GMRES on the sweep's sparse operators: values without dense LU (compiled).

At n_S = 200 one dense LU costs about 0.3 ms here, more than the sweep can afford per
scheme-iteration (docs/reproduce.md). But every value the sweep needs solves ``(I - M) x = b``
where ``M x`` is cheap:

* ``LOOP``: ``M = g P_{w_0} P_{w_1} ... P_{w_{m-1}}`` for a window of deterministic policies
  (NSPI(m)'s loop, PSDP's loop, a single policy when m = 1): m sparse products of b
  successors per state;
* ``STOCH`` / ``STOCH_T``: ``M = gamma P_T`` (or its transpose, for d_{pi,nu}) for a
  stochastic table T[s, a]: at most n_A b successors per state whatever the number of
  mixture components;

Loops are strongly contracting in all but one direction (g = gamma^m and products of
stochastic matrices mix), so GMRES converges in a few iterations, warm-started from the
previous value. Every solution is certified by its residual ``||b - (I - M) x||_2 <=
rtol ||b||_2``, carried explicitly as r0 - W y from the products W = (I - M) V of the
Krylov basis (by linearity the vector b - (I - M) x itself, with rounding of the order of
recomputing it, and no extra product); a run whose solve does not certify within its
iteration budget is reported, and the caller solves it directly. The solve is
GMRES(restart) with Givens rotations (Saad, *Iterative Methods for Sparse Linear Systems*,
2003, alg. 6.9), orthogonalising by classical Gram-Schmidt applied twice (BLAS products, as
stable as modified G-S; Giraud et al., 2005).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nsrl.batched.linalg.solvers import RTOL

LOOP, STOCH, STOCH_T = 0, 1, 2
RESTART = 40
MAX_ITER = 160


@njit(inline="always")
def row_dot(nxt, probs, s, a, x):  # pragma: no cover - compiled
    """sum_j probs[s, a, j] x[nxt[s, a, j]], summed in j order (unrolled for b = 1, 2, 10).

    The paper's branchings get straight-line code (measured 17-26% faster products than
    the loop with a run-time trip count); the sum is the loop's, bit for bit.
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
def _apply(kind, nxt, probs, window, T, g, x, out, tmp):  # pragma: no cover - compiled
    """out = (I - M) x for the operator described by ``kind`` (module docstring)."""
    n = x.shape[0]
    if kind == LOOP:
        tmp[:] = x
        for i in range(window.shape[0] - 1, -1, -1):
            for s in range(n):
                out[s] = row_dot(nxt, probs, s, window[i, s], tmp)
            tmp[:] = out
        for s in range(n):
            out[s] = x[s] - g * tmp[s]
    elif kind == STOCH:
        _gather(nxt, probs, T, x, out)
        for s in range(n):
            out[s] = x[s] - g * out[s]
    else:  # STOCH_T: out = x - gamma P_T^T x
        _scatter(nxt, probs, T, x, out)
        for s in range(n):
            out[s] = x[s] - g * out[s]


@njit(cache=True)
def _gather(nxt, probs, T, x, out):  # pragma: no cover - compiled
    """out = P_T x for one table T[s, a] (skipping the actions it does not use)."""
    for s in range(x.shape[0]):
        acc = 0.0
        for a in range(T.shape[1]):
            w = T[s, a]
            if w != 0.0:
                acc += w * row_dot(nxt, probs, s, a, x)
        out[s] = acc


@njit(cache=True)
def _scatter(nxt, probs, T, x, out):  # pragma: no cover - compiled
    """out = P_T^T x for one table T[s, a] (the transpose of :func:`_gather`)."""
    width = nxt.shape[2]
    out[:] = 0.0
    for s in range(x.shape[0]):
        for a in range(T.shape[1]):
            w = T[s, a] * x[s]
            if w != 0.0:
                for j in range(width):
                    out[nxt[s, a, j]] += w * probs[s, a, j]


@njit(cache=True)
def _gmres(kind, nxt, probs, window, T, g, r, x, tol, V, W, H, work):  # pragma: no cover
    """Solve (I - M) x = b in place from x, given its residual r = b - (I - M) x.

    Returns (matvecs, certified). The residual is carried explicitly, r <- r - W y with
    W[j] = (I - M) V[j] the products computed for the Krylov basis: the same vector as
    b - (I - M) x recomputed from scratch (linearity), with rounding of the same order as
    that recomputation, and without its extra product. It is checked against ``tol``
    before and after every cycle; r is updated in place.
    """
    n = r.shape[0]
    restart = H.shape[1]
    cs, sn, e, y = work[0], work[1], work[2], work[3]
    w = np.empty(n)
    tmp = np.empty(n)
    used = 0
    while True:
        beta = np.sqrt(np.dot(r, r))
        if beta <= tol:
            return used, True
        if used >= MAX_ITER:
            return used, False
        for s in range(n):
            V[0, s] = r[s] / beta
        e[:] = 0.0
        e[0] = beta
        H[:, :] = 0.0
        steps = 0
        for j in range(restart):
            _apply(kind, nxt, probs, window, T, g, V[j], W[j], tmp)
            used += 1
            w[:] = W[j]
            # classical Gram-Schmidt, twice (CGS2: as stable as modified G-S), through BLAS
            basis = V[: j + 1]
            for _ in range(2):
                h = np.dot(basis, w)
                w -= np.dot(basis.T, h)
                for i in range(j + 1):
                    H[i, j] += h[i]
            hn = np.sqrt(np.dot(w, w))
            H[j + 1, j] = hn
            if hn > 0.0:
                for s in range(n):
                    V[j + 1, s] = w[s] / hn
            for i in range(j):
                t = cs[i] * H[i, j] + sn[i] * H[i + 1, j]
                H[i + 1, j] = -sn[i] * H[i, j] + cs[i] * H[i + 1, j]
                H[i, j] = t
            den = np.hypot(H[j, j], H[j + 1, j])
            if den == 0.0:
                return used, False
            cs[j] = H[j, j] / den
            sn[j] = H[j + 1, j] / den
            H[j, j] = den
            H[j + 1, j] = 0.0
            e[j + 1] = -sn[j] * e[j]
            e[j] = cs[j] * e[j]
            steps = j + 1
            if abs(e[j + 1]) <= 0.5 * tol or hn == 0.0 or used >= MAX_ITER:
                break
        for i in range(steps - 1, -1, -1):
            acc = e[i]
            for m in range(i + 1, steps):
                acc -= H[i, m] * y[m]
            y[i] = acc / H[i, i]
        for i in range(steps):
            for s in range(n):
                x[s] += y[i] * V[i, s]
                r[s] -= y[i] * W[i, s]


@njit(cache=True)
def _chain(nxt, probs, R, gamma, window, x, out, tmp):  # pragma: no cover - compiled
    """out = T_{w_0} T_{w_1} ... T_{w_{m-1}} x (w_{m-1} applied first; out may not be x)."""
    n = x.shape[0]
    tmp[:] = x
    for i in range(window.shape[0] - 1, -1, -1):
        for s in range(n):
            a = window[i, s]
            out[s] = R[s, a] + gamma * row_dot(nxt, probs, s, a, tmp)
        tmp[:] = out


@njit(cache=True)
def _solve_batch(kind, nxt, probs, windows, Ts, g, rhs, x0, rtol, atol, R,
                 gamma):  # pragma: no cover
    """Every run's system; run r stops at residual <= max(rtol scale_r, atol[r]).

    With a right-hand side (``rhs`` of shape (R, n)): b = rhs[r], scale_r = ||b||.
    Without one (``rhs`` of shape (0, n), LOOP only): the loop's own fixed point x = L x,
    L = T_{w_0} ... T_{w_{m-1}} (rewards R, discount gamma, g = gamma^m): the initial
    residual L x0 - x0 costs one pass of m products, where b = L 0 and b - (I - M) x0 would
    cost two; scale_r = (1 - g) ||L x0||, so that ||x - x*||_inf <= rtol ||L x0||_2.
    """
    n_runs, n = x0.shape
    X = x0.copy()
    ok = np.zeros(n_runs, dtype=np.bool_)
    used = np.zeros(n_runs, dtype=np.int64)
    V = np.empty((RESTART + 1, n))
    W = np.empty((RESTART, n))
    H = np.zeros((RESTART + 1, RESTART))
    work = np.zeros((4, RESTART + 1))
    r = np.empty(n)
    tmp = np.empty(n)
    fixed_point = rhs.shape[0] == 0
    for i in range(n_runs):
        w = windows[min(i, windows.shape[0] - 1)]
        T = Ts[min(i, Ts.shape[0] - 1)]
        if fixed_point:
            _chain(nxt, probs, R, gamma, w, X[i], r, tmp)
            scale = (1.0 - g) * np.sqrt(np.dot(r, r))
            r -= X[i]
        else:
            _apply(kind, nxt, probs, w, T, g, X[i], r, tmp)
            r[:] = rhs[i] - r
            scale = np.sqrt(np.dot(rhs[i], rhs[i]))
        tol = max(rtol * scale, atol[min(i, atol.shape[0] - 1)])
        used[i], ok[i] = _gmres(kind, nxt, probs, w, T, g, r, X[i], tol, V, W, H, work)
    return X, ok, used


@njit(cache=True)
def loop_rhs(nxt, probs, R, gamma, windows):  # pragma: no cover - compiled
    """c[r] = T_{w_0} T_{w_1} ... T_{w_{m-1}} 0 for every run's window (deterministic T's)."""
    n_runs, m, n = windows.shape
    c = np.empty((n_runs, n))
    zero = np.zeros(n)
    tmp = np.empty(n)
    for r in range(n_runs):
        _chain(nxt, probs, R, gamma, windows[r], zero, c[r], tmp)
    return c


@njit(cache=True)
def functional_values(nxt, windows, c, g):  # pragma: no cover - compiled
    """x = c + g x[F] exactly, F the successor map of a window of deterministic policies.

    On b = 1 Garnets a deterministic policy's P_pi is a map f(s) = nxt[s, pi(s), 0], and
    the window (w_0, ..., w_{m-1}) (w_0 acting first) composes to F = f_{m-1} o ... o f_0,
    so that (g P_{w_0} ... P_{w_{m-1}} x)(s) = g x[F(s)]. Every state walks a path into one
    cycle of F, whose values have a closed form, and the paths fill in backwards: O(m n),
    no rounding beyond the geometric sums. ``windows`` has shape (R, m, n).
    """
    n_runs, n = c.shape
    x = np.empty((n_runs, n))
    F = np.empty(n, dtype=np.int64)
    state = np.zeros(n, dtype=np.int8)  # 0 new, 1 on the current path, 2 solved
    path = np.empty(n, dtype=np.int64)
    for r in range(n_runs):
        for s in range(n):
            t = s
            for i in range(windows.shape[1]):
                t = nxt[t, windows[r, i, t], 0]
            F[s] = t
        state[:] = 0
        for s0 in range(n):
            top, s = 0, s0
            while state[s] == 0:
                state[s] = 1
                path[top] = s
                top += 1
                s = F[s]
            if state[s] == 1:  # a new cycle: path[i:top], starting at s
                i = top - 1
                while path[i] != s:
                    i -= 1
                acc, p = 0.0, 1.0
                for j in range(i, top):
                    acc += p * c[r, path[j]]
                    p *= g
                x[r, s] = acc / (1.0 - p)
                state[s] = 2
                for j in range(top - 1, i, -1):
                    u = path[j]
                    x[r, u] = c[r, u] + g * x[r, F[u]]
                    state[u] = 2
                top = i
            for j in range(top - 1, -1, -1):
                u = path[j]
                x[r, u] = c[r, u] + g * x[r, F[u]]
                state[u] = 2
    return x


@njit(cache=True)
def _table_vectors(nxt, probs, T, x, transpose):  # pragma: no cover - compiled
    """y[r] = P_{T[r]} x[r] (or P_{T[r]}^T x[r]) for every run."""
    y = np.empty_like(x)
    for r in range(x.shape[0]):
        if transpose:
            _scatter(nxt, probs, T[r], x[r], y[r])
        else:
            _gather(nxt, probs, T[r], x[r], y[r])
    return y


@njit(cache=True)
def _difference_vectors(nxt, probs, acts, T, x):  # pragma: no cover - compiled
    """y[r] = P_{acts[r]} x[r] - P_{T[r]} x[r]: a deterministic policy against a table."""
    n_runs, n = x.shape
    y = np.empty_like(x)
    for r in range(n_runs):
        _gather(nxt, probs, T[r], x[r], y[r])
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


_NO_WINDOW = np.zeros((1, 1, 1), dtype=np.int64)
_NO_TABLES = np.zeros((1, 1, 1))
_NO_ATOL = np.zeros(1)
_NO_REWARDS = np.zeros((1, 1))
_NO_RHS = np.zeros((0, 0))


def loop_values(nxt, probs, windows, g, c, x0, rtol=RTOL):
    """x = (I - g P_{w_0} ... P_{w_{m-1}})^{-1} c for every run's window ``windows[r]``.

    Returns:
        (x, ok, matvecs): ``ok[r]`` is False where run r did not certify (solve it directly).
    """
    return _solve_batch(LOOP, nxt, probs, np.ascontiguousarray(windows), _NO_TABLES,
                        float(g), c, x0, rtol, _NO_ATOL, _NO_REWARDS, 0.0)


def loop_fixed_points(nxt, probs, R, gamma, windows, x0, rtol=RTOL):
    """x = T_{w_0} ... T_{w_{m-1}} x, the loops' values, from the initial guesses ``x0``.

    As :func:`loop_values` with c = T_{w_0} ... T_{w_{m-1}} 0, without computing c (one
    pass of m products fewer per solve); run r certifies ``||x - x*||_inf <= rtol ||L
    x0_r||_2``, L the loop (a relative residual, as :func:`loop_values`).

    Returns:
        (x, ok, matvecs) as :func:`loop_values`.
    """
    windows = np.ascontiguousarray(windows)
    g = float(gamma) ** windows.shape[1]
    return _solve_batch(LOOP, nxt, probs, windows, _NO_TABLES, g, _NO_RHS,
                        np.ascontiguousarray(x0, dtype=np.float64), rtol, _NO_ATOL,
                        np.ascontiguousarray(R, dtype=np.float64), float(gamma))


def table_values(nxt, probs, gamma, T, rhs, x0, transpose=False, rtol=RTOL, atol=None):
    """x = (I - gamma P_T)^{-1} rhs (or with P_T^T) for every run's table ``T[r]``.

    ``atol[r]`` (optional) loosens run r's target to an absolute 2-norm residual.
    """
    atol = _NO_ATOL if atol is None else np.asarray(atol, dtype=np.float64)
    return _solve_batch(STOCH_T if transpose else STOCH, nxt, probs, _NO_WINDOW,
                        np.ascontiguousarray(T), float(gamma), rhs, x0, rtol, atol,
                        _NO_REWARDS, 0.0)
