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
and the preconditioned solve takes over (an 821-state grid world at 1 - 1e-4: 819
sweeps and 26 iterations with the tries, 184 269 sweeps with ``KRYLOV_SETUP = 1e12``).
The sweeps alternate between two vectors (at 10^6 states a copy per sweep is a third of
its memory traffic), and the cap on early evaluations keeps the first one from chasing a
span that the next greedy step resets (measured: 20-40 alike on the Garnets; the grid
world's 121 greedy steps and 1 357 sweeps at 20 are 115 and 1 175 at 30).

Where the model is large, three things more, each chosen by size alone (deterministic, and
each tested at small sizes against a dense solve by forcing it):

* **MacQueen's action elimination** (from :data:`ELIMINATE_MIN_PAIRS` state-action pairs;
  MacQueen 1967, Puterman section 6.7.2): with ``v* >= T v + c lo`` and ``Q*(s, a) <=
  q(s, a) + c hi`` (c = gamma / (1 - gamma)), an action whose gap ``T v(s) - q(s, a)``
  exceeds ``c (hi - lo)`` plus a rounding margin is not optimal, and the model without it
  has the same v*. Once the last step's bounds could tell some actions apart, the greedy
  steps record their gaps and the actions left are copied into rows of their own
  (:func:`_eliminate`): on a Garnet(10^6, 10, 2) 12 of the 28 greedy steps run on the rows
  left, and 90% of the pairs are gone by the end (``stats["eliminated"]``). The certificate's step
  takes every action of the model, so the certificate means what it meant.
* **float32 correction sweeps** (from :data:`LARGE_STATES` states, where v no longer stays
  in cache): :meth:`_Rows.jacobi`, iterative refinement on ``T_pi v - v`` in float32,
  started from the greedy step's own residual.
* **float32 greedy steps** until the first that records gaps (:func:`_low_precision`, if
  memory allows; neither float32 path where the values' scale reaches
  :data:`FLOAT32_SCALE`): those steps only choose the next policy to evaluate; the steps that record
  gaps, all later ones and the certificate's run in float64. After them, and after the
  steps on the rows left by the elimination, the policy's rows are copied from the float64
  model in a pass of their own (``apart``, :func:`nsrl.exact.sweeps.greedy_step`;
  ``benchmarks/bench_mpi_kernels.py`` measures each choice).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from nsrl.exact.ilu import ilu0, preconditioned_bicgstab, system_matrix
from nsrl.exact.iterative import NotCertifiedError
from nsrl.exact.operators import residual_rounding
from nsrl.exact.sweeps import (
    count_rows,
    greedy_rows,
    greedy_step,
    keep_rows,
    policy_rows,
    policy_rows_of,
    policy_step,
    policy_sweeps,
)
from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import available_memory

