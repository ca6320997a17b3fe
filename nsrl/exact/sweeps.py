"""Compiled kernels of modified policy iteration on the successor lists (numba).

``greedy_step`` is one Bellman step ``u = T v`` with its greedy actions (ties to the lowest
index, as :func:`nsrl.exact.operators.greedy_actions`) and the range of ``u - v``;
``policy_sweeps`` applies ``T_pi`` in place (Gauss-Seidel) or out of place (Jacobi) until the
span of the last change falls below a target. Neither certifies anything: the caller
recomputes a Bellman residual (:mod:`nsrl.exact.mpi`).
"""

from __future__ import annotations

import numpy as np

from nsrl.model.kernels import HAVE_NUMBA

if HAVE_NUMBA:
    import numba

    @numba.njit(cache=True, nogil=True)
    def greedy_step(R: np.ndarray, nxt: np.ndarray, probs: np.ndarray, gamma: float,
                    v: np.ndarray, u: np.ndarray, actions: np.ndarray, r_pi: np.ndarray,
                    nxt_pi: np.ndarray, p_pi: np.ndarray
                    ) -> tuple[float, float, int]:  # pragma: no cover - compiled
        """u = T v and its greedy actions; returns (min(u - v), max(u - v), actions changed).

        The greedy policy's rows (r_pi, nxt_pi, p_pi) are copied contiguous for the sweeps.
        """
        n_states, n_actions, width = nxt.shape
        lo, hi = np.inf, -np.inf
        changed = 0
        for s in range(n_states):
            best, arg = -np.inf, 0
            for a in range(n_actions):
                acc = 0.0
                for j in range(width):
                    acc += probs[s, a, j] * v[nxt[s, a, j]]
                q = R[s, a] + gamma * acc
                if q > best:
                    best, arg = q, a
            u[s] = best
            if arg != actions[s]:
                changed += 1
                actions[s] = arg
            r_pi[s] = R[s, arg]
            for j in range(width):
                nxt_pi[s, j] = nxt[s, arg, j]
                p_pi[s, j] = probs[s, arg, j]
            d = best - v[s]
            lo = min(lo, d)
            hi = max(hi, d)
        return lo, hi, changed

    @numba.njit(cache=True, nogil=True)
    def policy_step(r_pi: np.ndarray, nxt_pi: np.ndarray, p_pi: np.ndarray, gamma: float,
                    v: np.ndarray, u: np.ndarray
                    ) -> tuple[float, float]:  # pragma: no cover - compiled
        """u = T_pi v on the rows of pi; returns (min(u - v), max(u - v))."""
        lo, hi = np.inf, -np.inf
        for s in range(r_pi.shape[0]):
            acc = 0.0
            for j in range(nxt_pi.shape[1]):
                acc += p_pi[s, j] * v[nxt_pi[s, j]]
            x = r_pi[s] + gamma * acc
            u[s] = x
            d = x - v[s]
            lo = min(lo, d)
            hi = max(hi, d)
        return lo, hi

    @numba.njit(cache=True, nogil=True)
    def policy_sweeps(r_pi: np.ndarray, nxt_pi: np.ndarray, p_pi: np.ndarray, gamma: float,
                      v: np.ndarray, work: np.ndarray, span_target: float,
                      max_sweeps: int) -> tuple[int, float, float]:  # pragma: no cover
        """Jacobi sweeps v <- T_pi v until the span of a sweep's change <= span_target.

        Returns (sweeps done, span of the first sweep's change, span of the last one).
        """
        first = last = 0.0
        done = 0
        while done < max_sweeps:
            lo, hi = policy_step(r_pi, nxt_pi, p_pi, gamma, v, work)
            v[:] = work
            done += 1
            last = hi - lo
            if done == 1:
                first = last
            if not last > span_target:  # also stops on NaN
                break
        return done, first, last
