"""Compiled kernels of modified policy iteration on the successor lists (numba).

``greedy_step`` is one Bellman step ``u = T v`` with its greedy actions (a state keeps its
action on a near-tie) and the range of ``u - v``;
``policy_sweeps`` applies ``T_pi`` (Jacobi: Gauss-Seidel's change does not vanish on the
constant shift that the span test ignores; measured on a Garnet of 10^5 states, 1 211 sweeps
and 68 greedy steps against Jacobi's 191 and 24) until the span of the last change falls
below a target. Neither certifies anything: the caller
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
                    nxt_pi: np.ndarray, p_pi: np.ndarray, tie: float = 0.0
                    ) -> tuple[float, float, int]:  # pragma: no cover - compiled
        """u = T v and its greedy actions; returns (min(u - v), max(u - v), actions changed).

        A state keeps its current action while that action's q is within ``tie`` of the best
        (as policy iteration does: a change must improve by more than rounding, or near-ties
        flip with each rounding and the policy never looks stable); new actions are the
        lowest-index best. u is the best q either way. The policy's rows (r_pi, nxt_pi,
        p_pi) are copied contiguous for the sweeps.
        """
        n_states, n_actions, width = nxt.shape
        lo, hi = np.inf, -np.inf
        changed = 0
        for s in range(n_states):
            best, arg = -np.inf, 0
            current, q_current = actions[s], -np.inf
            for a in range(n_actions):
                acc = 0.0
                for j in range(width):
                    acc += probs[s, a, j] * v[nxt[s, a, j]]
                q = R[s, a] + gamma * acc
                if q > best:
                    best, arg = q, a
                if a == current:
                    q_current = q
            u[s] = best
            if arg != current:
                if q_current >= best - tie:
                    arg = current
                else:
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
                      max_sweeps: int) -> tuple[int, float, float, float]:  # pragma: no cover
        """Jacobi sweeps v <- T_pi v until the span of a sweep's change <= span_target.

        The sweeps alternate between ``v`` and ``work`` (no copy per sweep: at 10^6 states a
        copy is a third of a sweep's memory traffic); the result is left in ``v``.
        Returns (sweeps done, span of the first sweep's change, span of the last one, and the
        middle of the last one's range: ``v + gamma mid / (1 - gamma)`` is MacQueen's
        midpoint, whose residual ``T_pi w - w`` is within ``gamma span / 2`` of 0).
        """
        first = last = mid = 0.0
        done = 0
        src, dst = v, work
        while done < max_sweeps:
            lo, hi = policy_step(r_pi, nxt_pi, p_pi, gamma, src, dst)
            src, dst = dst, src
            done += 1
            last, mid = hi - lo, (hi + lo) / 2
            if done == 1:
                first = last
            if not last > span_target:  # also stops on NaN
                break
        if done % 2 == 1:
            v[:] = work
        return done, first, last, mid