FRACTION = 0.3  # evaluate to this fraction of the greedy step's span (measured: 0.1-0.5 alike)
FRACTION_STABLE = 1e-3  # ... once a greedy step changed no action
CAP = 30  # sweeps at most per evaluation while the policy still changes (20: grid world +10%)
STOP = 0.5  # certify once gamma span / (1 - gamma) <= STOP tol (the certificate <= tol / 4)
_SWEEPS = 20  # Jacobi sweeps of a long evaluation before their rate is judged
KRYLOV_ITERATION = 30.0  # one ILU(0)-BiCGSTAB iteration, in sweeps (measured: 10 at 10^6
#                          states, 31-37 at 10^5, where a sweep's vector stays in cache)
KRYLOV_SETUP = 50.0  # building I - gamma P_pi and its ILU(0), in sweeps (measured 25-50)
TRY = 2.0  # a try where a solve in TRY iterations would beat the sweeps
PROBE = 8  # BiCGSTAB iterations at most in a try, which measures its rate on this model
_MAX_SWEEPS = 100_000
ELIMINATE_MIN_PAIRS = 1_000_000  # MacQueen's elimination from this many (state, action) pairs
FLOAT32_SCALE = 1e30  # float32 paths only for values below this (float32 overflows at 3.4e38)
FLOAT32_TINY = 1e-30  # ... and for spans to resolve above this (float32's normals from 1.2e-38)
# float32 greedy steps end at the first of: a step that changes no action, a span within
# FLOAT32_FLOOR |v| (float32 rounds v to 2^-24 |v|: below this its spans are noise), or
# LOW_STEPS steps (measured: 3-12 on the Garnets before gaps are recorded). Issue 47: with
# ties, one action, or rewards offset by 1e4 the gaps were never recorded and the float32
# steps ran to _MAX_GREEDY.
FLOAT32_FLOOR = 2.0**-16
LOW_STEPS = 30
LARGE_STATES = 500_000  # from here on (v out of cache), float32 sweeps, greedy rows apart
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
    """The rows of the current policy, contiguous: r_pi, next states and probabilities.

    With ``mixed`` (:func:`optimal_mpi` on a large model), also the float32 arrays of
    :meth:`jacobi`'s correction sweeps (``p32`` refreshed from ``p`` when ``fresh`` is
    false, i.e. after each greedy step).
    """

    def __init__(self, n: int, width: int, mixed: bool = False):
        self.r = np.empty(n)
        self.nxt = np.empty((n, width), dtype=np.int64)
        self.p = np.empty((n, width))
        self.mixed = mixed
        self.fresh = False
        if self.mixed:
            self.p32 = np.empty((n, width), dtype=np.float32)
            self.r32, self.d, self.e = (np.empty(n, dtype=np.float32) for _ in range(3))

    def jacobi(self, gamma: float, v: np.ndarray, work: np.ndarray, target: float,
               max_sweeps: int, start: tuple[np.ndarray, float, float] | None = None
               ) -> tuple[int, float, float, float]:
        """Jacobi sweeps ``v <- T_pi v``: :func:`nsrl.exact.sweeps.policy_sweeps`'s contract.

        On a large model the sweeps run in float32 on the correction (iterative refinement):
        from a float64 residual ``r = T_pi x - x`` (of the greedy step that made ``v = T x``
        when ``start = (x, lo, hi)`` gives x and r's range, else of a float64 sweep from v)
        and m the middle of r's range, ``v_k = x + m (1 - gamma^k) / (1 - gamma) + d_k``
        where ``d_1 = r - m`` and ``d_{k+1} = (r - m) + gamma P_pi d_k``: a sweep that moves
        half the bytes of a float64 one and gathers from a vector half the size
        (``benchmarks/bench_mpi_kernels.py``). The constant m, which the span ignores, is
        carried exactly; float32 resolves the span of d's change to about 2^-17 |d|, so a
        round whose target lies below that ends there and the next starts from a float64
        sweep. Nothing certified depends on it: the certificate recomputes T w in float64.
        """
        if not self.mixed:
            return policy_sweeps(self.r, self.nxt, self.p, gamma, v, work, target, max_sweeps)
        if not self.fresh:
            self.p32[:] = self.p
            self.fresh = True
        done, first, last, mid = 0, 0.0, 0.0, 0.0
        while done < max_sweeps:
            if start is not None:  # the greedy step's residual: no float64 sweep
                x, lo, hi = start
                start = None
                np.subtract(v, x, out=work)
            else:
                lo, hi = policy_step(self.r, self.nxt, self.p, gamma, v, work)
                done += 1
                x = v
            last, mid = hi - lo, (hi + lo) / 2
            if not first:
                first = last
            if not last > target or done >= max_sweeps:
                if x is v:
                    v[:] = work  # that float64 sweep was the last
                break
            if x is v:
                work -= v  # r = T_pi v - v
            work -= mid
            self.r32[:] = work
            self.d[:] = self.r32
            floor = 2.0 ** -17 * (last / 2) / (1.0 - gamma)  # |r - m| = span / 2
            k, _, last, mid32 = policy_sweeps(self.r32, self.nxt, self.p32, gamma, self.d,
                                              self.e, max(target, floor), max_sweeps - done)
            if x is not v:
                v[:] = x
            v += self.d
            v += mid * (1.0 - gamma ** (k + 1)) / (1.0 - gamma)
            done += k
            mid = mid32 + mid * gamma ** k
            if not last > target:
                break
        return done, first, last, mid

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
                 target: float, stable: bool, stats: dict,
                 start: tuple[np.ndarray, float, float] | None = None) -> np.ndarray:
        """Partial evaluation of the current policy from v, in place; counts into stats.

        ``start = (x, lo, hi)``: v is ``T x`` and ``T x - x`` lies in [lo, hi] (the greedy
        step's residual, which :meth:`_Rows.jacobi` uses instead of a sweep of its own).
        """
        cap = _MAX_SWEEPS if stable else CAP
        done, first, last, mid = rows.jacobi(gamma, v, work, target, min(_SWEEPS, cap), start)
        stats["sweeps"] += done
        if not last > target or done < _SWEEPS or not stable:
            if last > target and done < cap:
                extra, *_ = rows.jacobi(gamma, v, work, target, cap - done)
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
        extra, *_ = rows.jacobi(gamma, v, work, target, _MAX_SWEEPS)
        stats["sweeps"] += extra
        return v


