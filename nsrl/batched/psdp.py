"""Batched PSDP_inf (nsrl.schemes.psdp): incremental v_sigma and c, the loop (sigma_k)^inf."""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg import solvers
from nsrl.batched.linalg.state import Batch
from nsrl.batched.registry import register
from nsrl.schemes import PSDP, rules


@register(PSDP)
def psdp(b: Batch, scheme, U, out) -> None:
    """PSDP_inf with incremental v_sigma and c; the loop (sigma_k)^inf solves v = c + M v.

    Small MDPs (n_S <= ``b.solvers.psdp_dense_max``) keep M_{k+1} = gamma P_{pi_{k+1}} M_k
    dense (one sparse product and one small LU per iteration); larger ones never form M:
    certified GMRES on the window of k policies (solvers.loop_krylov), warm-started.
    """
    n_runs, n_iterations = U.shape[:2]
    v_sigma = np.broadcast_to(b.mdp.terminal_value, (n_runs, b.n)).copy()
    c = np.zeros((n_runs, b.n))
    dense = b.n <= b.solvers.psdp_dense_max and b.nxt.shape[2] > 1
    if dense:
        M = solvers.dense_batch(b, n_runs, copies=2)
        M[:] = b.eye
        buf = np.empty_like(M)
    else:
        sigma = np.zeros((n_runs, n_iterations, b.n), dtype=np.int64)  # newest first
    v, memory = None, rules.start_memory(scheme)
    for k in range(n_iterations):
        acts = b.greedy_nu(v_sigma, U[:, k])
        v_sigma, c = b.apply(acts, v_sigma), b.apply(acts, c)
        if dense:
            solvers.propagate(b, acts, M, buf)
            M, buf = buf, M
            v = solvers.solve_loop(b, M, c)
        else:
            sigma[:, n_iterations - 1 - k] = acts
            window = sigma[:, n_iterations - 1 - k:]
            # warm start: pi_{k+1} then the old loop differs from the new loop after k+1 steps
            v = solvers.loop_krylov(b, window, c if v is None else b.apply(acts, v), c)
        memory = rules.memory_after(scheme, memory)
        out["loss"][:, k], out["memory"][:, k] = b.loss(v), memory
