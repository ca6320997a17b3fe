"""The exact solves of the batched engines, and which method each uses by the MDP's size.

Values of deterministic policies (the functional-graph solve at b = 1, certified GMRES, or an
LU), of stochastic tables (GMRES with an LU fallback), of loops of policies (GMRES through the
sparse successors, or a dense loop matrix), of CPI+'s candidate mixtures (dense), and the
systems I - gamma P_pi they need. :class:`Solvers` holds the thresholds between methods,
stated once: each was measured at the paper's sizes (n_S in {50, 100, 200}, n_A in {2, 5,
10}, b in {1, 2, 10}; docs/reproduce.md); every method is exact (certified by its residual,
with a direct fallback), so the thresholds decide speed, never results. Tests pass a
:class:`Solvers` with other thresholds to drive small MDPs through every branch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nsrl.batched.linalg import gmres, sparse
from nsrl.batched.linalg.functional import functional_values
from nsrl.model.memory import check_memory

# A nsrl.batched.linalg.state.Batch (which imports this module for its thresholds).
Batch = Any


@dataclass(frozen=True)
class Solvers:
    """The solver choices of the batched engines.

    Attributes:
    Each threshold is where one method overtakes the other; the measurements behind them are
    in docs/benchmarks.md.

    Attributes:
        gmres_min_branching: deterministic policies (API, NSPI's and PSDP's loops) are
            evaluated by certified GMRES from this branching b on (P_pi mixes fast there).
            Below it: an LU, or at b = 1 the O(n) functional-graph solve (always at b = 1).
        gmres_min_states: API(alpha)'s mixtures by GMRES on the mixture's table (at
            b >= ``gmres_min_branching``) from this many states on; an LU below.
        mixed_min_states: LU factors in single precision, refined to double precision, from
            this many states on (API(alpha), CPI(alpha)); below, call overheads dominate.
        woodbury_min_states: API by Sherman-Morrison-Woodbury updates of each run's inverse
            from this many states on (for 1 < b < ``gmres_min_branching`` and
            n_A <= ``woodbury_max_actions``).
        woodbury_max_actions: see ``woodbury_min_states`` (more actions, more changed states).
        psdp_dense_max: PSDP keeps its loop's matrix M dense up to this many states (one
            sparse product and one small LU per iteration); above, certified GMRES on the
            window.
    """

    gmres_min_branching: int = 5
    gmres_min_states: int = 150
    mixed_min_states: int = 150
    woodbury_min_states: int = 150
    woodbury_max_actions: int = 5
    psdp_dense_max: int = 100


DEFAULT = Solvers()


def policy_values(b: Batch, acts: np.ndarray, x0=None) -> np.ndarray:
    """v_pi of deterministic policies, by the cheapest exact method for the MDP.

    b = 1: the successor map's cycles (:func:`functional_values`, O(n));
    b >= ``solvers.gmres_min_branching``: certified GMRES from ``x0`` (P_pi mixes fast);
    otherwise one batched LU.
    """
    width = b.nxt.shape[2]
    if width == 1:
        c = b.mdp.R[b.states, acts]
        return functional_values(b.nxt, acts[:, None, :], c, b.gamma)
    if width >= b.solvers.gmres_min_branching:
        start = b.mdp.R[b.states, acts] if x0 is None else x0
        return loop_krylov(b, acts[:, None, :], start)
    A = systems(b, acts)
    return np.linalg.solve(A, b.mdp.R[b.states, acts][..., None])[..., 0]


def dense_batch(b: Batch, count: int, dtype=np.float64, copies: int = 1) -> np.ndarray:
    """An empty (count, n, n) array, its memory checked first (``copies`` of it coexist).

    Every (runs, n, n) array of the batched engines is allocated here, so that many runs on
    a small model are refused in one line before the allocation (issue 47: 20,000
    Generators on 200 states asked for 6 GiB).
    """
    check_dense(b, count, dtype, copies)
    return np.empty((count, b.n, b.n), dtype=dtype)


def check_dense(b: Batch, count: int, dtype=np.float64, copies: int = 1) -> None:
    """Refuse in one line if ``copies`` (count, n, n) arrays do not fit in memory now."""
    nbytes = float(copies) * count * b.n * b.n * np.dtype(dtype).itemsize
    check_memory(nbytes, f"the batched engine's {copies * count:,} dense {b.n} x {b.n} "
                 f"systems", f"pass fewer Generators per call to nsrl.run (e.g. "
                 f"{max(1, count // 4):,} at a time) or engine='reference'")


def systems(b: Batch, acts: np.ndarray, dtype=np.float64, copies: int = 1) -> np.ndarray:
    """A[r] = I - gamma P_{acts[r]} for deterministic policies (built sparsely).

    ``dtype=b.lu_dtype`` for a running system that is only factored (``refine.factor``);
    ``copies``: how many arrays of its size will coexist (2 with its LU factors).
    """
    A = dense_batch(b, len(acts), dtype, copies)
    mix(b, A, np.arange(len(acts)), acts, np.ones(len(acts)))
    return A


def mix(b: Batch, A: np.ndarray, runs: np.ndarray, acts: np.ndarray, alpha) -> None:
    """A[runs] <- (1 - alpha) A[runs] + alpha (I - gamma P_acts), in place."""
    sparse.mix_systems(A, b.nxt, b.probs, b.gamma, np.asarray(runs, dtype=np.int64),
                        acts, np.broadcast_to(np.asarray(alpha, dtype=np.float64),
                                              (len(runs),)))


def table_systems(b: Batch, T: np.ndarray) -> np.ndarray:
    """I - gamma P_T for tables T[r, s, a], dense (the direct fallbacks of the solvers)."""
    check_dense(b, len(T), copies=2)  # the einsum's result, then the difference
    return b.eye - b.gamma * np.einsum("rsa,sat->rst", T, b.mdp.P)


def table_values(b: Batch, T: np.ndarray, rhs: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """x[r] = (I - gamma P_{T[r]})^{-1} rhs[r]: certified GMRES from ``x0``.

    Runs that do not certify within the iteration budget are solved directly.
    """
    x, ok, _ = gmres.table_values(b.nxt, b.probs, b.gamma, T, rhs, x0)
    if not ok.all():
        x[~ok] = solve_tables(b, T[~ok], rhs[~ok])
    return x


def solve_tables(b: Batch, T: np.ndarray, rhs: np.ndarray, transpose: bool = False) -> np.ndarray:
    """x[r] = (I - gamma P_{T[r]})^{-1} rhs[r] (or the transposed system), by dense LU.

    The direct fallback of the iterative solvers.
    """
    A = table_systems(b, T)
    A = np.swapaxes(A, 1, 2) if transpose else A
    return np.linalg.solve(A, rhs[..., None])[..., 0]


def evaluate_mixtures(b: Batch, Asys, runs, rpi, acts, owner, steps) -> np.ndarray:
    """Values of the mixtures (1 - steps[c]) pi_{owner[c]} + steps[c] pi'_{owner[c]}.

    ``Asys`` holds every run's I - gamma P_pi; ``runs[o]`` is the run of owner o (rpi
    and acts are indexed by owner).
    """
    A = dense_batch(b, owner.size)
    rhs = np.empty((owner.size, b.n))
    sparse.mixed_systems(b.mdp.P, b.mdp.R, b.gamma, Asys, runs[owner], rpi, acts,
                          owner, steps, A, rhs)
    return np.linalg.solve(A, rhs[..., None])[..., 0]


def propagate(b: Batch, acts: np.ndarray, M: np.ndarray, out: np.ndarray) -> np.ndarray:
    """out = gamma P_pi M for deterministic policies (compiled, sparse successors)."""
    sparse.propagate(b.nxt, b.probs, b.gamma, acts, M, out)
    return out


def loop_value(b: Batch, window: np.ndarray) -> np.ndarray:
    """Value of the loops (window[r, 0], ..., window[r, m-1])^inf (window[r, 0] first).

    As nsrl.exact: c = T_{pi_1}...T_{pi_m} 0, M = gamma^m P_{pi_1}...P_{pi_m}, then
    v = (I - M)^{-1} c.
    """
    n_runs, m, n = window.shape
    c = np.zeros((n_runs, n))
    M = dense_batch(b, n_runs, copies=2)
    M[:] = b.eye
    buf = np.empty_like(M)
    for i in range(m - 1, -1, -1):
        c = b.apply(window[:, i], c)
        propagate(b, window[:, i], M, buf)
        M, buf = buf, M
    return solve_loop(b, M, c)


def loop_krylov(b: Batch, window: np.ndarray, x0: np.ndarray, c=None) -> np.ndarray:
    """:func:`loop_value` by certified GMRES from ``x0`` (:mod:`nsrl.batched.linalg.gmres`).

    No dense matrix is formed: (I - M) x costs m sparse products. Without ``c`` (the
    loop's T_{pi_1}...T_{pi_m} 0) the loop's fixed point is solved for directly
    (:func:`gmres.loop_fixed_points`: c is never formed). Runs whose solve does not
    certify are solved directly. On b = 1 MDPs the loop is a map: solved exactly by
    :func:`functional_values` instead.
    """
    window = np.ascontiguousarray(window)
    if b.nxt.shape[2] == 1:  # b = 1: the loop is a map, solved exactly in O(m n)
        if c is None:
            c = sparse.loop_rhs(b.nxt, b.probs, b.mdp.R, b.gamma, window)
        return functional_values(b.nxt, window, c, b.gamma ** window.shape[1])
    if c is None:
        x, ok, _ = gmres.loop_fixed_points(b.nxt, b.probs, b.R, b.gamma,
                                            window, x0)
    else:
        x, ok, _ = gmres.loop_values(b.nxt, b.probs, window,
                                      b.gamma ** window.shape[1], c, x0)
    if not ok.all():
        x[~ok] = loop_value(b, window[~ok])
    return x


def solve_loop(b: Batch, M: np.ndarray, c: np.ndarray) -> np.ndarray:
    """v = (I - M)^{-1} c for every run."""
    return np.linalg.solve(b.eye - M, c[..., None])[..., 0]
