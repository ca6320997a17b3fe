"""Batched CPI, CPI(alpha) and CPI+ (nsrl.schemes.cpi): conservative steps under d_{pi_k,nu}.

Every run keeps its mixture's table T, r_pi and system A = I - gamma P_pi, updated in place,
sparsely. CPI and CPI(alpha) factor A once per step: the LU gives v_pi now and d_{pi,nu} at the
next iteration. CPI+'s line search scores all its candidate steps on one small Krylov subspace
built with a stale single-precision inverse, with certified error bounds; only candidates the
bounds cannot rank are refined (:mod:`nsrl.batched.linalg.linesearch`). The step, stopping
test, candidates and choice are :mod:`nsrl.schemes.rules`.
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.api import start_actions
from nsrl.batched.linalg import gmres, refine, solvers
from nsrl.batched.linalg.linesearch import (
    VALUE_TOL,
    StaleInverse,
    System,
    choose,
    polish,
    subspace_values,
)
from nsrl.batched.linalg.state import Batch
from nsrl.batched.registry import register
from nsrl.greedy.base import policy_advantage
from nsrl.schemes import CPI, CPIAlpha, CPIPlus, rules


@register(CPI, CPIAlpha, CPIPlus)
def cpi(b: Batch, scheme, U, out) -> None:
    """CPI, CPI(alpha), CPI+ (nsrl.schemes.cpi): conservative steps under d_{pi_k,nu}.

    Every run keeps its table T, r_pi and system A = I - gamma P_pi (updated in place,
    sparsely). CPI and CPI(alpha) factor A once per step: the LU gives v_pi now and
    d_{pi,nu} at the next iteration. CPI+ keeps stale inverses (linesearch.StaleInverse).
    """
    n_runs = U.shape[0]
    pi0 = start_actions(b, n_runs)
    T = np.eye(b.mdp.n_actions)[pi0]
    plus = scheme.line_search is not None  # CPI+: candidates scored on a shared subspace
    # CPI+'s direct fallbacks read A in double precision; CPI(alpha) only factors it
    A = solvers.systems(b, pi0, np.float64 if plus else b.lu_dtype, copies=2)
    rpi = b.mdp.R[b.states, pi0]
    inv = StaleInverse(b, A) if plus else None
    lus = [] if plus else refine.factor(b, A)  # CPI and CPI(alpha): the LU of each run
    v = np.linalg.solve(A, rpi[..., None])[..., 0] if plus else \
        refine.solve_factored(b, lus, T, rpi)
    memory, losses = np.full(n_runs, rules.start_memory(scheme), dtype=np.int64), b.loss(v)
    active = np.arange(n_runs)  # CPI and CPI+ stop for good once their rule fires
    d = np.zeros((n_runs, b.n))  # every run's last occupancy: CPI's refinement starts there
    out["step"][:] = 0.0
    for k in range(U.shape[1]):
        if active.size:
            T_active = T[active]
            if inv is not None:  # CPI+
                inv.refresh(active, A)
                d[active] = inv.occupancy(active, T_active)
            else:
                d[active] = refine.occupancy_factored(b, [lus[r] for r in active], T_active,
                                                 d[active] if k else None)
            alpha, acts, v_new = cpi_step(b, scheme, T_active, A, rpi[active], v[active],
                                          U, k, d[active], inv, active)
            out["step"][active, k] = alpha
            moved = alpha > 0
            active, a, acts = active[moved], alpha[moved], acts[moved]  # stopped runs leave
            if active.size:
                _fold_in(b, T, rpi, A, active, acts, a)
                memory[active] = rules.memory_after(scheme, memory[active], a)
                if inv is not None:  # CPI+
                    inv.drift[active] += a
                    v[active] = v_new[moved]
                else:
                    new = refine.factor(b, A, active)
                    for r, lu in zip(active, new, strict=True):
                        lus[r] = lu
                    v[active] = refine.solve_factored(b, new, T[active], rpi[active], x0=v[active])
                losses[active] = b.loss(v[active])
        out["loss"][:, k], out["memory"][:, k] = losses, memory


def _fold_in(b: Batch, T, rpi, A, runs, acts, a) -> None:
    """(1 - a) pi + a pi' for ``runs``, in place: tables, rewards and systems (rules.mix)."""
    T[runs] = rules.mix(T[runs], np.eye(T.shape[2])[acts], a)
    rpi[runs] = rules.mix(rpi[runs], b.mdp.R[b.states, acts], a)
    solvers.mix(b, A, runs, acts, a)


def cpi_step(b: Batch, scheme, T, A, rpi, v, noise, k, d, inv, runs):
    """One greedy call under d_{pi,nu} for the active runs; returns (alpha, acts, v_new).

    alpha is 0 where CPI's stopping rule fires; v_new is the chosen candidates' values for
    CPI+ (None otherwise: the caller solves).
    """
    q = b.q(b.project(b.perturb(v, noise[runs, k]), d))
    acts = np.argmax(q, axis=2)

    def advantage():  # the projected operator's estimate, or the model's (CPI.step_of)
        return rules.read_advantage(scheme, policy_advantage(d, q, T, acts),
                                    lambda: policy_advantage(d, b.q(v), T, acts))

    alpha = np.broadcast_to(rules.step_size(scheme, advantage, b.gamma, b.mdp.r_max), len(T))
    alpha = np.array(alpha, dtype=np.float64)
    if scheme.line_search is None:
        return alpha, acts, None
    if scheme.line_search == "best" and b.value_estimate == "exact":
        return _line_search(b, inv, runs, T, A, rpi, v, acts, alpha)
    return _line_search_accurate(b, scheme.line_search, noise, inv, runs, T, A, rpi, v, acts,
                                 alpha)


