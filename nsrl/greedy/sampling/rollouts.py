"""The rollout kernel of the fast path: whole rollouts on a finite model's transition tables.

A batch of rollouts is described by arrays: start states ``s0``, optional first actions
``a0``, a *plan* (the policy of each phase as an action table or an action cdf), the
length of each rollout, and its *random-number group*. Group g owns a run of uniforms
``U[start[g]:start[g] + T_g]`` (the inverse-transform uniform of each transition, exactly
the rule of :mod:`nsrl.model.kernels`) and ``W[...]`` (the draw of a stochastic policy's
action): rollouts of one group read the same numbers at the same time step, which is what
common random numbers across actions are. Two rollouts of a group that reach the same
state at the same step follow the same path from then on (they are coupled).

The numba loop and the numpy fallback (one vectorised step per time step over the rollouts
still running) read the same uniforms and make the same comparisons and the same float
operations in the same order, so they return the same numbers, bit for bit.
"""

from __future__ import annotations

import numpy as np

from nsrl.model import kernels
from nsrl.model.mdp import FiniteMDP

try:  # numba is a declared dependency; the fallback keeps nsrl usable without it.
    import numba
except ImportError:  # pragma: no cover - numba is installed in every supported setup
    numba = None


def _run_numpy(nxt: np.ndarray, cdf: np.ndarray, R: np.ndarray, act: np.ndarray, pcdf: np.ndarray,
               stoch: np.ndarray, loop: bool, offset: int, s0: np.ndarray, a0: np.ndarray,
               group: np.ndarray, start: np.ndarray, lengths: np.ndarray, U: np.ndarray,
               W: np.ndarray, gamma: float, discounted: bool, out_ret: np.ndarray,
               out_state: np.ndarray, out_steps: np.ndarray, path: np.ndarray,
               path_start: np.ndarray) -> None:
    n_phase = act.shape[0]
    order = np.argsort(-lengths, kind="stable")  # the running rollouts are always a prefix
    neg = -lengths[order]
    states, base = s0[order], start[group[order]]
    first, record = a0[order], path.shape[0] > 0
    if record:
        path[path_start] = s0
        where = path_start[order] + 1
    ret, steps = np.zeros(len(states)), np.zeros(len(states), dtype=np.int64)
    n_actions, width = cdf.shape[1], cdf.shape[2]
    flat_next, flat_cdf, flat_R = nxt.reshape(-1), cdf.reshape(-1, width), R.reshape(-1)
    t, disc = 0, 1.0
    while True:
        alive = int(np.searchsorted(neg, -t, side="left"))  # rollouts longer than t
        p = t - offset
        if alive == 0 or (0 <= p and p >= n_phase and not loop):
            break
        s, idx = states[:alive], base[:alive] + t
        if p < 0:
            a = first[:alive]
        else:
            p = p % n_phase if loop else p
            a = ((pcdf[p, s, :-1] <= W[idx][:, None]).sum(axis=1) if stoch[p]
                 else act[p, s])
        sa = s * n_actions + a
        j = (flat_cdf[sa, :-1] <= U[idx][:, None]).sum(axis=1)
        ret[:alive] += disc * flat_R[sa]
        states[:alive] = flat_next[sa * width + j]
        if record:
            path[where[:alive] + t] = states[:alive]
        steps[:alive] += 1
        t += 1
        if discounted:
            disc *= gamma
    out_ret[order], out_state[order], out_steps[order] = ret, states, steps


