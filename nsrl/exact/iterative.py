"""Exact values on large models: certified iterative solves in O(S A b) memory.

Every value of the exact backend is the solution of ``x = c + M x`` for an operator M with
``||M|| <= kappa < 1`` in a norm where that bound is known: ``M = gamma P_pi`` (kappa =
gamma, max-norm) for a stationary policy, ``M = gamma^m P_{pi_1} ... P_{pi_m}`` (kappa =
gamma^m) for a loop, ``M = gamma P_pi^T`` (kappa = gamma, 1-norm) for the occupancy
``d_{pi,nu}``. For any x the residual ``rho = c + M x - x`` bounds the error:

    x* - x = (I - M)^{-1} rho,   so   ||x* - x|| <= ||rho|| / (1 - kappa).

A solve here returns x only with that bound computed from an explicitly recomputed residual
(never the solver's own running estimate) and at most the requested tolerance; otherwise it
raises :class:`NotCertifiedError`. The methods, in order, each from the best iterate so far:

1. BiCGSTAB (compiled, or scipy's); compiled on a sparse matrix, capped at
   :data:`_PLAIN_ITER` iterations;
2. compiled only: BiCGSTAB preconditioned by ILU(0) of ``I - M`` (:mod:`nsrl.exact.ilu`),
   for slow-mixing chains where plain BiCGSTAB needs hundreds of iterations;
3. restarted GMRES, then BiCGSTAB again;
4. for a sparse matrix, a sparse LU (SuperLU: the Krylov methods stall on some
   near-deterministic chains, e.g. the occupancy of a discretised mountain car).
Measured on Garnets (10 actions, b = 2), BiCGSTAB needs ~75
products for a relative residual of 1e-12 whatever n_S (~5 ms at 3 000 states, ~2 s at 10^6),
where one dense LU costs O(n_S^3). Deterministic transitions (b = 1) make P_pi a map whose
cycles defeat Krylov methods (1 375 iterations at 10^6 states); there the solve is exact in
O(n_S) by :func:`functional_solve`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, bicgstab, gmres

from nsrl.model.kernels import HAVE_NUMBA

if HAVE_NUMBA:
    from nsrl.exact.ilu import ilu0, ilu_bicgstab, system_matrix

VALUE_RTOL = 1e-10  # certified |v - v_pi|_inf <= VALUE_RTOL * R_max / (1 - gamma)
OCCUPANCY_TOL = 1e-10  # certified |d - d_{pi,nu}|_1 <= OCCUPANCY_TOL
_MAX_ITER = 2000  # products per solver attempt
# Plain BiCGSTAB's first attempt stops here: fast-mixing models (Garnets: ~40 iterations at
# any size) are done by then, with the same numbers as without the cap; slow-mixing ones
# (a discretised mountain car: 250-570) go on with the ILU(0) preconditioner (measured).
_PLAIN_ITER = 150


class NotCertifiedError(RuntimeError):
    """An iterative solve did not reach its certified tolerance (never returned silently)."""


def _norm(x: np.ndarray, order: float) -> float:
    return float(np.abs(x).max() if order == np.inf else np.abs(x).sum())


def certified_solve(M: sp.csr_matrix | Callable[[np.ndarray], np.ndarray], c: np.ndarray,
                    kappa: float, tol: float, x0: np.ndarray | None = None,
                    order: float = np.inf, what: str = "a value",
                    precondition: bool | str = True,
                    report: dict | None = None) -> tuple[np.ndarray, float]:
    """Solve ``x = c + M x`` to a certified error ``||x - x*|| <= tol``.

    Args:
        M: the operator: a scipy.sparse matrix (compiled BiCGSTAB, plain then
            ILU(0)-preconditioned, then GMRES, then a sparse LU) or a callable
            ``x -> M x`` (scipy's BiCGSTAB, then GMRES).
        c: the right-hand side.
        kappa: a bound < 1 on ||M|| in the norm ``order`` (np.inf or 1).
        tol: the error bound to certify.
        x0: a starting point (warm start), default c.
        order: the norm of the certificate: np.inf (values) or 1 (distributions).
        what: what is solved, for the error message.
        precondition: False skips the ILU(0) step (and the cap of the first attempt): the
            plain chain, for comparison; ``"first"`` starts with it (for a model whose
            previous solve needed it: the plain attempt would stop at its cap again).
        report: a dict that receives ``"preconditioned"``: whether the certified result came
            from the ILU(0) step.

    Returns:
        ``(x, bound)`` with ``bound = ||c + M x - x|| / (1 - kappa) <= tol``.

    Raises:
        NotCertifiedError: the solvers stop above ``tol`` (the message gives both).
    """
    n = c.shape[0]
    apply_M = M.__matmul__ if sp.issparse(M) else M
    op = LinearOperator((n, n), matvec=lambda x: x - apply_M(x), dtype=np.float64)
    x = np.array(c if x0 is None else x0, dtype=np.float64)
    target = tol * (1.0 - kappa)  # residual needed, in the certificate's norm
    bound = np.inf
    # The solvers stop on a 2-norm; the certificate is a max- or 1-norm. The first attempt
    # asks a 2-norm that a spread-out residual meets with a max-norm ~10x below target; a
    # later attempt (restarted from the best iterate) asks the 2-norm that the measured ratio
    # of the two norms says is enough, then the 2-norm that implies the target.
    spread = np.sqrt(n) if order == np.inf else 1.0 / np.sqrt(n)
    implied = target / 2 if order == np.inf else target / (2 * np.sqrt(n))
    atols = [target * spread / 10, None, implied]
    csr = M.tocsr() if HAVE_NUMBA and sp.issparse(M) else None  # for the compiled solvers
    plan: list[tuple[Callable[..., Any] | str, int, int]]
    if csr is not None and precondition == "first":
        plan = [("ilu", 0, _MAX_ITER), ("ilu", 1, _MAX_ITER), (gmres, 2, _MAX_ITER),
                (bicgstab, 2, _MAX_ITER)]
    elif csr is not None and precondition:  # plain (capped), ILU(0)-preconditioned, generic
        plan = [(bicgstab, 0, min(_PLAIN_ITER, _MAX_ITER)), ("ilu", 0, _MAX_ITER),
                ("ilu", 1, _MAX_ITER), (gmres, 2, _MAX_ITER), (bicgstab, 2, _MAX_ITER)]
    else:
        plan = [(bicgstab, 0, _MAX_ITER), (bicgstab, 1, _MAX_ITER), (gmres, 2, _MAX_ITER),
                (bicgstab, 2, _MAX_ITER)]
    ratio = ilu = None
    for solver, level, maxiter in plan:
        atol = atols[level]
        if atol is None:
            atol = target * ratio / 2 if ratio else atols[2]
        if isinstance(solver, str):  # "ilu", planned only with csr
            assert csr is not None
            if ilu is None:
                A = system_matrix(csr)
                ilu = (A, ilu0(A.indptr, A.indices, A.data))
            if level == 0:  # stop on the certificate's own norm, with room for the drift
                x_new = ilu_bicgstab(ilu[0], ilu[1], c, x, target / 4, maxiter,
                                     0 if order == np.inf else 1)  # of the recurrence
            else:
                x_new = ilu_bicgstab(ilu[0], ilu[1], c, x, atol, maxiter)
        elif csr is not None and solver is bicgstab:
            x_new = x.copy()
            _bicgstab(csr.indptr, csr.indices, csr.data, c, x_new, atol, maxiter)
        else:
            kwargs = {"restart": 40} if solver is gmres else {}
            x_new, _ = solver(op, c, x0=x, rtol=0.0, atol=atol, maxiter=_MAX_ITER, **kwargs)
        rho = c + apply_M(x_new) - x_new
        residual = _norm(rho, order)
        if np.isfinite(residual) and residual / (1.0 - kappa) < bound:
            x, bound = x_new, residual / (1.0 - kappa)
            ratio = float(np.sqrt(rho @ rho)) / residual if residual > 0 else None
        if bound <= tol:
            if report is not None:
                report["preconditioned"] = solver == "ilu"
            return x, bound
    if sp.issparse(M):  # Krylov methods stall on near-deterministic chains: a sparse LU
        direct = _sparse_direct(M, c)
        if direct is not None:
            residual = _norm(c + apply_M(direct) - direct, order)
            if np.isfinite(residual) and residual / (1.0 - kappa) <= tol:
                return direct, residual / (1.0 - kappa)
            bound = min(bound, residual / (1.0 - kappa))
    raise NotCertifiedError(
        f"the iterative solve of {what} stopped at a certified error of {bound:.3g}, above the "
        f"tolerance {tol:.3g} (the residual bound ||c + Mx - x|| / (1 - {kappa:.6g})); the "
        f"model may be too ill-conditioned (gamma close to 1): use a smaller gamma."
    )


def _sparse_direct(M: sp.csr_matrix, c: np.ndarray) -> np.ndarray | None:
    """(I - M)^-1 c by SuperLU, or None when its factors do not fit in memory."""
    from scipy.sparse.linalg import splu

    try:
        A = (sp.identity(c.shape[0], format="csc") - M).tocsc()
        return splu(A).solve(c)
    except (MemoryError, RuntimeError):
        return None


if HAVE_NUMBA:
    import numba

    @numba.njit(cache=True, nogil=True)
    def _residual_step(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                       src: np.ndarray, out: np.ndarray, dots: np.ndarray,
                       w: np.ndarray) -> tuple[float, float]:  # pragma: no cover
        """out = src - M src; returns (w . out, out . out) (w = None: only out . out)."""
        a = 0.0
        b = 0.0
        for i in range(src.shape[0]):
            acc = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                acc += data[k] * src[indices[k]]
            y = src[i] - acc
            out[i] = y
            a += w[i] * y
            b += dots[i] * y
        return a, b

    @numba.njit(cache=True, nogil=True)
    def _bicgstab(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, c: np.ndarray,
                  x: np.ndarray, atol: float, maxiter: int) -> int:  # pragma: no cover
        """BiCGSTAB (van der Vorst, 1992) on (I - M) x = c, M in CSR, x updated in place.

        Products fused with the dot products they feed; stops when the recurrence's
        residual 2-norm is <= atol (the caller certifies the true residual).
        """
        n = c.shape[0]
        r = np.empty(n)
        _residual_step(indptr, indices, data, x, r, r, r)
        for i in range(n):
            r[i] = c[i] - r[i]
        rhat = r.copy()
        p = np.zeros(n)
        v = np.zeros(n)
        s = np.empty(n)
        t = np.empty(n)
        rho = alpha = omega = 1.0
        rnorm = np.sqrt(np.dot(r, r))
        it = 0
        while it < maxiter and rnorm > atol:
            rho_new = np.dot(rhat, r)
            if rho_new == 0.0 or omega == 0.0:
                break
            beta = (rho_new / rho) * (alpha / omega)
            for i in range(n):
                p[i] = r[i] + beta * (p[i] - omega * v[i])
            rv, _ = _residual_step(indptr, indices, data, p, v, rhat, rhat)
            if rv == 0.0:  # breakdown (rhat . v = 0): stop; the caller's next solver goes on
                break
            alpha = rho_new / rv
            ss = 0.0
            for i in range(n):
                s[i] = r[i] - alpha * v[i]
                ss += s[i] * s[i]
            it += 1
            if np.sqrt(ss) <= atol:
                for i in range(n):
                    x[i] += alpha * p[i]
                break
            ts, tt = _residual_step(indptr, indices, data, s, t, t, s)
            omega = ts / tt if tt > 0.0 else 0.0
            rr = 0.0
            for i in range(n):
                x[i] += alpha * p[i] + omega * s[i]
                r[i] = s[i] - omega * t[i]
                rr += r[i] * r[i]
            rnorm = np.sqrt(rr)
            rho = rho_new
        return it

    @numba.njit(cache=True)
    def map_fixed_point(F: np.ndarray, c: np.ndarray,
                        g: float) -> np.ndarray:  # pragma: no cover - compiled
        """x = c + g x[F] for a map F (compiled; see :func:`functional_solve`)."""
        n = c.shape[0]
        x = np.empty(n)
        state = np.zeros(n, dtype=np.int8)  # 0 new, 1 on the current path, 2 solved
        path = np.empty(n, dtype=np.int64)
        for s0 in range(n):
            top, s = 0, s0
            while state[s] == 0:
                state[s] = 1
                path[top] = s
                top += 1
                s = F[s]
            if state[s] == 1:  # a new cycle path[i:top], entered at s
                i = top - 1
                while path[i] != s:
                    i -= 1
                acc, p = 0.0, 1.0
                for j in range(i, top):
                    acc += p * c[path[j]]
                    p *= g
                x[s] = acc / (1.0 - p)
                state[s] = 2
                top_cycle = i
                for j in range(top - 1, i, -1):
                    x[path[j]] = c[path[j]] + g * x[F[path[j]]]
                    state[path[j]] = 2
                top = top_cycle
            for j in range(top - 1, -1, -1):
                x[path[j]] = c[path[j]] + g * x[F[path[j]]]
                state[path[j]] = 2
        return x


def functional_solve(F: np.ndarray, c: np.ndarray, g: float) -> np.ndarray:
    """x = c + g x[F] for a map F of the states into themselves, exactly, in O(n).

    Each state's path under F ends in a cycle; a cycle's values have a closed form
    (a geometric sum over the cycle), the paths fill in backwards. Python fallback when
    numba is missing: x = c + g x[F] iterated to a fixed point (certified the same way).
    """
    if HAVE_NUMBA:
        return map_fixed_point(np.ascontiguousarray(F, dtype=np.int64), c, float(g))
    x, _ = certified_solve(lambda y: g * y[F], c, g, VALUE_RTOL)  # pragma: no cover
    return x  # pragma: no cover