class _ActionRows(NamedTuple):
    """Rows of (state, action) pairs for :func:`nsrl.exact.sweeps.greedy_step`."""

    ptr: np.ndarray  # state s has the rows ptr[s]:ptr[s + 1]
    act: np.ndarray  # the action of each row (empty: k - ptr[s], every action)
    R: np.ndarray
    nxt: np.ndarray
    probs: np.ndarray


def _every_action(mdp: FiniteMDP) -> _ActionRows:
    """Every (state, action) pair: the model's own arrays, reshaped (no copy)."""
    (nxt, probs), R = mdp.successors, mdp.R
    n, n_actions, width = nxt.shape
    return _ActionRows(np.arange(0, n * n_actions + 1, n_actions, dtype=np.int64),
                       np.empty(0, dtype=np.int64), R.reshape(-1),
                       nxt.reshape(n * n_actions, width), probs.reshape(n * n_actions, width))


def _eliminate(live: _ActionRows, gaps: np.ndarray, threshold: float) -> _ActionRows:
    """The rows left once those whose gap exceeds ``threshold`` are dropped (MacQueen).

    With ``u = T v`` and ``T v - v`` in [lo, hi], ``v* >= u + c lo`` and ``Q*(s, a) <=
    q(s, a) + c hi`` (c = gamma / (1 - gamma); MacQueen 1967, Puterman section 6.7.2), so an
    action whose gap ``u(s) - q(s, a)`` exceeds ``c (hi - lo)`` is not optimal at s, and the
    model without it has the same v*. The caller's threshold adds a margin for the rounding
    of q, u, lo and hi. The rows are copied only when at most half of them are left (or a
    tenth of a copy's goes): the first copy costs memory, each later one time. The copy is
    an optimisation: where memory is short it is skipped and the solve goes on as before.
    """
    left = count_rows(live.ptr, gaps, threshold)
    total = live.R.shape[0]
    if left > total * (0.9 if live.act.shape[0] else 0.5):
        return live
    width = live.nxt.shape[1]
    if not _affordable(left * (8 * 2 + 16 * width) + 8 * live.ptr.shape[0]):
        return live
    return _ActionRows(*keep_rows(*live, gaps, threshold, left))


def _affordable(nbytes: float) -> bool:
    """Whether an optional copy of ``nbytes`` fits in half the memory available now."""
    free = available_memory()
    return free is not None and nbytes <= free / 2


class _Low(NamedTuple):
    """float32 copies of a large model's successors for its first greedy steps."""

    nxt: np.ndarray  # int32
    probs: np.ndarray  # float32
    v: np.ndarray  # float32, the value they are applied to


def _fits_float32(mdp: FiniteMDP, tol: float | None = None) -> bool:
    """Whether values of scale ``R_max / (1 - gamma)`` stay far inside float32's range.

    With ``tol``, also whether the spans the solve must resolve (down to ``span_stop =
    STOP tol (1 - gamma) / gamma``) stay above float32's normal numbers: rewards near 1e-40
    (issue 47) underflowed in the float32 correction sweeps, and no certificate came.
    """
    if not mdp.r_max / (1.0 - mdp.gamma) < FLOAT32_SCALE:
        return False
    return tol is None or STOP * tol * (1.0 - mdp.gamma) / mdp.gamma > FLOAT32_TINY


