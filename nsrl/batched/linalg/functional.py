"""The functional-graph solve: deterministic policies and loops on b = 1 MDPs, exactly, in O(m n).

On a Garnet with one successor per (state, action) a deterministic policy's P_pi is a map, and
so is a loop of them: x = c + g x[F] is solved by walking every state's path into its cycle,
whose values have a closed form (no iteration, no rounding beyond the geometric sums).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nsrl.exact.iterative import map_fixed_point


@njit(cache=True)
def functional_values(nxt, windows, c, g):  # pragma: no cover - compiled
    """x = c + g x[F] exactly, F the successor map of a window of deterministic policies.

    On b = 1 Garnets a deterministic policy's P_pi is a map f(s) = nxt[s, pi(s), 0], and
    the window (w_0, ..., w_{m-1}) (w_0 acting first) composes to F = f_{m-1} o ... o f_0,
    so that (g P_{w_0} ... P_{w_{m-1}} x)(s) = g x[F(s)]. Every state walks a path into one
    cycle of F, whose values have a closed form, and the paths fill in backwards: O(m n),
    no rounding beyond the geometric sums. ``windows`` has shape (R, m, n).
    """
    n_runs, n = c.shape
    x = np.empty((n_runs, n))
    F = np.empty(n, dtype=np.int64)
    for r in range(n_runs):
        for s in range(n):
            t = s
            for i in range(windows.shape[1]):
                t = nxt[t, windows[r, i, t], 0]
            F[s] = t
        x[r] = map_fixed_point(F, c[r], g)
    return x
