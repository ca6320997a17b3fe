"""Batched API and API(alpha) (nsrl.schemes.api): R runs on one MDP at once, exactly.

API evaluates one deterministic policy per iteration: b = 1, the O(n) functional-graph
solve; 1 < b < ``gmres_min_branching`` on large MDPs, Sherman-Morrison-Woodbury updates of
each run's inverse (:mod:`nsrl.batched.linalg.woodbury`); b >= ``gmres_min_branching``,
certified GMRES; otherwise an LU. API(alpha) keeps its mixture's table and r_pi as running
sums: GMRES on the table where that beats an LU, else a running system factored once per
iteration (single precision refined to double on large MDPs).
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg import refine, solvers
from nsrl.batched.linalg.state import Batch
from nsrl.batched.linalg.woodbury import PolicyInverse
from nsrl.batched.registry import register
from nsrl.schemes import API, APIAlpha, rules


def start_actions(b: Batch, n_runs: int) -> np.ndarray:
    """pi_0 of every run as an action table (rules.START_ACTION everywhere)."""
    return np.full((n_runs, b.n), rules.START_ACTION, dtype=np.int64)


@register(API)
def api(b: Batch, scheme, U, out) -> None:
    """API: pi_{k+1} = G(nu, v_{pi_k}); one evaluation per iteration.

    Low-rank updates of each run's inverse where ``b.solvers`` says they pay
    (:mod:`nsrl.batched.linalg.woodbury`: the greedy policy changes in ~n_S / 8 states per
    iteration); otherwise solvers.policy_values.
    """
    acts = start_actions(b, U.shape[0])
    memory: int | np.ndarray  # one count (API), or one per run
    memory, alpha = rules.start_memory(scheme), rules.step_size(scheme, None, b.gamma, None)
    width, limits = b.nxt.shape[2], b.solvers
    low_rank = (1 < width < limits.gmres_min_branching and b.n >= limits.woodbury_min_states
                and b.mdp.n_actions <= limits.woodbury_max_actions)
    inverse = PolicyInverse(b, acts) if low_rank else None
    v = inverse.values(acts) if inverse else solvers.policy_values(b, acts)
    for k in range(U.shape[1]):
        acts = b.greedy_nu(v, U[:, k])
        v = inverse.values(acts) if inverse else solvers.policy_values(b, acts, v)
        memory = rules.memory_after(scheme, memory, alpha)
        out["loss"][:, k], out["memory"][:, k] = b.loss(v), memory


@register(APIAlpha)
def api_alpha(b: Batch, scheme, U, out) -> None:
    """API(alpha): the mixture's table T and r_pi kept as running sums.

    Each value: certified GMRES on the table from the previous value where that beats an LU
    (``b.solvers``: gmres_min_branching, gmres_min_states); otherwise the system I - gamma P_pi
    is kept as a running sum too, and factored: one single-precision LU, refined to double
    precision (refine.solve_factored).
    """
    alpha = rules.step_size(scheme, None, b.gamma, None)
    if rules.replaces(alpha):  # a full step is the greedy policy itself: API, step 1 recorded
        api(b, scheme, U, out)
        out["step"][:] = alpha
        return None
    n_runs = U.shape[0]
    everyone = np.arange(n_runs)
    pi0 = start_actions(b, n_runs)
    onehot = np.eye(b.mdp.n_actions)
    T, rpi = onehot[pi0], b.mdp.R[b.states, pi0]
    v = solvers.policy_values(b, pi0)  # pi_0 is deterministic
    memory = np.full(n_runs, rules.start_memory(scheme), dtype=np.int64)
    iterative = (b.nxt.shape[2] >= b.solvers.gmres_min_branching
                 and b.n >= b.solvers.gmres_min_states)
    A = None if iterative else solvers.systems(b, pi0, b.lu_dtype, copies=2)  # only ever factored
    for k in range(U.shape[1]):
        acts = b.greedy_nu(v, U[:, k])
        T = rules.mix(T, onehot[acts], alpha)
        rpi = rules.mix(rpi, b.mdp.R[b.states, acts], alpha)
        if A is None:  # iterative
            v = solvers.table_values(b, T, rpi, v)
        else:
            solvers.mix(b, A, everyone, acts, alpha)
            v = refine.solve_factored(b, refine.factor(b, A), T, rpi, x0=v)
        memory = rules.memory_after(scheme, memory, np.full(n_runs, alpha))
        out["loss"][:, k], out["memory"][:, k], out["step"][:, k] = b.loss(v), memory, alpha
