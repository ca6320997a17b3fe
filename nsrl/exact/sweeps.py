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

    @numba.njit(cache=True, nogil=True, inline="always")
    def _copy_row(s: int, row: int, a: int, R: np.ndarray, nxt: np.ndarray, probs: np.ndarray,
                  r_pi: np.ndarray, nxt_pi: np.ndarray, p_pi: np.ndarray
                  ) -> None:  # pragma: no cover - compiled
        """Policy row s from the model's (row, a) (a = -1, no action yet, only with NaN)."""
        a = max(a, 0)
        r_pi[s] = R[row, a]
        for j in range(nxt.shape[2]):
            nxt_pi[s, j] = nxt[row, a, j]
            p_pi[s, j] = probs[row, a, j]

    @numba.njit(cache=True, nogil=True, inline="always")
    def _row_of(ptr: np.ndarray, act: np.ndarray, s: int, a: int
                ) -> int:  # pragma: no cover - compiled
        """The row of action a among state s's (the first one if absent: NaN values only)."""
        row = ptr[s]
        while row < ptr[s + 1] - 1 and act[row] != a:
            row += 1
        return row

    @numba.njit(cache=True, nogil=True)
    def greedy_step(R: np.ndarray, nxt: np.ndarray, probs: np.ndarray, gamma: float,
                    v: np.ndarray, u: np.ndarray, actions: np.ndarray, r_pi: np.ndarray,
                    nxt_pi: np.ndarray, p_pi: np.ndarray, tie: float, gaps: np.ndarray,
                    record: bool, track: bool, apart: bool
                    ) -> tuple[float, float, int, float]:  # pragma: no cover - compiled
        """u = T v and its greedy actions, on the model's arrays (every action).

        Returns (min(u - v), max(u - v), actions changed, the largest ``u(s) - q(s, a)``
        when ``track`` or ``record``, else 0); with ``record``, ``gaps[s A + a] = u(s) -
        q(s, a)`` (float32) for :func:`keep_rows`. With ``apart``, the policy's rows are not
        copied: the caller copies them in a pass of their own (:func:`policy_rows`), as it
        must when the kernel runs on float32 copies. On the rows left by the elimination
        the separate pass is the faster (fused, each copy waits on its state's gathers and
        fewer of them stay in flight: ``benchmarks/bench_mpi_kernels.py``); on every
        action, and on models whose v stays in cache, the fused copy is. The kernel also
        runs on float32 copies of probs and v and int32 next states (the numbers only
        approximate: the caller copies the policy's rows from the float64 model apart).
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
            if not apart:
                _copy_row(s, s, actions[s], R, nxt, probs, r_pi, nxt_pi, p_pi)
            d = best - v[s]
            lo = min(lo, d)
            hi = max(hi, d)
        return lo, hi, changed, widest

    @numba.njit(cache=True, nogil=True)
    def greedy_rows(ptr: np.ndarray, act: np.ndarray, R: np.ndarray, nxt: np.ndarray,
                    probs: np.ndarray, gamma: float, v: np.ndarray, u: np.ndarray,
                    actions: np.ndarray, r_pi: np.ndarray, nxt_pi: np.ndarray,
                    p_pi: np.ndarray, tie: float, gaps: np.ndarray, record: bool, apart: bool
                    ) -> tuple[float, float, int, float]:  # pragma: no cover - compiled
        """:func:`greedy_step` on the rows of the actions left (:func:`keep_rows`).

        State s has the rows ``ptr[s]:ptr[s + 1]`` of R (k,), nxt and probs (k, b), row k
        being action ``act[k]`` (increasing within a state, so ties go to the lowest index
        as in :func:`greedy_step`); ``gaps[k]`` is row k's gap.
        """
        width = nxt.shape[1]
        R2, nxt3, p3 = R.reshape(-1, 1), nxt.reshape(-1, 1, width), probs.reshape(-1, 1, width)
        lo, hi, widest = np.inf, -np.inf, 0.0
        changed = 0
        longest = 0
        for s in range(ptr.shape[0] - 1):
            longest = max(longest, ptr[s + 1] - ptr[s])
        qs = np.empty(longest)
        for s in range(ptr.shape[0] - 1):
            start, stop = ptr[s], ptr[s + 1]
            best, best_k, worst = -np.inf, start, np.inf
            current, q_current = actions[s], -np.inf
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
                    q_current = q
            u[s] = best
            widest = max(widest, best - worst)
            if record:
                for k in range(start, stop):
                    gaps[k] = best - qs[k - start]
            changed += _settle(s, best, act[best_k], q_current, tie, actions)
            if not apart:
                _copy_row(s, _row_of(ptr, act, s, actions[s]), 0, R2, nxt3, p3, r_pi, nxt_pi,
                          p_pi)
            d = best - v[s]
            lo = min(lo, d)
            hi = max(hi, d)
        return lo, hi, changed, widest

    @numba.njit(cache=True, nogil=True)
    def policy_rows(R: np.ndarray, nxt: np.ndarray, probs: np.ndarray, actions: np.ndarray,
                    r_pi: np.ndarray, nxt_pi: np.ndarray, p_pi: np.ndarray
                    ) -> None:  # pragma: no cover - compiled
        """The policy's rows copied from the model's arrays (``apart``: :func:`greedy_step`)."""
        for s in range(nxt.shape[0]):
            _copy_row(s, s, actions[s], R, nxt, probs, r_pi, nxt_pi, p_pi)

    @numba.njit(cache=True, nogil=True)
    def policy_rows_of(ptr: np.ndarray, act: np.ndarray, R: np.ndarray, nxt: np.ndarray,
                       probs: np.ndarray, actions: np.ndarray, r_pi: np.ndarray,
                       nxt_pi: np.ndarray, p_pi: np.ndarray
                       ) -> None:  # pragma: no cover - compiled
        """:func:`policy_rows` from the rows of :func:`greedy_rows`."""
        width = nxt.shape[1]
        R2, nxt3, p3 = R.reshape(-1, 1), nxt.reshape(-1, 1, width), probs.reshape(-1, 1, width)
        for s in range(ptr.shape[0] - 1):
            _copy_row(s, _row_of(ptr, act, s, actions[s]), 0, R2, nxt3, p3, r_pi, nxt_pi, p_pi)

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
