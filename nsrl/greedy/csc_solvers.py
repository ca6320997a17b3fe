"""The objective of :class:`nsrl.greedy.csc.SoftmaxCSC` and the solvers that minimise it.

:class:`Problem` holds one fit's objective, ``S L`` in the sum form (``L`` is
scikit-learn's; see :mod:`nsrl.greedy.csc`), with its gradient, Hessian and Hessian-vector
products; :func:`newton` (Cholesky, line search, chord steps near the solution) and
:func:`scipy_solve` (scipy's L-BFGS-B or trust-ncg) minimise it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.optimize import minimize

_ARMIJO, _HALVINGS = 1e-4, 40
# Newton keeps its Cholesky factor once a full step's decrement (scikit-learn's scale) is
# below _CHORD_START, while each step shrinks the gradient at least _CHORD_RATE times.
_CHORD_START, _CHORD_RATE = 1e-4, 10.0
_ROUNDING = 1e-10  # a predicted decrease below this share of f is taken without a line search


def is_sparse(x: Any) -> bool:
    """``sp.issparse(x)`` as a plain bool (scipy-stubs narrows to an ABC with no matrix API)."""
    return bool(sp.issparse(x))


class Problem:
    """The objective ``S L(theta)`` (sum form) of one fit and its derivatives.

    ``theta`` is (R, d + 1): R = 1 row (binomial, the raw score of class 1, class 0 at 0) or
    K rows (symmetric); column d holds the intercepts. ``free`` masks the entries that vary
    (the symmetric model pins the last class's intercept: the objective does not change
    when every intercept moves by the same amount).
    """

    def __init__(self, x: Any, label_weights: np.ndarray, C: float) -> None:
        self.x, self.y = x, label_weights
        self.n, self.d = x.shape
        self.k = label_weights.shape[1]
        self.w = label_weights.sum(axis=1)  # W_s
        self.total = float(self.w.sum())  # S
        self.lam = 1.0 / C
        self.rows = 1 if self.k == 2 else self.k
        self.free = np.ones((self.rows, self.d + 1), dtype=bool)
        if self.rows > 1:
            self.free[-1, -1] = False
        ones = np.ones((self.n, 1))
        self.xt: Any = sp.hstack([x, sp.csr_matrix(ones)], format="csr") if is_sparse(x) \
            else np.hstack([x, ones])

    def raw(self, theta: np.ndarray) -> np.ndarray:
        """The K scores of every row, (n, K)."""
        z = np.asarray(self.xt @ theta.T)
        return np.hstack([np.zeros((self.n, 1)), z]) if self.rows == 1 else z

    def value(self, theta: np.ndarray, z: np.ndarray | None = None) -> float:
        """``sum_s W_s CE(y_s, p(x_s)) + ||W||^2 / (2 C)`` (scikit-learn's L times S)."""
        z = self.raw(theta) if z is None else z
        top = z.max(axis=1)
        lse = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
        data = float(self.w @ lse - np.sum(self.y * z))
        return data + 0.5 * self.lam * float(np.sum(theta[:, :-1] ** 2))

    def probs(self, z: np.ndarray) -> np.ndarray:
        """The softmax of the scores ``z``, (n, K)."""
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def gradient(self, theta: np.ndarray, p: np.ndarray) -> np.ndarray:
        """d value / d theta, (R, d + 1); the pinned entries included."""
        resid = self.w[:, None] * p - self.y  # (n, K)
        if self.rows == 1:
            resid = resid[:, 1:]
        g = np.asarray(self.xt.T @ resid).T
        g[:, :-1] += self.lam * theta[:, :-1]
        return g

    def hessian(self, p: np.ndarray) -> np.ndarray:
        """The Hessian on the free entries (row-major order of ``theta[free]``).

        Block (k, l) is ``X^T diag(W p_k (delta_kl - p_l)) X`` (X with its column of ones),
        plus the penalty. In the symmetric model the blocks of a row sum to the penalty
        alone (the probabilities sum to 1), so the last class's row and column come from
        the others': (K - 1) K / 2 products instead of K (K + 1) / 2.
        """
        m, k = self.d + 1, self.k
        cls = [1] if self.rows == 1 else list(range(k - 1))
        h = np.zeros((self.rows * m, self.rows * m))
        for i, a in enumerate(cls):
            for j in range(i, len(cls)):
                c = self.w * p[:, a] * ((a == cls[j]) - p[:, cls[j]])
                blk = _sandwich(self.xt, c)
                h[i * m:(i + 1) * m, j * m:(j + 1) * m] = blk
                if j != i:
                    h[j * m:(j + 1) * m, i * m:(i + 1) * m] = blk.T
        if self.rows > 1:  # the last class: minus the sum of the others (data part)
            top = slice(0, (k - 1) * m)
            last = slice((k - 1) * m, k * m)
            col = -h[top, top].reshape(k - 1, m, (k - 1) * m).sum(axis=0)  # (m, (K-1) m)
            h[last, top], h[top, last] = col, col.T
            h[last, last] = -col.reshape(m, k - 1, m).sum(axis=1)
        penal = np.tile(np.r_[np.full(self.d, self.lam), 0.0], self.rows)
        h[np.diag_indices_from(h)] += penal
        keep = self.free.ravel()
        return h[np.ix_(keep, keep)]

    def start(self, init: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
              classes: np.ndarray) -> np.ndarray:
        """Zeros, or the previous fit ``(classes, coef, intercept)`` mapped onto ``classes``.

        The previous fit is taken when its objective is lower (an ill-fitting start would
        only cost steps).
        """
        zero = np.zeros((self.rows, self.d + 1))
        if init is None or init[1].shape[1] != self.d:
            return zero
        old_classes, coef, intercept = init
        full_old = np.hstack([coef, intercept[:, None]])
        if len(old_classes) == 2:  # binomial: class 0 at 0
            full_old = np.vstack([np.zeros_like(full_old), full_old])
        full = np.zeros((self.k, self.d + 1))
        for i, c in enumerate(classes):
            hit = np.flatnonzero(old_classes == c)
            if hit.size:
                full[i] = full_old[hit[0]]
        if self.rows == 1:
            theta = full[1:] - full[:1]
        else:  # the same softmax with centred weights (the least penalty) and pinned intercept
            theta = full - np.r_[full[:, :-1].mean(axis=0), full[-1, -1]][None, :]
        return theta if self.value(theta) < self.value(zero) else zero


def _sandwich(x: Any, c: np.ndarray) -> np.ndarray:
    """``x^T diag(c) x``, dense."""
    if is_sparse(x):
        return np.asarray((x.T @ sp.diags(c) @ x).toarray())
    return np.asarray(x.T @ (c[:, None] * x))


def newton(prob: Problem, theta: np.ndarray, tol: float,
            max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Newton with Cholesky and a backtracking line search: (theta, steps, converged).

    Near the solution (a full step whose decrement is below :data:`_CHORD_START`) the
    Cholesky factor is kept for the next steps (chord steps, one gradient each): the
    Hessian hardly moves there, and it is most of a step's cost. A kept factor is dropped
    as soon as a step fails to shrink the gradient :data:`_CHORD_RATE` times.
    """
    free = prob.free
    z = prob.raw(theta)
    f = prob.value(theta, z)
    factor, last = None, np.inf
    for step in range(max_iter):
        p = prob.probs(z)
        g = prob.gradient(theta, p)[free]
        size = float(np.max(np.abs(g))) / prob.total
        if size <= tol:
            return theta, step, True
        if factor is None or size > last / _CHORD_RATE:
            try:
                factor = cho_factor(prob.hessian(p))
            except LinAlgError:  # numerically not positive definite: L-BFGS takes over
                return theta, step, False
        delta = -cho_solve(factor, g)
        slope, t = float(g @ delta), 1.0
        # a decrease this small is below the rounding of f: the line search cannot see it,
        # and the full step of a positive definite model this close to its minimum is safe
        tiny = -slope <= _ROUNDING * max(abs(f), 1.0)
        for _ in range(0 if tiny else _HALVINGS):
            trial = theta.copy()
            trial[free] += t * delta
            z_new = prob.raw(trial)
            f_new = prob.value(trial, z_new)
            if f_new <= f + _ARMIJO * t * slope:
                break
            t *= 0.5
        else:
            if not tiny:  # no decrease found: Newton is stuck, L-BFGS takes over
                return theta, step, False
            trial = theta.copy()
            trial[free] += delta
            z_new = prob.raw(trial)
            f_new = prob.value(trial, z_new)
        if t < 1.0 or -slope > _CHORD_START * prob.total:
            factor = None
        theta, z, f, last = trial, z_new, f_new, size
    return theta, max_iter, False


def hess_vec(prob: Problem, p: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The Hessian at probabilities ``p`` times ``s`` (R, d + 1), without forming it."""
    u = np.asarray(prob.xt @ s.T)  # the scores' change, (n, R)
    if prob.rows == 1:
        r = (prob.w * p[:, 1] * (1.0 - p[:, 1]))[:, None] * u
    else:
        r = prob.w[:, None] * p * (u - (p * u).sum(axis=1, keepdims=True))
    out = np.asarray(prob.xt.T @ r).T
    out[:, :-1] += prob.lam * s[:, :-1]
    return out


def scipy_solve(prob: Problem, theta: np.ndarray, tol: float, max_iter: int,
                method: str) -> tuple[np.ndarray, int]:
    """scipy's L-BFGS-B or trust-ncg on the objective in scikit-learn's scale (value / S)."""
    free = prob.free
    last: dict[str, np.ndarray] = {}

    def full(v: np.ndarray) -> np.ndarray:
        th = theta.copy()
        th[free] = v
        return th

    def fun(v: np.ndarray) -> tuple[float, np.ndarray]:
        th = full(v)
        z = prob.raw(th)
        last["v"], last["p"] = v.copy(), prob.probs(z)
        return prob.value(th, z) / prob.total, prob.gradient(th, last["p"])[free] / prob.total

    def hessp(v: np.ndarray, s: np.ndarray) -> np.ndarray:
        p = last["p"] if "v" in last and np.array_equal(v, last["v"]) \
            else prob.probs(prob.raw(full(v)))
        step = np.zeros_like(theta)
        step[free] = s
        return hess_vec(prob, p, step)[free] / prob.total

    if method == "trust-ncg":
        res = minimize(fun, theta[free], jac=True, hessp=hessp, method="trust-ncg",
                       options={"maxiter": max_iter, "gtol": tol})
    else:
        res = minimize(fun, theta[free], jac=True, method="L-BFGS-B",
                       options={"maxiter": max_iter, "gtol": tol,
                                "ftol": 64 * np.finfo(float).eps, "maxls": 50})
    return full(res.x), int(res.nit)
