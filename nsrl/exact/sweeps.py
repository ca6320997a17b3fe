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

    @numba.njit(cache=True, nogil=True, inline="always")
    def _settle(s: int, best: float, arg: int, q_current: float, tie: float,
                actions: np.ndarray) -> int:  # pragma: no cover - compiled
        """The action state s takes: its current one while within ``tie`` of the best."""
        if arg != actions[s] and q_current < best - tie:
            actions[s] = arg
            return 1
        return 0

    @numba.njit(cache=True, nogil=True)
    def greedy_step(R: np.ndarray, nxt: np.ndarray, probs: np.ndarray, gamma: float,
                    v: np.ndarray, u: np.ndarray, actions: np.ndarray, r_pi: np.ndarray,
                    nxt_pi: np.ndarray, p_pi: np.ndarray, tie: float, gaps: np.ndarray,
                    record: bool, track: bool
                    ) -> tuple[float, float, int, float]:  # pragma: no cover - compiled
        """u = T v and its greedy actions, on the model's arrays (every action).

        Returns (min(u - v), max(u - v), actions changed, the largest ``u(s) - q(s, a)``
        when ``track`` or ``record``, else 0); with ``record``, ``gaps[s A + a] = u(s) -
        q(s, a)`` (float32) for :func:`keep_rows`.
        A state keeps its current action while that action's q is within ``tie`` of the best
        (as policy iteration does: a change must improve by more than rounding, or near-ties
        flip with each rounding and the policy never looks stable); new actions are the
        lowest-index best. u is the best q either way. The policy's rows (r_pi, nxt_pi,
        p_pi) are copied contiguous for the sweeps.
        """
        n_states, n_actions, width = nxt.shape
        lo, hi, widest = np.inf, -np.inf, 0.0
        changed = 0
        track = track or record
        qs = np.empty(n_actions)
        for s in range(n_states):
            best, arg, worst = -np.inf, 0, np.inf
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
                if track:
                    qs[a] = q
                    worst = min(worst, q)
            u[s] = best
            if track:
                widest = max(widest, best - worst)
            if record:
                for a in range(n_actions):
                    gaps[s * n_actions + a] = best - qs[a]
            changed += _settle(s, best, arg, q_current, tie, actions)
            a = actions[s]
            r_pi[s] = R[s, a]
            for j in range(width):
                nxt_pi[s, j] = nxt[s, a, j]
                p_pi[s, j] = probs[s, a, j]
            d = best - v[s]
            lo = min(lo, d)
            hi = max(hi, d)
        return lo, hi, changed, widest

    @numba.njit(cache=True, nogil=True)
    def greedy_rows(ptr: np.ndarray, act: np.ndarray, R: np.ndarray, nxt: np.ndarray,
                    probs: np.ndarray, gamma: float, v: np.ndarray, u: np.ndarray,
                    actions: np.ndarray, r_pi: np.ndarray, nxt_pi: np.ndarray,
                    p_pi: np.ndarray, tie: float, gaps: np.ndarray, record: bool
                    ) -> tuple[float, float, int, float]:  # pragma: no cover - compiled
        """:func:`greedy_step` on the rows of the actions left (:func:`keep_rows`).

        State s has the rows ``ptr[s]:ptr[s + 1]`` of R (k,), nxt and probs (k, b), row k
        being action ``act[k]`` (increasing within a state, so ties go to the lowest index
        as in :func:`greedy_step`); ``gaps[k]`` is row k's gap.
        """
        width = nxt.shape[1]
        lo, hi, widest = np.inf, -np.inf, 0.0
        changed = 0
        longest = 0
        for s in range(ptr.shape[0] - 1):
            longest = max(longest, ptr[s + 1] - ptr[s])
        qs = np.empty(longest)
        for s in range(ptr.shape[0] - 1):
            start, stop = ptr[s], ptr[s + 1]
            best, best_k, worst = -np.inf, start, np.inf
            current, q_current, row = actions[s], -np.inf, start
            for k in range(start, stop):
                acc = 0.0
                for j in range(width):
                    acc += probs[k, j] * v[nxt[k, j]]
                q = R[k] + gamma * acc
                qs[k - start] = q
                if q > best:
                    best, best_k = q, k
                worst = min(worst, q)
                if act[k] == current:
                    q_current, row = q, k
            u[s] = best
            widest = max(widest, best - worst)
            if record:
                for k in range(start, stop):
                    gaps[k] = best - qs[k - start]
            if _settle(s, best, act[best_k], q_current, tie, actions):
                changed += 1
                row = best_k
            r_pi[s] = R[row]
            for j in range(width):
                nxt_pi[s, j] = nxt[row, j]
                p_pi[s, j] = probs[row, j]
            d = best - v[s]
            lo = min(lo, d)
            hi = max(hi, d)
        return lo, hi, changed, widest

    @numba.njit(cache=True, nogil=True)
    def count_rows(ptr: np.ndarray, gaps: np.ndarray, threshold: float
                   ) -> int:  # pragma: no cover - compiled
        """How many rows :func:`keep_rows` would keep."""
        left = 0
        for k in range(ptr[ptr.shape[0] - 1]):
            if not gaps[k] * (1.0 - 1e-6) > threshold:
                left += 1
        return left

    @numba.njit(cache=True, nogil=True)
    def keep_rows(ptr: np.ndarray, act: np.ndarray, R: np.ndarray, nxt: np.ndarray,
                  probs: np.ndarray, gaps: np.ndarray, threshold: float, left: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                             np.ndarray]:  # pragma: no cover - compiled
        """The rows of :func:`greedy_step` without those whose gap exceeds ``threshold``.

        ``gaps`` are float32 roundings of the computed gaps (relative error <= 2^-24): a row
        goes only when ``gap (1 - 1e-6)`` exceeds the threshold. ``left`` is
        :func:`count_rows`'s count. Returns new (ptr, act, R, nxt, probs).
        """
        n = ptr.shape[0] - 1
        width = nxt.shape[1]
        named = act.shape[0] > 0
        ptr2 = np.empty(n + 1, dtype=np.int64)
        act2 = np.empty(left, dtype=np.int64)
        R2, nxt2, p2 = np.empty(left), np.empty((left, width), dtype=nxt.dtype), np.empty(
            (left, width))
        i = 0
        ptr2[0] = 0
        for s in range(n):
            for k in range(ptr[s], ptr[s + 1]):
                if not gaps[k] * (1.0 - 1e-6) > threshold:
                    act2[i] = act[k] if named else k - ptr[s]
                    R2[i] = R[k]
                    for j in range(width):
                        nxt2[i, j] = nxt[k, j]
                        p2[i, j] = probs[k, j]
                    i += 1
            ptr2[s + 1] = i
        return ptr2, act2, R2, nxt2, p2

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
