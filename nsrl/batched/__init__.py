"""The sweep's fast path: every scheme of section 2, R runs on one MDP at once, exactly.

``simulate(mdp, scheme, rngs, n_iterations)`` gives the same losses as running
``nsrl.run(make_scheme(scheme), ProjectedGreedy(mdp, noise), n_iterations, rng=rng)`` for each
Generator of ``rngs`` (tested to 1e-8): each run draws its noise in the reference order (one
uniform vector per greedy call), takes the same greedy actions and records the loss of the
same output. What differs is how the values are obtained:

* the R runs that share an MDP are batched, Pi_{Phi,nu} is precomputed once per MDP, and
  Q-values / T_pi v are compiled loops over the sparse successors (b per state);
* no value needs a dense LU per iteration except the two schemes whose policy changes in
  every state at every step (API(alpha), CPI(alpha)): they keep their system
  I - gamma P_pi as a running sum updated sparsely in place and pay one LU per iteration
  (single precision refined to double from n_S = 150; CPI(alpha)'s LU also gives d_{pi,nu}),
  except API(alpha) at b = 10, n_S = 200: certified GMRES on the mixture's table, warm-started;
* API: b = 1, an O(n) functional-graph solve (krylov.functional_values); b = 2..4 at
  n_S >= 150, Sherman-Morrison-Woodbury updates of each run's inverse (the greedy policy
  changes in ~n/8 states, :mod:`nsrl.batched.linalg.woodbury`); b >= 5, certified GMRES;
* NSPI(m) and PSDP (loops over m or k policies): certified GMRES whose products go through
  the window's sparse successors, warm-started at T_new v_old (:mod:`nsrl.batched.linalg.krylov`);
  b = 1, the loop's composed map solved exactly; PSDP at n_S <= 100, a dense running product;
* CPI+'s line search scores all its candidate steps on one small Krylov subspace built with
  a stale single-precision inverse, with certified error bounds; only candidates the bounds
  cannot rank are refined (GMRES to the accuracy needed, then direct solves, rare)
  (:mod:`nsrl.batched.linalg.linesearch`).

Every iterative result is certified by its double-precision residual, and falls back to a
direct solve when it does not certify: the fast path stays equal to the reference (tests:
1e-8 on the losses, 4e-11 measured at n_S = 150-200).

The CPI family's d_{pi,nu}-weighted projections are batched normal-equation solves; noise
is drawn per run up front (one Generator call of shape (K, n_S) gives the same numbers as K
calls of n_S).
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg import krylov, woodbury
from nsrl.batched.linalg.batch import GMRES_MIN_BRANCHING, GMRES_MIN_STATES, Batch
from nsrl.batched.linalg.linesearch import (
    VALUE_TOL,
    StaleInverse,
    System,
    candidates,
    choose,
    polish,
    subspace_values,
)
from nsrl.batched.linalg.woodbury import PolicyInverse
from nsrl.schemes import API, CPI, NSPI, PSDP, APIAlpha, CPIAlpha, CPIPlus, make_scheme

# PSDP keeps its loop's matrix dense up to this many states (measured: a propagation and a
# small LU beat GMRES over a window of up to 100 policies there).
PSDP_DENSE_MAX = 100


def simulate(mdp, scheme, rngs, n_iterations: int = 100, noise: float = 0.1,
             relative: bool = True) -> dict[str, np.ndarray]:
    """Run ``scheme`` once per Generator of ``rngs`` on ``mdp`` with the paper's operator.

    Args:
        mdp: a FiniteMDP with features (e.g. from :func:`nsrl.garnet`).
        scheme: a scheme name (``"nspi(5)"``) or object of :mod:`nsrl.schemes`.
        rngs: one numpy Generator per run (drives that run's noise).
        n_iterations: iterations K per run.
        noise: the operator's noise amplitude iota.
        relative: relative noise (ProjectedGreedy's ``relative``).

    Returns:
        ``{"loss": (R, K) float, "memory": (R, K) int, "step": (R, K) float}``, row r
        being run r, as ``History.losses/memory/steps`` of the reference path.

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> out = simulate(mdp, "api", [np.random.default_rng(i) for i in range(3)], 5)
        >>> out["loss"].shape
        (3, 5)
    """
    scheme = make_scheme(scheme) if isinstance(scheme, str) else scheme
    if not isinstance(n_iterations, (int, np.integer)) or n_iterations < 1:
        raise ValueError(f"n_iterations should be a positive int, got {n_iterations!r}.")
    batch = Batch(mdp, noise, relative)
    U = batch.draws(list(rngs), int(n_iterations))
    shape = U.shape[:2]
    out = {"loss": np.full(shape, np.nan), "memory": np.zeros(shape, dtype=np.int64),
           "step": np.full(shape, np.nan)}
    if isinstance(scheme, (CPIAlpha, CPIPlus, CPI)):
        _cpi(batch, scheme, U, out)
    elif isinstance(scheme, APIAlpha):
        _api_alpha(batch, scheme.alpha, U, out)
    elif isinstance(scheme, API):
        _api(batch, U, out)
    elif isinstance(scheme, PSDP):
        _psdp(batch, U, out)
    elif isinstance(scheme, NSPI):
        _nspi(batch, scheme.m, U, out)
    else:
        raise TypeError(f"the fast path knows the paper's schemes, got {type(scheme).__name__}.")
    return out


def _api(b: Batch, U, out) -> None:
    """API: pi_{k+1} = G(nu, v_{pi_k}); one evaluation per iteration.

    b = 2..4, n_S >= 150, n_A <= 5: low-rank updates of each run's inverse
    (:mod:`nsrl.batched.linalg.woodbury`: the greedy policy changes in ~n_S / 8 states per
    iteration; measured faster than an LU there only); otherwise Batch.policy_values.
    """
    acts = np.zeros(U.shape[::2], dtype=np.int64)
    width = b.nxt.shape[2]
    low_rank = (1 < width < GMRES_MIN_BRANCHING and b.n >= woodbury.MIN_STATES
                and b.mdp.n_actions <= 5)
    inverse = PolicyInverse(b, acts) if low_rank else None
    v = inverse.values(acts) if inverse else b.policy_values(acts)
    for k in range(U.shape[1]):
        acts = b.greedy_nu(v, U[:, k])
        v = inverse.values(acts) if inverse else b.policy_values(acts, v)
        out["loss"][:, k], out["memory"][:, k] = b.loss(v), 1


def _api_alpha(b: Batch, alpha: float, U, out) -> None:
    """API(alpha): the mixture's table T and r_pi kept as running sums.

    Each value: certified GMRES on the table from the previous value where that beats an LU
    (b >= GMRES_MIN_BRANCHING, n_S >= GMRES_MIN_STATES); otherwise the system I - gamma P_pi
    is kept as a running sum too, and factored: one single-precision LU, refined to double
    precision (Batch.solve_factored).
    """
    if alpha == 1.0:  # Mixture.step returns the new policy itself
        return _api(b, U, out)
    n_runs = U.shape[0]
    everyone = np.arange(n_runs)
    zeros = np.zeros((n_runs, b.n), dtype=np.int64)
    onehot = np.eye(b.mdp.n_actions)
    T, rpi = onehot[zeros], b.mdp.R[b.states, zeros]
    v = b.policy_values(zeros)  # pi_0 is deterministic
    iterative = b.nxt.shape[2] >= GMRES_MIN_BRANCHING and b.n >= GMRES_MIN_STATES
    A = None if iterative else b.systems(zeros, b.lu_dtype)  # only ever factored
    for k in range(U.shape[1]):
        acts = b.greedy_nu(v, U[:, k])
        T = (1 - alpha) * T + alpha * onehot[acts]
        rpi = (1 - alpha) * rpi + alpha * b.mdp.R[b.states, acts]
        if iterative:
            v = b.table_values(T, rpi, v)
        else:
            b.mix(A, everyone, acts, alpha)
            v = b.solve_factored(b.factor(A), T, rpi, x0=v)
        out["loss"][:, k], out["memory"][:, k], out["step"][:, k] = b.loss(v), k + 2, alpha


def _psdp(b: Batch, U, out) -> None:
    """PSDP_inf with incremental v_sigma and c; the loop (sigma_k)^inf solves v = c + M v.

    Small MDPs (n_S <= PSDP_DENSE_MAX) keep M_{k+1} = gamma P_{pi_{k+1}} M_k dense (one
    sparse product and one small LU per iteration); larger ones never form M: certified
    GMRES on the window of k policies (Batch.loop_krylov), warm-started.
    """
    n_runs, n_iterations = U.shape[:2]
    v_sigma = np.broadcast_to(b.mdp.terminal_value, (n_runs, b.n)).copy()
    c = np.zeros((n_runs, b.n))
    dense = b.n <= PSDP_DENSE_MAX and b.nxt.shape[2] > 1
    if dense:
        M = np.broadcast_to(b.eye, (n_runs, b.n, b.n)).copy()
        buf = np.empty_like(M)
    else:
        sigma = np.zeros((n_runs, n_iterations, b.n), dtype=np.int64)  # newest first
    v = None
    for k in range(n_iterations):
        acts = b.greedy_nu(v_sigma, U[:, k])
        v_sigma, c = b.apply(acts, v_sigma), b.apply(acts, c)
        if dense:
            b.propagate(acts, M, buf)
            M, buf = buf, M
            v = b.solve_loop(M, c)
        else:
            sigma[:, n_iterations - 1 - k] = acts
            window = sigma[:, n_iterations - 1 - k:]
            # warm start: pi_{k+1} then the old loop differs from the new loop after k+1 steps
            v = b.loop_krylov(window, c if v is None else b.apply(acts, v), c)
        out["loss"][:, k], out["memory"][:, k] = b.loss(v), k + 1


def _nspi(b: Batch, m: int, U, out) -> None:
    """NSPI(m): window[r, 0] is the newest policy, which acts first.

    The loop's value comes from certified GMRES warm-started at the previous value
    (:meth:`Batch.loop_krylov`): m sparse products per Krylov step, no dense matrix.
    """
    if m == 1:  # NSPI(1) is API (section 2)
        return _api(b, U, out)
    window = np.zeros((U.shape[0], m, b.n), dtype=np.int64)
    v = b.policy_values(window[:, 0])  # the loop of pi_0 m times has pi_0's value
    for k in range(U.shape[1]):
        acts = b.greedy_nu(v, U[:, k])
        window = np.concatenate([acts[:, None], window[:, :-1]], axis=1)
        v = b.loop_krylov(window, b.apply(acts, v))  # the new policy, then the old loop
        out["loss"][:, k], out["memory"][:, k] = b.loss(v), m


def _cpi(b: Batch, scheme, U, out) -> None:
    """CPI, CPI(alpha), CPI+ (nsrl.schemes.cpi): conservative steps under d_{pi_k,nu}.

    Every run keeps its table T, r_pi and system A = I - gamma P_pi (updated in place,
    sparsely). CPI and CPI(alpha) factor A once per step: the LU gives v_pi now and
    d_{pi,nu} at the next iteration. CPI+ keeps stale inverses (linesearch.StaleInverse).
    """
    n_runs = U.shape[0]
    zeros = np.zeros((n_runs, b.n), dtype=np.int64)
    T = np.eye(b.mdp.n_actions)[zeros]
    plus = isinstance(scheme, CPIPlus)
    # CPI+'s direct fallbacks read A in double precision; CPI(alpha) only factors it
    A, rpi = b.systems(zeros, np.float64 if plus else b.lu_dtype), b.mdp.R[b.states, zeros]
    inv = StaleInverse(b, A) if plus else None
    lus = None if plus else b.factor(A)
    v = np.linalg.solve(A, rpi[..., None])[..., 0] if plus else b.solve_factored(lus, T, rpi)
    memory, losses = np.ones(n_runs, dtype=np.int64), b.loss(v)
    active = np.arange(n_runs)  # CPI and CPI+ stop for good once their rule fires
    d = np.zeros((n_runs, b.n))  # every run's last occupancy: CPI's refinement starts there
    out["step"][:] = 0.0
    for k in range(U.shape[1]):
        if active.size:
            T_active = T[active]
            if plus:
                inv.refresh(active, A)
                d[active] = inv.occupancy(active, T_active)
            else:
                d[active] = b.occupancy_factored([lus[r] for r in active], T_active,
                                                 d[active] if k else None)
            alpha, acts, v_new = _cpi_step(b, scheme, T_active, A, rpi[active], v[active],
                                           U[active, k], d[active], inv, active)
            out["step"][active, k] = alpha
            moved = alpha > 0
            idx, a, acts = active[moved], alpha[moved], acts[moved]
            onehot = np.eye(T.shape[2])[acts]
            T[idx] = np.where((a == 1.0)[:, None, None], onehot,
                              (1 - a)[:, None, None] * T[idx] + a[:, None, None] * onehot)
            rn = b.mdp.R[b.states, acts]
            rpi[idx] = np.where((a == 1.0)[:, None], rn, (1 - a)[:, None] * rpi[idx]
                                + a[:, None] * rn)
            b.mix(A, idx, acts, a)
            memory[idx] = np.where(a == 1.0, 1, memory[idx] + 1)
            if plus:
                inv.drift[idx] += a
                v[idx] = v_new[moved]
            else:
                new = b.factor(A, idx)
                for r, lu in zip(idx, new, strict=True):
                    lus[r] = lu
                v[idx] = b.solve_factored(new, T[idx], rpi[idx], x0=v[idx])
            losses[idx] = b.loss(v[idx])
            active = idx
        out["loss"][:, k], out["memory"][:, k] = losses, memory


def _cpi_step(b: Batch, scheme, T, A, rpi, v, U, d, inv, runs):
    """One greedy call under d_{pi,nu} for the active runs; returns (alpha, acts, v_new).

    alpha is 0 where CPI's stopping rule fires; v_new is the chosen candidates' values for
    CPI+ (None otherwise: the caller solves).
    """
    q = b.q(b.project(b.perturb(v, U), d))
    acts = np.argmax(q, axis=2)
    if isinstance(scheme, CPIAlpha):
        return np.full(len(T), scheme.alpha), acts, None
    # Kakade & Langford's step in normalised units (nsrl.schemes.cpi.CPI.kakade_step).
    advantage = (d * (q.max(axis=2) - (T * q).sum(axis=2))).sum(axis=1)
    r_max = scheme.r_max or b.mdp.r_max or 1.0
    eps = scheme.epsilon or 1e-3 * r_max
    a_norm = (1.0 - b.gamma) * advantage
    alpha = np.where(a_norm >= 2.0 * eps / 3.0,
                     np.minimum(1.0, (1.0 - b.gamma) * (a_norm - eps / 3.0) / (4.0 * r_max)), 0.0)
    if not isinstance(scheme, CPIPlus):
        return alpha, acts, None
    return _line_search(b, inv, runs, T, A, rpi, v, acts, alpha)


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
    o, a = owner[todo], steps[todo][:, None, None]
    tables = (1.0 - a) * T[o] + a * np.eye(T.shape[2])[acts[o]]
    rhs = (1.0 - a[:, 0]) * rpi[o] + a[:, 0] * b.mdp.R[b.states, acts[o]]
    atol = 0.5 * (1.0 - b.gamma) * gap[todo]
    x, ok, _ = krylov.table_values(b.nxt, b.probs, b.gamma, tables, rhs, values[todo],
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
    owner, steps = candidates(alpha)
    v_new = np.zeros((len(v), b.n))
    if not owner.size:
        return alpha, acts, v_new
    values, err = subspace_values(b, inv.B[runs], System(b, T), rpi, v, acts, owner, steps)
    score = values @ b.mdp.start

    def solve_directly(which):
        values[which] = b.evaluate_mixtures(A, runs, rpi, acts, owner[which], steps[which])
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
