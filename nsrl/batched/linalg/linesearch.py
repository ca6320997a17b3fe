"""CPI+'s line search without a dense solve per candidate (the sweep's largest cost).

CPI+ scores every step a in {min(2^i alpha, 1)} by nu v_a, v_a the value of the mixture
(1 - a) pi + a pi', and keeps the first best. With A = I - gamma P_pi, G = gamma (P_pi' -
P_pi), w = (r_pi' - r_pi) + G v and v = v_pi, the mixture's value is v_a = v + delta_a with

    (A - a G) delta_a = a w + (r_pi - A v)    (the last term: v's own rounding residual).

All candidates share one small subspace: the Krylov space K_J(B G, B w), B an explicit
inverse of an earlier A (:class:`StaleInverse`; CPI+'s steps are tiny, so B stays an
excellent preconditioner for many iterations). Each candidate's delta_a is the least-squares
solution over that subspace, and its *true* residual res_a is computed, so that

    ||v_a - (v + delta_a)||_inf <= ||res_a||_inf / (1 - gamma)

(A - a G = I - gamma P_a with P_a stochastic). The scores become certified intervals: a
candidate whose interval lies below the best one's cannot be the reference's choice; the
candidates that remain uncertain (rare: a large step close to the best) and a chosen value
not accurate to ``VALUE_TOL`` are solved directly. The stale inverse also gives d_{pi,nu} by
preconditioned Richardson iteration, certified by its residual.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.linalg import lapack

from nsrl.batched.linalg import gmres
from nsrl.batched.linalg.solvers import OCCUPANCY_RTOL, RTOL
from nsrl.schemes import rules

BASIS = 8  # dimension J of the candidates' shared subspace
FAR_BASIS = 6  # b = 1: extra Krylov vectors around the step a = 1
VALUE_TOL = 1e-10  # certified accuracy of the chosen value (the next target)
DRIFT = 1e-3  # refresh a run's inverse once its steps since the last refresh add up to this
# The first Krylov vector A^{-1} w enters the values times the (small) step: 1e-10 relative
# keeps the smallest steps certified; the chosen value is polished to RTOL anyway.
FIRST_RTOL = 1e-10
MAX_SWEEPS = 25


def _mv(M, x):
    """Batched matrix-vector products M[r] @ x[r] (BLAS; in M's precision, returned double)."""
    if M.dtype == np.float32:
        return np.matmul(M, x.astype(np.float32)[..., None])[..., 0].astype(np.float64)
    return np.matmul(M, x[..., None])[..., 0]


def invert(A: np.ndarray) -> np.ndarray:
    """Single-precision inverses of the matrices A[i] (LAPACK sgetrf + sgetri).

    They only precondition (every result is certified by a double-precision residual), so
    single precision is enough: half the memory traffic per product, the dominant cost at
    n_S = 200. A[i] is C-ordered: its transpose goes to LAPACK without a reordering copy;
    inv(A^T)^T = inv(A).
    """
    out = np.empty(A.shape, dtype=np.float32)
    for i, M in enumerate(A):
        lu, piv, info = lapack.sgetrf(M.T.astype(np.float32))
        inverse, info2 = lapack.sgetri(lu, piv)
        if info or info2:
            raise np.linalg.LinAlgError(f"singular system (LAPACK info {info or info2})")
        out[i] = inverse.T
    return out


class StaleInverse:
    """Explicit inverses B[r] of I - gamma P_r for every run, refreshed when stale.

    Args:
        batch: the :class:`nsrl.batched.linalg.state.Batch` of the MDP.
        A: every run's system I - gamma P_pi (R, n, n).
    """

    def __init__(self, batch, A: np.ndarray):
        self.b = batch
        self.B = invert(A)
        self.drift = np.zeros(len(A))
        self.raw = _mv(np.swapaxes(self.B, 1, 2), np.broadcast_to(
            (1.0 - batch.gamma) * batch.mdp.start, (len(A), batch.n)))

    def refresh(self, runs: np.ndarray, A: np.ndarray) -> None:
        """Re-invert those of ``runs`` whose steps since their last inverse exceed DRIFT.

        ``A`` holds every run's current system.
        """
        stale = runs[self.drift[runs] > DRIFT]
        if stale.size:
            self.B[stale] = invert(A[stale])
            self.drift[stale] = 0.0

    def occupancy(self, runs: np.ndarray, T: np.ndarray) -> np.ndarray:
        """d_{pi,nu} of the runs ``runs`` with tables ``T`` (as Batch.occupancy), certified."""
        b = self.b
        rhs = np.broadcast_to((1.0 - b.gamma) * b.mdp.start, (len(runs), b.n))
        # warm start: the runs' previous occupancies (CPI+'s steps are small)
        x = solve(self.B[runs], System(b, T), rhs, transpose=True, x0=self.raw[runs],
                  rtol=OCCUPANCY_RTOL)
        self.raw[runs] = x
        d = np.clip(x, 0.0, None)
        return d / d.sum(axis=1, keepdims=True)


class System:
    """Products with the systems A = I - gamma P_T of some runs, through their sparse tables.

    (Dense products with A were measured slower: at n_S = 200 each reads 320 kB per run
    from memory, against n_A b successors per state for the tables.)

    Args:
        batch: the Batch.
        T: the runs' tables (R, n, n_A).
    """

    def __init__(self, batch, T):
        self.b, self.T = batch, T

    def __call__(self, x: np.ndarray, transpose: bool = False) -> np.ndarray:
        """A[r] x[r] (or A[r]^T x[r]) for x of shape (R, n) (or (R, n, J), not transposed)."""
        b = self.b
        return x - b.gamma * gmres.table_mv(b.nxt, b.probs, self.T, x, transpose)


def solve(B, op: System, rhs, transpose=False, x0=None, rtol=RTOL, sweeps=MAX_SWEEPS,
          direct=True):
    """x = A[r]^{-1} rhs[r] (or the transposed system) for the runs of ``op``.

    Richardson iteration preconditioned by B[r] ~ A[r]^{-1} from ``x0`` (default B rhs),
    stopped on the residual (relative ``rtol``); runs that do not certify within ``sweeps``
    are solved directly (``direct``) or returned as they are.
    """
    Bm = np.swapaxes(B, 1, 2) if transpose else B
    x = _mv(Bm, rhs) if x0 is None else x0.copy()
    tol = rtol * np.linalg.norm(rhs, axis=1)
    for _ in range(sweeps):
        res = rhs - op(x, transpose)
        left = np.linalg.norm(res, axis=1) > tol
        if not left.any():
            return x
        x += _mv(Bm, res * left[:, None])
    if direct:
        left = np.linalg.norm(rhs - op(x, transpose), axis=1) > tol
        x[left] = op.b.solve_tables(op.T[left], rhs[left], transpose)
    return x


def subspace_values(b, B, op: System, rpi, v, acts, owner, steps):
    """Every candidate's value from the shared subspace, with its certified error bound.

    Args:
        b: the Batch.
        B: the runs' (stale) inverses.
        op: products with the runs' systems A = I - gamma P_pi.
        rpi: the runs' r_pi.
        v: the runs' v_pi.
        acts: the runs' greedy policies pi'.
        owner: each candidate's run (:func:`nsrl.schemes.rules.line_search_steps`).
        steps: each candidate's step.

    Returns:
        (values[c, s], err[c]) with ||values[c] - v_{a_c}||_inf <= err[c].
    """
    gamma = b.gamma
    Tn = np.eye(b.mdp.n_actions)[acts]
    rn = b.mdp.R[b.states, acts]

    def G(x):  # gamma (P_pi' - P_pi) x, one compiled pass
        return gamma * gmres.difference_mv(b.nxt, b.probs, acts, op.T, x)

    w = rn - rpi + G(v)
    own = rpi - op(v)  # v's residual, carried into every candidate
    deterministic = b.nxt.shape[2] == 1
    Z = np.empty((len(v), b.n, BASIS + (FAR_BASIS if deterministic else 0)))
    z = solve(B, op, w, rtol=FIRST_RTOL)  # A^{-1} w: the first-order term, accurately
    for i in range(BASIS):
        Z[:, :, i] = z
        if i + 1 < BASIS:
            z = _mv(B, G(z))
    if deterministic:
        # b = 1: (I - gamma P_pi')^{-1} is an O(n) functional-graph solve, so the steps near
        # a = 1 get their own Krylov vectors: A - aG = A' + (1 - a) G, A' = I - gamma P_pi'.
        def solve_new(y):
            return gmres.functional_values(b.nxt, acts[:, None, :], y, gamma)

        z = solve_new(w)
        for i in range(FAR_BASIS):
            Z[:, :, BASIS + i] = z
            z = solve_new(G(z))
    Q = np.linalg.qr(Z)[0]
    AQ = op(Q)
    GQ = gamma * gmres.table_mv(b.nxt, b.probs, Tn, Q) - (Q - AQ)
    # Least squares over span(Q) for every candidate c (run o, step a), by the normal
    # equations of M = AQ - a GQ (conditioned like I - gamma P_a); residuals are explicit.
    AQt, GQt = np.swapaxes(AQ, 1, 2), np.swapaxes(GQ, 1, 2)
    gram = np.stack([AQt @ AQ, AQt @ GQ, GQt @ GQ], axis=1)
    proj = np.stack([_mv(AQt, w), _mv(GQt, w), _mv(AQt, own), _mv(GQt, own)], axis=1)
    values, res = _candidate_values(gram, proj, np.ascontiguousarray(np.swapaxes(Q, 1, 2)),
                                    np.ascontiguousarray(AQt), np.ascontiguousarray(GQt), w,
                                    own, v, owner, steps)
    return values, res / (1.0 - gamma)


@njit(cache=True)
def _candidate_values(gram, proj, Qt, AQt, GQt, w, own, v, owner, steps):  # pragma: no cover
    """Each candidate's least-squares value over span(Q[o]) and its residual's max norm.

    Candidate c (run o, step a): y minimises ||a w + own - (AQ - a GQ) y|| (normal
    equations from the Gram blocks ``gram[o]`` = (AQ'AQ, AQ'GQ, GQ'GQ) and ``proj[o]`` =
    (AQ'w, GQ'w, AQ'own, GQ'own)); value v + Q y; residual computed explicitly. The bases
    come transposed (R, J, n), so the inner loops run along contiguous states.
    """
    J, n = Qt.shape[1], Qt.shape[2]
    values = np.empty((owner.size, n))
    res = np.empty(owner.size)
    acc = np.empty(n)
    N = np.empty((J, J))
    rhs = np.empty(J)
    for c in range(owner.size):
        o, a = owner[c], steps[c]
        for i in range(J):
            for j in range(J):
                N[i, j] = (gram[o, 0, i, j] - a * (gram[o, 1, i, j] + gram[o, 1, j, i])
                           + a * a * gram[o, 2, i, j])
            rhs[i] = a * proj[o, 0, i] + proj[o, 2, i] - a * (a * proj[o, 1, i] + proj[o, 3, i])
        y = np.linalg.solve(N, rhs)
        val = values[c]
        for s in range(n):
            acc[s] = a * w[o, s] + own[o, s]
            val[s] = v[o, s]
        for j in range(J):
            ga, ya = a * y[j], y[j]
            for s in range(n):
                acc[s] += ga * GQt[o, j, s] - ya * AQt[o, j, s]
                val[s] += ya * Qt[o, j, s]
        worst = 0.0
        for s in range(n):
            worst = max(worst, abs(acc[s]))
        res[c] = worst
    return values, res


def polish(b, B, T, rpi, acts, steps, x, sweeps: int = 3):
    """Refine the values ``x`` of the mixtures (1 - a) pi + a pi' (one per run) in place.

    A few preconditioned Richardson sweeps (:func:`solve`, no direct fallback), to residual
    RTOL ||r_a||: a chosen value certified only to VALUE_TOL would otherwise pass its
    residual on to the next iteration's bounds (divided by 1 - gamma). Returns the
    certified error bounds (the caller solves directly what they do not accept).
    """
    r = rules.mix(rpi, b.mdp.R[b.states, acts], steps)
    op = System(b, rules.mix(T, np.eye(b.mdp.n_actions)[acts], steps))
    x[:] = solve(B, op, r, x0=x, sweeps=sweeps, direct=False)
    return np.abs(r - op(x)).max(axis=1) / (1.0 - b.gamma)


def choose(owner, score, err):
    """Per run: the best candidate by the scores, and the candidates not certified to lose to it.

    The choice is :func:`nsrl.schemes.rules.choose_steps` (rule "best"); ``owner`` is sorted
    (:func:`nsrl.schemes.rules.line_search_steps`). A candidate is uncertain when its run has
    another candidate whose interval [score - err, score + err] reaches the best one's.

    Returns:
        (best[c] per run, in run order, and the uncertain mask over candidates).
    """
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    group = np.cumsum(np.r_[False, owner[1:] != owner[:-1]])
    best = rules.choose_steps(owner, score, "best")
    close = score + err >= (score - err)[best][group]
    uncertain = close & (np.add.reduceat(close, starts) > 1)[group]
    return best, uncertain
