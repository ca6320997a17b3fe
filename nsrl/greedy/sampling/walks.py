"""Walks of the fast path: transitions along restarting walks from nu, compiled.

``W`` walkers start from nu and take, in turns, one transition each (time-major order:
transition ``i`` is walker ``i % W``'s step ``i // W``); after each transition a walker
restarts from nu with probability 1 - gamma. Its action is uniform with probability
``explore``, else the behaviour's (an action table, or an action cdf for a stochastic
behaviour). Transition i reads five uniforms: ``U[0, i]`` explore or not, ``U[1, i]`` the
action, ``U[2, i]`` the successor (the inverse-transform rule of :mod:`nsrl.model.kernels`),
``U[3, i]`` restart or not, ``U[4, i]`` the restart state.

The numba loop and the numpy fallback (one vectorised step over the walkers per time step)
read the same uniforms and make the same comparisons, so they return the same transitions,
bit for bit. A walk of n transitions then costs O(n) in compiled code, instead of 4 / (1 -
gamma) Python-level steps (~400 at gamma = 0.99) whatever n.
"""

from __future__ import annotations

import numpy as np

from nsrl.model import kernels
from nsrl.model.mdp import FiniteMDP

try:  # numba is a declared dependency; the fallback keeps nsrl usable without it.
    import numba
except ImportError:  # pragma: no cover - numba is installed in every supported setup
    numba = None


def _walk_numpy(nxt: np.ndarray, cdf: np.ndarray, R: np.ndarray, start_cdf: np.ndarray,
                last: int, act: np.ndarray, pcdf: np.ndarray, stoch: bool,
                explore: float, gamma: float, s0: np.ndarray, U: np.ndarray, out_s: np.ndarray,
                out_a: np.ndarray, out_r: np.ndarray, out_next: np.ndarray) -> None:
    n, walkers = U.shape[1], s0.shape[0]
    n_actions, width = cdf.shape[1], cdf.shape[2]
    s = s0.copy()
    for t in range(0, n, walkers):
        i = np.arange(t, min(n, t + walkers))
        s = s[:len(i)]
        a = np.minimum((U[1, i] * n_actions).astype(np.int64), n_actions - 1)
        own = U[0, i] >= explore
        if stoch:
            pa = (pcdf[s, :-1] <= U[1, i][:, None]).sum(axis=1)
        else:
            pa = act[s]
        a = np.where(own, pa, a)
        j = np.zeros(len(i), dtype=np.int64)
        for k in range(width - 1):
            j += cdf[s, a, k] <= U[2, i]
        nxt_s = nxt[s, a, j]
        out_s[i], out_a[i], out_r[i], out_next[i] = s, a, R[s, a], nxt_s
        restart = U[3, i] >= gamma
        fresh = np.minimum(np.searchsorted(start_cdf, U[4, i], side="right"), last)
        s = np.where(restart, fresh, nxt_s)


if numba is not None:

    @numba.njit(cache=True, nogil=True)
    def _walk_numba(nxt: np.ndarray, cdf: np.ndarray, R: np.ndarray, start_cdf: np.ndarray,
                    last: int, act: np.ndarray, pcdf: np.ndarray, stoch: bool,
                    explore: float, gamma: float, s0: np.ndarray, U: np.ndarray, out_s: np.ndarray,
                    out_a: np.ndarray, out_r: np.ndarray,
                    out_next: np.ndarray) -> None:  # pragma: no cover - compiled
        n, walkers = U.shape[1], s0.shape[0]
        n_actions, width = cdf.shape[1], cdf.shape[2]
        s = s0.copy()
        for i in range(n):
            w = i % walkers
            x = s[w]
            a = min(int(U[1, i] * n_actions), n_actions - 1)
            if U[0, i] >= explore:
                if stoch:
                    a = 0
                    for k in range(n_actions - 1):
                        a += pcdf[x, k] <= U[1, i]
                else:
                    a = act[x]
            j = 0
            for k in range(width - 1):
                j += cdf[x, a, k] <= U[2, i]
            y = nxt[x, a, j]
            out_s[i], out_a[i], out_r[i], out_next[i] = x, a, R[x, a], y
            if U[3, i] >= gamma:
                y = min(np.searchsorted(start_cdf, U[4, i], side="right"), last)
            s[w] = y


def walk(mdp: FiniteMDP, n: int, walkers: int, rng: np.random.Generator,
         behaviour: tuple[np.ndarray, np.ndarray, bool] | None = None, explore: float = 1.0,
         backend: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` transitions of ``walkers`` restarting walks from nu (see the module docstring).

    Args:
        mdp: the finite model.
        n: transitions to draw.
        walkers: walks run side by side (1 <= walkers <= n).
        rng: the Generator of the walkers' start states, then of the (5, n) uniforms.
        behaviour: ``(actions[s], cdf[s, a], stochastic)`` of the behaviour policy, or None
            (uniform actions; ``explore`` is then 1).
        explore: probability of a uniform action instead of the behaviour's.
        backend: "numba", "numpy" or None (the default of :mod:`nsrl.model.kernels`).

    Returns:
        ``(states, actions, rewards, next_states)``, arrays of length n.
    """
    nxt, cdf = kernels.transition_tables(mdp)
    R = np.ascontiguousarray(mdp.R, dtype=np.float64)
    start_cdf = np.cumsum(mdp.start)
    last = int(np.flatnonzero(mdp.start > 0)[-1])
    s0 = kernels.start_states(mdp, walkers, rng)
    U = rng.random((5, n))
    if behaviour is None:
        act, pcdf, stoch = np.zeros(mdp.n_states, dtype=np.int64), np.zeros((1, 1)), False
        explore = 1.0
    else:
        act, pcdf, stoch = behaviour
    out = (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n),
           np.empty(n, dtype=np.int64))
    step = _walk_numba if kernels.resolve_backend(backend) == "numba" else _walk_numpy
    step(nxt, cdf, R, start_cdf, last, act, pcdf, bool(stoch), float(explore),
         float(mdp.gamma), s0, U, *out)
    return out