def _low_precision(mdp: FiniteMDP) -> _Low | None:
    """:class:`_Low` of the model, or None if memory is short (or indices exceed int32).

    MPI's first greedy steps, until the bounds can tell actions apart, only pick the
    policy to evaluate next: on float32 copies they move 40% fewer bytes and gather from a
    vector half the size (nothing certified depends on them, and the steps that record
    MacQueen's gaps, those after them and the certificate's run in float64).
    """
    nxt, probs = mdp.successors
    if (mdp.n_states >= 2**31 or not _fits_float32(mdp)
            or not _affordable(4 * (nxt.size + probs.size + mdp.n_states))):
        return None
    return _Low(nxt.astype(np.int32), probs.astype(np.float32), np.empty(mdp.n_states,
                                                                          dtype=np.float32))


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
    n, n_actions, width = nxt.shape
    c = g / (1.0 - g)
    span_stop = STOP * tol / c  # gamma span / (2 (1 - gamma)) <= tol / 4
    v = np.zeros(n) if v0 is None else np.array(v0, dtype=np.float64)
    u, work = np.empty(n), np.empty(n)
    actions = np.full(n, -1, dtype=np.int64)
    large = n >= LARGE_STATES
    rows = _Rows(n, width, mixed=large and _fits_float32(mdp, tol))
    chooser = _Chooser()
    stats = {"greedy": 0, "sweeps": 0, "krylov": 0, "eliminated": 0}
    eliminating = n * n_actions >= ELIMINATE_MIN_PAIRS and n_actions > 1
    every = _every_action(mdp)  # views of the model's arrays
    live = every  # the rows of the actions not yet proven suboptimal
    low = _low_precision(mdp) if large and eliminating and _fits_float32(mdp, tol) else None
    low_steps = 0
    no_gaps = np.empty(0, dtype=np.float32)
    gaps = no_gaps
    last_span, last_widest = np.inf, 0.0
    bound = np.inf
    for _ in range(_MAX_GREEDY):
        delta = residual_rounding(mdp, v)
        # Gaps are recorded once the last step's bounds could have told some action apart.
        record = eliminating and c * last_span < last_widest
        if record:
            low = None  # from here on every greedy step in float64
            if gaps.shape[0] < live.R.shape[0]:
                gaps = np.empty(live.R.shape[0], dtype=np.float32)
        if low is not None:
            low.v[:] = v
            lo, hi, changed, last_widest = greedy_step(
                R, low.nxt, low.probs, g, low.v, u, actions, rows.r, rows.nxt, rows.p,
                4 * delta, no_gaps, False, True, True)
            policy_rows(R, nxt, probs, actions, rows.r, rows.nxt, rows.p)  # from float64
            low_steps += 1
            if (changed == 0 or low_steps >= LOW_STEPS
                    or not hi - lo > FLOAT32_FLOOR * np.abs(v).max(initial=0.0)):
                low = None  # nothing more to learn in float32: the next steps in float64
        elif live is every:
            lo, hi, changed, last_widest = greedy_step(
                R, nxt, probs, g, v, u, actions, rows.r, rows.nxt, rows.p, 4 * delta,
                gaps if record else no_gaps, record, eliminating, False)
        else:
            lo, hi, changed, last_widest = greedy_rows(
                *live, g, v, u, actions, rows.r, rows.nxt, rows.p, 4 * delta,
                gaps if record else no_gaps, record, large)
            if large:
                policy_rows_of(*live, actions, rows.r, rows.nxt, rows.p)
        stats["greedy"] += 1
        rows.fresh = False
        if not (np.isfinite(lo) and np.isfinite(hi)):
            break
        last_span = hi - lo
        if record:
            live = _eliminate(live, gaps, c * last_span + 4 * delta * (1 + c))
            stats["eliminated"] = n * n_actions - live.R.shape[0]
        if hi - lo <= span_stop:
            w = u + c * (lo + hi) / 2
            # The certificate's step takes every action (T w itself, not the reduced one's).
            lo, hi, changed, _ = greedy_step(R, nxt, probs, g, w, u, actions, rows.r, rows.nxt,
                                             rows.p, 0.0, no_gaps, False, False, False)
            stats["greedy"] += 1
            certified = _certificate(mdp, w, lo, hi)
            if certified <= tol:
                return u, certified, stats
            bound = min(bound, certified)
            if hi - lo <= span_stop * 1e-3:  # rounding floor: no progress is possible
                break
            v = w  # u = T w now
        fraction = FRACTION_STABLE if changed == 0 else FRACTION
        v, u = u, v
        # A stable policy evaluated to a span below span_stop passes the test at the next
        # greedy step (span(P x) <= span(x)); a quarter of it gives certificates near tol / 16
        # as before this solver's speed-ups (the same accuracy asked of the peers).
        v = chooser.evaluate(rows, g, v, work, max((hi - lo) * fraction, span_stop / 4),
                             changed == 0, stats, (u, lo, hi))
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
