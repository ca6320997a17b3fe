"""v* by modified policy iteration (MPI), certified by a recomputed Bellman residual.

The method (Puterman, *Markov Decision Processes*, 1994, section 6.5), compiled on the
successor lists (:mod:`nsrl.exact.sweeps`):

1. greedy step: ``u = T v``, its greedy policy pi, and the range ``[lo, hi]`` of ``T v - v``
   (one pass over the S A b successor entries; pi's rows are copied contiguous);
2. partial evaluation of pi from u, warm-started: Jacobi sweeps ``v <- T_pi v`` (b entries
   per state, 8-30x cheaper than a greedy step) until the span of a sweep's change is below
   a fraction of the greedy step's span: :data:`FRACTION`, and at most :data:`CAP` sweeps,
   while the policy still changes; :data:`FRACTION_STABLE` once a greedy step changed no
   action (never below what the certificate needs, see below).

The stopping test uses the span ``hi - lo`` rather than the max-norm: T v - v is mostly a
constant shift (P_pi 1 = 1), which the span ignores, so it falls at the rate of the chain's
mixing instead of gamma (MacQueen's bounds: ``T v + gamma lo / (1 - gamma) <= v* <= T v +
gamma hi / (1 - gamma)``). When ``gamma (hi - lo) / (1 - gamma)`` is at most :data:`STOP`
times the tolerance, the midpoint ``w = T v + gamma (lo + hi) / (2 (1 - gamma))`` is formed
and **certified as every v* of nsrl is**: ``T w`` is recomputed, and ``T w`` is returned with

    |fl(T w) - v*|_inf <= (gamma |fl(T w) - w|_inf + delta) / (1 - gamma),

delta a bound on the rounding of one computed entry of T w - w
(:func:`nsrl.exact.operators.residual_rounding`). Since ``T w - w`` lies in ``gamma [lo - m,
hi - m]`` (m the midpoint of [lo, hi]), that certificate is at most ``gamma STOP tol / 2``
plus the rounding term: below tol. The span test only decides when to try; an uncertified
result is never returned.

How an evaluation is done, chosen per model by what the solve measures as it runs
(:class:`_Chooser`, in counts of sweeps, so the choices and v* do not depend on the
machine's speed): the sweeps' rate is measured on each long evaluation's first
:data:`_SWEEPS`; where the sweeps would need more than a short ILU(0)-preconditioned
BiCGSTAB solve (:mod:`nsrl.exact.ilu`) would cost, one is tried for at most :data:`PROBE`
iterations, and its measured rate decides that and later evaluations. Measured with the
solver's own counts (``stats``, deterministic): at gamma = 0.99 on the 10^5-state models the
sweeps do nearly all the work (one failed try on the 316-wide grid world, 5 iterations on
the 316 x 316 car); on a slow-mixing chain close to gamma = 1 the sweeps contract like gamma
and the preconditioned solve takes over (an 821-state grid world at 1 - 1e-4: 105 089
sweeps with the tries, 177 453 with them priced out). The sweeps alternate between two
vectors (at 10^6 states a copy per sweep is a third of its memory traffic), and the cap on
early evaluations keeps the first one from chasing a span that the next greedy step resets.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nsrl.exact.ilu import ilu0, preconditioned_bicgstab, system_matrix
from nsrl.exact.iterative import NotCertifiedError
from nsrl.exact.operators import residual_rounding
from nsrl.exact.sweeps import greedy_step, policy_step, policy_sweeps
from nsrl.model.mdp import FiniteMDP

FRACTION = 0.3  # evaluate to this fraction of the greedy step's span (measured: 0.1-0.5 alike)
FRACTION_STABLE = 1e-3  # ... once a greedy step changed no action
CAP = 20  # sweeps at most per evaluation while the policy still changes
STOP = 0.5  # certify once gamma span / (1 - gamma) <= STOP tol (the certificate <= tol / 4)
_SWEEPS = 20  # Jacobi sweeps of a long evaluation before their rate is judged
KRYLOV_ITERATION = 30.0  # one ILU(0)-BiCGSTAB iteration, in sweeps (measured: 10 at 10^6
#                          states, 31-37 at 10^5, where a sweep's vector stays in cache)
KRYLOV_SETUP = 50.0  # building I - gamma P_pi and its ILU(0), in sweeps (measured 25-50)
TRY = 2.0  # a try where a solve in TRY iterations would beat the sweeps
PROBE = 8  # BiCGSTAB iterations at most in a try, which measures its rate on this model
_MAX_SWEEPS = 100_000
_MAX_GREEDY = 10_000
VALUE_SWEEPS = 400  # a policy's value by sweeps when they would need at most this many


def _certificate(mdp: FiniteMDP, w: np.ndarray, lo: float, hi: float) -> float:
    """The bound on ``|fl(T w) - v|_inf`` (v = v* or v_pi) from ``T w - w`` in [lo, hi].

    ``|T w - v| <= gamma |w - v| <= gamma (|T w - w| + delta) / (1 - gamma)``, delta the
    rounding of one computed entry (:func:`nsrl.exact.operators.residual_rounding`).
    """
    g = mdp.gamma
    return (g * max(-lo, hi) + residual_rounding(mdp, w)) / (1.0 - g)


def _decades_per_sweep(first: float, last: float, done: int) -> float:
    """Jacobi's measured contraction of the span over ``done`` sweeps, in decades per sweep.

    0 when none is measured (one sweep, or no decrease).
    """
    if not (first > 0 and last > 0 and done > 1):
        return 0.0
    rate = (last / first) ** (1.0 / (done - 1))
    return float(-np.log10(rate)) if rate < 1 else 0.0


class _Rows:
    """The rows of the current policy, contiguous: r_pi, next states and probabilities."""

    def __init__(self, n: int, width: int):
        self.r = np.empty(n)
        self.nxt = np.empty((n, width), dtype=np.int64)
        self.p = np.empty((n, width))

    def krylov(self, gamma: float, v: np.ndarray, span_target: float, maxiter: int
               ) -> tuple[int, float, float]:
        """ILU(0)-BiCGSTAB on ``(I - gamma P_pi) v = r_pi`` from v, in place.

        It stops when the residual's max-norm (``T_pi v - v``) is <= span_target / 2 (so its
        span <= span_target) or after ``maxiter`` iterations; returns (iterations, first and
        last max-norms).
        """
        n, width = self.nxt.shape
        M = sp.csr_matrix((gamma * self.p.ravel(), self.nxt.ravel(),
                           np.arange(0, n * width + 1, width)), shape=(n, n))
        A = system_matrix(M)
        lu, diag = ilu0(A.indptr, A.indices, A.data)
        return preconditioned_bicgstab(A.indptr, A.indices, A.data, lu, diag, self.r, v,
                                       span_target / 2, maxiter, 0)


class _Chooser:
    """Sweeps or ILU(0)-BiCGSTAB for a long evaluation, from what this solve has measured.

    Costs are counted in sweeps (deterministic: the same model gives the same choices and
    the same v* on any machine). Jacobi's rate is measured by the evaluation's first
    :data:`_SWEEPS` sweeps (decades of span per sweep); BiCGSTAB's by its first try,
    capped at :data:`PROBE` iterations (decades of residual per iteration, at
    :data:`KRYLOV_ITERATION` sweeps each plus :data:`KRYLOV_SETUP`). Whichever needs fewer
    sweeps for the decades still to go does the rest. A try starts from MacQueen's midpoint
    (:func:`nsrl.exact.sweeps.policy_sweeps`), is undone if it ends worse than it started,
    and after each such failure only a 10x longer evaluation earns another.
    """

    def __init__(self) -> None:
        self.krylov_decades: float | None = None  # per iteration, once measured
        self.failed_tries = 0  # tries that did not reduce the residual

    def evaluate(self, rows: _Rows, gamma: float, v: np.ndarray, work: np.ndarray,
                 target: float, stable: bool, stats: dict) -> np.ndarray:
        """Partial evaluation of the current policy from v, in place; counts into stats."""
        cap = _MAX_SWEEPS if stable else CAP
        done, first, last, mid = policy_sweeps(rows.r, rows.nxt, rows.p, gamma, v, work,
                                               target, min(_SWEEPS, cap))
        stats["sweeps"] += done
        if not last > target or done < _SWEEPS or not stable:
            if last > target and done < cap:
                extra, *_ = policy_sweeps(rows.r, rows.nxt, rows.p, gamma, v, work, target,
                                          cap - done)
                stats["sweeps"] += extra
            return v
        jacobi = _decades_per_sweep(first, last, done)
        to_go = np.log10(last / target)
        sweeps = to_go / jacobi if jacobi > 0 else np.inf
        # Tried where a solve in TRY iterations (ILU(0) nearly exact) would beat the sweeps;
        # after each try that did not reduce the residual (BiCGSTAB is not monotone), only a
        # 10x longer evaluation earns another.
        try_cost = (KRYLOV_SETUP + TRY * KRYLOV_ITERATION) * 10.0 ** self.failed_tries
        # From MacQueen's midpoint: the sweeps leave T_pi v - v near a constant, which the
        # span ignores but BiCGSTAB's residual does not (without the shift its first
        # iterations chase that constant, and tries on a grid world rose before falling).
        v += gamma / (1.0 - gamma) * mid
        if self.krylov_decades is None and sweeps > try_cost:
            before = v.copy()
            its, r0, r1 = rows.krylov(gamma, v, target, PROBE)
            stats["krylov"] += its
            if not r1 > target / 2:
                return v
            if r1 < r0:
                self.krylov_decades = np.log10(r0 / r1) / its
                last = 2 * r1  # the span of T_pi v - v is at most twice its max-norm
                to_go = np.log10(last / target)
                sweeps = to_go / jacobi if jacobi > 0 else np.inf
            else:
                v[:] = before  # the try's iterate is worse than where it started
                self.failed_tries += 1
        if self.krylov_decades is not None and self.krylov_decades > 0 and (
                KRYLOV_SETUP + to_go / self.krylov_decades * KRYLOV_ITERATION < sweeps):
            its, _, r1 = rows.krylov(gamma, v, target, 2000)
            stats["krylov"] += its
            if not r1 > target / 2:
                return v
        extra, *_ = policy_sweeps(rows.r, rows.nxt, rows.p, gamma, v, work, target,
                                  _MAX_SWEEPS)
        stats["sweeps"] += extra
        return v


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
    span_stop = STOP * tol / c  # gamma span / (2 (1 - gamma)) <= tol / 4
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=np.float64)
    u, work = np.empty(n), np.empty(n)
    actions = np.full(n, -1, dtype=np.int64)
    rows = _Rows(n, width)
    chooser = _Chooser()
    stats = {"greedy": 0, "sweeps": 0, "krylov": 0}
    bound = np.inf
    for _ in range(_MAX_GREEDY):
        tie = 4 * residual_rounding(mdp, v)  # a change of action must beat rounding
        lo, hi, changed = greedy_step(R, nxt, probs, g, v, u, actions, rows.r, rows.nxt, rows.p,
                                      tie)
        stats["greedy"] += 1
        if not (np.isfinite(lo) and np.isfinite(hi)):
            break
        if hi - lo <= span_stop:
            w = u + c * (lo + hi) / 2
            lo, hi, changed = greedy_step(R, nxt, probs, g, w, u, actions, rows.r, rows.nxt,
                                          rows.p)
            stats["greedy"] += 1
            certified = _certificate(mdp, w, lo, hi)
            if certified <= tol:
                return u, certified, stats
            bound = min(bound, certified)
            if hi - lo <= span_stop * 1e-3:  # rounding floor: no progress is possible
                break
        fraction = FRACTION_STABLE if changed == 0 else FRACTION
        v, u = u, v
        # A stable policy evaluated to a span below span_stop passes the test at the next
        # greedy step (span(P x) <= span(x)); a quarter of it gives certificates near tol / 16
        # as before this solver's speed-ups (the same accuracy asked of the peers).
        v = chooser.evaluate(rows, g, v, work, max((hi - lo) * fraction, span_stop / 4),
                             changed == 0, stats)
    raise NotCertifiedError(
        f"modified policy iteration on {mdp!r} stopped at a certified error of {bound:.3g}, "
        f"above the tolerance {tol:.3g}: the rounding of values of scale R_max / (1 - gamma) "
        f"= {mdp.r_max / (1 - g):.3g} is too large; use a smaller gamma."
    )


def policy_value(mdp: FiniteMDP, actions: np.ndarray, tol: float,
                 v0: np.ndarray | None = None) -> tuple[np.ndarray, float] | None:
    """v_pi of a deterministic policy within a certified ``tol``, by sweeps, or None.

    The evaluation of :func:`optimal_mpi` run to the end, with the same certificate: Jacobi
    sweeps from ``v0`` (the previous policy's value: a warm start) until the span of their
    change allows it, then MacQueen's midpoint w, ``T_pi w`` recomputed and returned with
    ``|fl(T_pi w) - v_pi|_inf <= (gamma |T_pi w - w|_inf + delta) / (1 - gamma)``.
    On a fast-mixing chain (a Garnet) this beats a Krylov solve (``benchmarks/
    bench_exact_values.py``: 2-2.5x at 10^3-10^5 states); on a slow-mixing one it does not,
    so after any :data:`_SWEEPS` sweeps whose rate predicts more than :data:`VALUE_SWEEPS`
    in all it returns None and the caller solves by Krylov from its own start.
    """
    (nxt, probs), R, g = mdp.successors, mdp.R, mdp.gamma
    n = mdp.n_states
    s = np.arange(n)
    rows = _Rows(n, nxt.shape[2])
    rows.r[:], rows.nxt[:], rows.p[:] = R[s, actions], nxt[s, actions], probs[s, actions]
    c = g / (1.0 - g)
    target = STOP * tol / c / 4
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=np.float64)
    work, u = np.empty(n), np.empty(n)
    done = 0
    while True:  # chunks of _SWEEPS, each re-judging the rate (it slows after a transient)
        k, first, last, mid = policy_sweeps(rows.r, rows.nxt, rows.p, g, v, work, target,
                                            _SWEEPS)
        done += k
        if not last > target:
            break
        decades = _decades_per_sweep(first, last, k)
        more = np.log10(last / target) / decades if decades > 0 else np.inf
        if done + more > VALUE_SWEEPS:
            return None
    for _ in range(3):  # rounding may need a sweep or two more than the span promised
        w = v + c * mid
        lo, hi = policy_step(rows.r, rows.nxt, rows.p, g, w, u)
        bound = _certificate(mdp, w, lo, hi)
        if bound <= tol:
            return u, bound
        mid = policy_sweeps(rows.r, rows.nxt, rows.p, g, v, work, -1.0, 1)[3]
    return None
