"""v* by modified policy iteration (MPI), certified by a recomputed Bellman residual.

The method (Puterman, *Markov Decision Processes*, 1994, section 6.5), compiled on the
successor lists (:mod:`nsrl.exact.sweeps`):

1. greedy step: ``u = T v``, its greedy policy pi, and the range ``[lo, hi]`` of ``T v - v``
   (one pass over the S A b successor entries; pi's rows are copied contiguous);
2. partial evaluation of pi from u, warm-started: Jacobi sweeps ``v <- T_pi v`` (b entries
   per state, ~10x cheaper than a greedy step at 10 actions) until the span of a sweep's
   change is below a fraction of the greedy step's span: :data:`FRACTION` while the policy
   still changes, :data:`FRACTION_STABLE` once a greedy step changed no action.

The stopping test uses the span ``hi - lo`` rather than the max-norm: T v - v is mostly a
constant shift (P_pi 1 = 1), which the span ignores, so it falls at the rate of the chain's
mixing instead of gamma (MacQueen's bounds: ``T v + gamma lo / (1 - gamma) <= v* <= T v +
gamma hi / (1 - gamma)``). When ``gamma (hi - lo) / (2 (1 - gamma))`` is below a quarter of
the tolerance, the midpoint ``w = T v + gamma (lo + hi) / (2 (1 - gamma))`` is formed and
**certified as every v* of nsrl is**: ``T w`` is recomputed, and ``T w`` is returned with

    |fl(T w) - v*|_inf <= (gamma |fl(T w) - w|_inf + delta) / (1 - gamma),

delta a bound on the rounding of one computed entry of T w - w
(:func:`nsrl.exact.operators.residual_rounding`). The span
test only decides when to try; an uncertified result is never returned.

How the evaluation is chosen per model, by measurement as it runs: Jacobi sweeps, until
their measured rate (the ratio of the spans of successive changes: their contraction on
everything but constants) predicts more than :data:`KRYLOV_AFTER` further sweeps; the rest of
that evaluation is then one ILU(0)-preconditioned BiCGSTAB solve (:mod:`nsrl.exact.ilu`)
from the current iterate. Measured (one core, loaded machine): at gamma = 0.99 the sweeps win
everywhere: a sweep on a policy's contiguous rows costs 1/10-1/30 of a greedy step, and a
switch after 60 predicted sweeps made the grid world slower (2.9-3.2 s against 2.4-2.7 s)
and the mountain car no faster (0.84-0.95 s against 0.74-1.05 s); but on a slow-mixing chain
at gamma close to 1 the sweeps contract like gamma, where the preconditioned solve needs ~25
iterations (an 821-state grid world at 1 - 1e-4: 176 559 sweeps and 2.7 s by sweeps alone,
77 792 sweeps and 1.7 s with the switch).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nsrl.exact.ilu import ilu0, ilu_bicgstab, system_matrix
from nsrl.exact.iterative import NotCertifiedError
from nsrl.exact.operators import residual_rounding
from nsrl.exact.sweeps import greedy_step, policy_sweeps
from nsrl.model.mdp import FiniteMDP

FRACTION = 0.3  # evaluate to this fraction of the greedy step's span (measured: 0.1-0.5 alike)
FRACTION_STABLE = 1e-3  # ... once a greedy step changed no action
_SWEEPS = 50  # Jacobi sweeps before their rate is judged
KRYLOV_AFTER = 1000  # predicted further sweeps above which an evaluation goes to BiCGSTAB
_MAX_SWEEPS = 100_000
_MAX_GREEDY = 10_000


class _Rows:
    """The rows of the current policy, contiguous: r_pi, next states and probabilities."""

    def __init__(self, n: int, width: int):
        self.r = np.empty(n)
        self.nxt = np.empty((n, width), dtype=np.int64)
        self.p = np.empty((n, width))

    def krylov(self, gamma: float, v: np.ndarray, span_target: float) -> np.ndarray:
        """v_pi from v to a residual 2-norm <= span_target / 2 (so its span <= span_target)."""
        n, width = self.nxt.shape
        M = sp.csr_matrix((gamma * self.p.ravel(), self.nxt.ravel(),
                           np.arange(0, n * width + 1, width)), shape=(n, n))
        A = system_matrix(M)
        return ilu_bicgstab(A, ilu0(A.indptr, A.indices, A.data), self.r, v, span_target / 2,
                            2000)


def _evaluate(rows: _Rows, gamma: float, v: np.ndarray, work: np.ndarray,
              target: float) -> tuple[np.ndarray, int]:
    """Partial evaluation of the current policy from v: (v, sweeps done)."""
    done, first, last = policy_sweeps(rows.r, rows.nxt, rows.p, gamma, v, work, target,
                                      _SWEEPS)
    if not last > target or done < _SWEEPS:
        return v, done
    rate = (last / first) ** (1.0 / (done - 1)) if first > 0 else 0.0
    more = np.log(target / last) / np.log(rate) if 0 < rate < 1 else np.inf
    if more > KRYLOV_AFTER:
        return rows.krylov(gamma, v, target), done
    extra, _, _ = policy_sweeps(rows.r, rows.nxt, rows.p, gamma, v, work, target, _MAX_SWEEPS)
    return v, done + extra


def optimal_mpi(mdp: FiniteMDP, tol: float, v0: np.ndarray | None = None
                ) -> tuple[np.ndarray, float, dict]:
    """v* within a certified ``tol`` in max-norm, by modified policy iteration.

    Args:
        mdp: the model.
        tol: the max-norm error to certify.
        v0: a starting value (default 0).

    Returns:
        ``(v, bound, stats)``: v with ``|v - v*|_inf <= bound <= tol``; stats counts the
        greedy steps and sweeps done.

    Raises:
        NotCertifiedError: the residual cannot be brought below ``tol`` (rounding: gamma too
            close to 1 for the model's scale).
    """
    (nxt, probs), R, g = mdp.successors, mdp.R, mdp.gamma
    n, width = mdp.n_states, nxt.shape[2]
    c = g / (1.0 - g)
    span_stop = tol / c / 2  # gamma span / (2 (1 - gamma)) <= tol / 4
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=np.float64)
    u, work = np.empty(n), np.empty(n)
    actions = np.full(n, -1, dtype=np.int64)
    rows = _Rows(n, width)
    stats = {"greedy": 0, "sweeps": 0}
    bound = np.inf
    for _ in range(_MAX_GREEDY):
        lo, hi, changed = greedy_step(R, nxt, probs, g, v, u, actions, rows.r, rows.nxt, rows.p)
        stats["greedy"] += 1
        if not (np.isfinite(lo) and np.isfinite(hi)):
            break
        if hi - lo <= span_stop:
            w = u + c * (lo + hi) / 2
            lo, hi, changed = greedy_step(R, nxt, probs, g, w, u, actions, rows.r, rows.nxt,
                                          rows.p)
            stats["greedy"] += 1
            delta = residual_rounding(mdp, w)  # and of u = T w itself
            certified = (g * max(-lo, hi) + delta) / (1.0 - g)
            if certified <= tol:
                return u, certified, stats
            bound = min(bound, certified)
            if hi - lo <= span_stop * 1e-3:  # rounding floor: no progress is possible
                break
        fraction = FRACTION_STABLE if changed == 0 else FRACTION
        v, u = u, v
        v, done = _evaluate(rows, g, v, work, max((hi - lo) * fraction, span_stop / 4))
        stats["sweeps"] += done
    raise NotCertifiedError(
        f"modified policy iteration on {mdp!r} stopped at a certified error of {bound:.3g}, "
        f"above the tolerance {tol:.3g}: the rounding of values of scale R_max / (1 - gamma) "
        f"= {mdp.r_max / (1 - g):.3g} is too large; use a smaller gamma."
    )