if numba is not None:

    @numba.njit(cache=True, nogil=True)
    def _run_numba(nxt: np.ndarray, cdf: np.ndarray, R: np.ndarray, act: np.ndarray,
                   pcdf: np.ndarray, stoch: np.ndarray, loop: bool, offset: int, s0: np.ndarray,
                   a0: np.ndarray, group: np.ndarray, start: np.ndarray, lengths: np.ndarray,
                   U: np.ndarray, W: np.ndarray, gamma: float, discounted: bool,
                   out_ret: np.ndarray, out_state: np.ndarray, out_steps: np.ndarray,
                   path: np.ndarray, path_start: np.ndarray) -> None:  # pragma: no cover - compiled
        # Rollouts advance C at a time, time step by time step: their C dependency chains
        # (state -> action -> successor) interleave (faster than one by one:
        # docs/benchmarks.md).
        C = 8
        n_phase = act.shape[0]
        last = cdf.shape[2] - 1
        last_p = pcdf.shape[2] - 1
        record = path.shape[0] > 0
        s = np.empty(C, np.int64)
        ret = np.empty(C)
        base = np.empty(C, np.int64)
        for c0 in range(0, s0.shape[0], C):
            cn = min(C, s0.shape[0] - c0)
            longest = 0
            for c in range(cn):
                s[c] = s0[c0 + c]
                ret[c] = 0.0
                base[c] = start[group[c0 + c]]
                out_steps[c0 + c] = 0
                if record:
                    path[path_start[c0 + c]] = s[c]
                longest = max(longest, lengths[c0 + c])
            disc = 1.0
            for t in range(longest):
                p = t - offset
                if p >= 0:
                    if loop:
                        p = p % n_phase
                    elif p >= n_phase:
                        break
                for c in range(cn):
                    if t >= lengths[c0 + c]:
                        continue
                    si = s[c]
                    if p < 0:
                        a = a0[c0 + c]
                    elif stoch[p]:
                        w = W[base[c] + t]
                        a = 0
                        for k in range(last_p):
                            a += pcdf[p, si, k] <= w
                    else:
                        a = act[p, si]
                    u = U[base[c] + t]
                    j = 0
                    for k in range(last):  # branch-free count, as in nsrl.model.kernels
                        j += cdf[si, a, k] <= u
                    ret[c] += disc * R[si, a]
                    s[c] = nxt[si, a, j]
                    out_steps[c0 + c] = t + 1
                    if record:
                        path[path_start[c0 + c] + t + 1] = s[c]
                if discounted:
                    disc *= gamma
            for c in range(cn):
                out_ret[c0 + c] = ret[c]
                out_state[c0 + c] = s[c]


def run(mdp: FiniteMDP, program: tuple[np.ndarray, np.ndarray, np.ndarray], loop: bool,
        s0: np.ndarray, a0: np.ndarray | None, group: np.ndarray, lengths: np.ndarray,
        rng: np.random.Generator, gamma: float, discounted: bool, backend: str | None = None,
        record: bool = False, group_lengths: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Run the rollouts; uniforms are drawn here, per group, from ``rng``.

    Args:
        mdp: the finite model (its cached transition tables are used).
        program: ``(actions[p, s], cdf[p, s, a], stochastic[p])`` from ``Plan.program``.
        loop: whether phases cycle (else the rollout ends after the last phase).
        s0: start states, int64 (n,).
        a0: first actions, int64 (n,), or None (the plan acts from the start).
        group: random-number group of each rollout, int64 (n,), groups 0..G-1.
        lengths: transitions asked of each rollout; rollouts of a group share the length.
        rng: the Generator of the uniforms (G runs of the group's length, then the same
            for the policy draws when a phase is stochastic).
        gamma: the discount of the returns when ``discounted``.
        discounted: discount the rewards (fixed horizon) or not (geometric horizon).
        backend: "numba", "numpy" or None (the default of :mod:`nsrl.model.kernels`).
        record: also return the states each rollout visits.
        group_lengths: the longest rollout of each group, if known (else computed).

    Returns:
        ``(returns, end_states, steps)``, and with ``record`` the visited states: rollout
        i's are ``path[path_start[i]:path_start[i] + steps[i] + 1]``, start state included.
        With first actions ``a0``, ``(first_rewards, first_states)`` follow: the first
        transition of each rollout, recomputed from its uniform (the same rule).
    """
    nxt, cdf = kernels.transition_tables(mdp)
    R = np.ascontiguousarray(mdp.R, dtype=np.float64)
    act, pcdf, stoch = program
    if group_lengths is None:
        glen = np.zeros(int(group.max()) + 1 if len(group) else 0, dtype=np.int64)
        np.maximum.at(glen, group, lengths)
    else:
        glen = group_lengths
    start = np.concatenate([[0], np.cumsum(glen)[:-1]]).astype(np.int64)
    total = int(glen.sum())
    U = rng.random(total)
    W = rng.random(total) if stoch.any() else np.zeros(1)
    n = len(s0)
    offset = 0 if a0 is None else 1
    a0 = np.zeros(n, dtype=np.int64) if a0 is None else a0
    out = np.zeros(n), np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    path_start = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
    path = np.full(int((lengths + 1).sum()) if record else 0, -1, dtype=np.int64)
    if n == 0 or act.shape[0] == 0 and offset == 0:
        out[1][:] = s0
        if record:
            path[path_start] = s0
    else:
        step = _run_numba if kernels.resolve_backend(backend) == "numba" else _run_numpy
        step(nxt, cdf, R, act, pcdf, stoch, bool(loop), offset, s0, a0, group, start,
             lengths, U, W, float(gamma), bool(discounted), *out, path, path_start)
    extra = (path, path_start) if record else ()
    if offset and n:  # the first transition, from the same uniform: for the critic's data
        first_u = U[start[group]]
        j = (cdf[s0, a0, :-1] <= first_u[:, None]).sum(axis=1)
        extra += (R[s0, a0], nxt[s0, a0, j])
    return out + extra
