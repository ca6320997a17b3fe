"""Certified GMRES on the sweep's sparse operators: values without dense LU (compiled).

A dense LU per value costs more than the sweep can afford per scheme-iteration at n_S = 200
(docs/benchmarks.md). But every value the sweep needs solves ``(I - M) x = b`` where ``M x``
is cheap:

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

from nsrl.batched.linalg import sparse
from nsrl.batched.linalg.tolerances import RTOL

LOOP, STOCH, STOCH_T = 0, 1, 2
RESTART = 40
MAX_ITER = 160


@njit(cache=True)
def _apply(kind, nxt, probs, window, T, g, x, out, tmp):  # pragma: no cover - compiled
    """out = (I - M) x for the operator described by ``kind`` (module docstring)."""
    n = x.shape[0]
    if kind == LOOP:
        tmp[:] = x
        for i in range(window.shape[0] - 1, -1, -1):
            for s in range(n):
                out[s] = sparse.row_dot(nxt, probs, s, window[i, s], tmp)
            tmp[:] = out
        for s in range(n):
            out[s] = x[s] - g * tmp[s]
    elif kind == STOCH:
        sparse.gather(nxt, probs, T, x, out)
        for s in range(n):
            out[s] = x[s] - g * out[s]
    else:  # STOCH_T: out = x - gamma P_T^T x
        sparse.scatter(nxt, probs, T, x, out)
        for s in range(n):
            out[s] = x[s] - g * out[s]


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
            sparse.chain(nxt, probs, R, gamma, w, X[i], r, tmp)
            scale = (1.0 - g) * np.sqrt(np.dot(r, r))
            r -= X[i]
        else:
            _apply(kind, nxt, probs, w, T, g, X[i], r, tmp)
            r[:] = rhs[i] - r
            scale = np.sqrt(np.dot(rhs[i], rhs[i]))
        tol = max(rtol * scale, atol[min(i, atol.shape[0] - 1)])
        used[i], ok[i] = _gmres(kind, nxt, probs, w, T, g, r, X[i], tol, V, W, H, work)
    return X, ok, used


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