def _exclude(b: Batch, T, rpi, acts, owner, steps, values, score, err, best, uncertain):
    """Try to certify that uncertain candidates lose, by GMRES to just the accuracy needed.

    Candidate c loses to its run's best i if nu x_c + ||res_c|| / (1 - gamma) is below
    score_i - err_i; GMRES on the mixture's sparse table runs until its residual is half
    that gap (from the subspace value). Returns the candidates still uncertain.
    """
    of = np.full(owner.max() + 1, -1)
    of[owner[best]] = best
    lo = score - err
    gap = lo[of[owner]] - score
    is_best = np.zeros(owner.size, dtype=bool)
    is_best[best] = True
    todo = np.flatnonzero(uncertain & (gap > 0) & ~is_best)
    if not todo.size:
        return uncertain
    o = owner[todo]
    tables = rules.mix(T[o], np.eye(T.shape[2])[acts[o]], steps[todo])
    rhs = rules.mix(rpi[o], b.mdp.R[b.states, acts[o]], steps[todo])
    atol = 0.5 * (1.0 - b.gamma) * gap[todo]
    x, ok, _ = gmres.table_values(b.nxt, b.probs, b.gamma, tables, rhs, values[todo],
                                   atol=atol)
    lost = ok & (x @ b.mdp.start + atol / (1.0 - b.gamma) < lo[of[o]])
    uncertain = uncertain.copy()
    uncertain[todo[lost]] = False
    # a run whose only uncertain candidate left is its best is settled
    left = np.bincount(owner[uncertain], minlength=owner.max() + 1)
    uncertain &= left[owner] > 1
    return uncertain


def _line_search(b: Batch, inv, runs, T, A, rpi, v, acts, alpha):
    """CPI+: among min(2^i alpha, 1), the step with the best nu v (first best on ties).

    Candidates are scored on a shared subspace with certified error bounds
    (:mod:`nsrl.batched.linalg.linesearch`); those the bounds cannot rank, and a chosen value
    not certified to VALUE_TOL, are solved directly.
    """
    owner, steps = rules.line_search_steps(alpha)
    v_new = np.zeros((len(v), b.n))
    if not owner.size:
        return alpha, acts, v_new
    values, err = subspace_values(b, inv.B[runs], System(b, T), rpi, v, acts, owner, steps)
    score = values @ b.mdp.start

    def solve_directly(which):
        values[which] = solvers.evaluate_mixtures(b, A, runs, rpi, acts, owner[which], steps[which])
        err[which], score[which] = 0.0, values[which] @ b.mdp.start

    while True:  # a provisional best must be accurate before it can rank the others
        best, _ = choose(owner, score, err)
        loose = best[err[best] > VALUE_TOL]
        if not loose.size:
            break
        o = owner[loose]
        x = values[loose]
        err[loose] = polish(b, inv.B[runs[o]], T[o], rpi[o], acts[o], steps[loose], x)
        values[loose], score[loose] = x, x @ b.mdp.start
        still = loose[err[loose] > VALUE_TOL]
        if still.size:
            solve_directly(still)
    best, uncertain = choose(owner, score, err)
    if uncertain.any():
        uncertain = _exclude(b, T, rpi, acts, owner, steps, values, score, err, best, uncertain)
    if uncertain.any():  # rank these by direct solves
        solve_directly(uncertain & (err > 0))
        best, _ = choose(owner, score, err)
    v_new[owner[best]] = values[best]
    alpha[owner[best]] = steps[best]
    return alpha, acts, v_new


def _line_search_accurate(b: Batch, rule, noise, inv, runs, T, A, rpi, v, acts, alpha):
    """CPI+ under the other readings: every candidate's value to VALUE_TOL, then the rule.

    Used for the line-search rules other than "best" and for scores estimated by the noisy
    projection (ProjectedGreedy(value="estimated")), whose extra noise draws follow the
    reference's order: each run's candidates by increasing step, then its current policy
    (rule "largest-improving").
    """
    owner, steps = rules.line_search_steps(alpha)
    v_new = np.zeros((len(v), b.n))
    if not owner.size:
        return alpha, acts, v_new
    values, err = subspace_values(b, inv.B[runs], System(b, T), rpi, v, acts, owner, steps)
    loose = np.flatnonzero(err > VALUE_TOL)
    if loose.size:
        o, x = owner[loose], values[loose]
        err[loose] = polish(b, inv.B[runs[o]], T[o], rpi[o], acts[o], steps[loose], x)
        values[loose] = x
        still = loose[err[loose] > VALUE_TOL]
        if still.size:
            values[still] = solvers.evaluate_mixtures(b, A, runs, rpi, acts, owner[still],
                                                      steps[still])

    def scores(x, who):
        if b.value_estimate == "exact":
            return x @ b.mdp.start
        return b.project_nu(b.perturb(x, noise.extra(runs[who]))) @ b.mdp.start

    score = scores(values, owner)
    baseline = None
    if rule == "largest-improving":
        with_candidates = np.unique(owner)
        base = np.zeros(len(v))
        base[with_candidates] = scores(v[with_candidates], with_candidates)
        baseline = base[owner]
    chosen = rules.choose_steps(owner, score, rule, baseline)
    v_new[owner[chosen]] = values[chosen]
    alpha[owner[chosen]] = steps[chosen]
    return alpha, acts, v_new
