"""NSPI(m)'s loop values on a sliding window, without rebuilding the m-step product.

NSPI(m) evaluates, at every iteration, the loop over its last m policies
w = (x_t, ..., x_{t-m+1}) (x_t acts first): with the affine maps F_x v = r_x + gamma P_x v,
v = c + M v where (M, c) is the composition F_{x_t} o ... o F_{x_{t-m+1}}. Rebuilding it costs
m sparse products per iteration. The window slides by one (a new policy in front, the
oldest out at the back), so we keep two parts, as a queue made of two stacks:

* at the start of a block (every m iterations) the prefix compositions of the window,
  G_j = F_{y_1} o ... o F_{y_j} for j = 1..m (one right sparse product each, once per block);
* the front H_u = F_{x_t} o ... o F_{x_{t-u+1}} of the u policies added since (one left
  sparse product per iteration).

The window after u additions is H_u o G_{m-u}: one dense product (BLAS) and one solve per
iteration instead of m sparse products. Rounding differs from the reference's order of
composition at the 1e-15 level only (tested against nsrl.run).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _right(nxt, probs, gamma, acts, M, out):  # pragma: no cover - compiled
    """out[r] = M[r] (gamma P_{acts[r]}), scattering each row of M along the successors."""
    n_runs, n = acts.shape
    width = nxt.shape[2]
    for r in range(n_runs):
        for i in range(n):
            row = out[r, i]
            row[:] = 0.0
            for s in range(n):
                x = M[r, i, s]
                if x != 0.0:
                    a = acts[r, s]
                    for j in range(width):
                        row[nxt[s, a, j]] += x * probs[s, a, j]
            for t in range(n):
                row[t] *= gamma


class SlidingLoop:
    """Loop values of NSPI(m)'s window for R runs at once.

    Args:
        batch: the :class:`nsrl.experiments.kernels.Batch` of the MDP.
        window: the initial windows, int array (R, m, n), window[:, 0] acting first.
    """

    def __init__(self, batch, window: np.ndarray):
        self.b, self.m = batch, window.shape[1]
        self._start_block(window)

    def _compose_right(self, M, c, acts):
        """(M, c) o F_acts = (M gamma P_acts, c + M r_acts)."""
        out = np.empty_like(M)
        _right(self.b.nxt, self.b.probs, self.b.gamma, acts, np.ascontiguousarray(M), out)
        r_acts = self.b.mdp.R[self.b.states, acts]
        return out, c + np.einsum("rst,rt->rs", M, r_acts)

    def _start_block(self, window: np.ndarray) -> None:
        b = self.b
        n_runs = window.shape[0]
        eye = np.broadcast_to(b.eye, (n_runs, b.n, b.n))
        M, c = self._compose_right(eye, np.zeros((n_runs, b.n)), window[:, 0])
        self.prefix = [(M, c)]
        for j in range(1, self.m):
            M, c = self._compose_right(M, c, window[:, j])
            self.prefix.append((M, c))
        self.front, self.u = None, 0

    def value(self) -> np.ndarray:
        """v = (I - M)^{-1} c of the current window."""
        if self.front is None:
            M, c = self.prefix[self.m - 1]
        else:
            HM, Hc = self.front
            GM, Gc = self.prefix[self.m - self.u - 1]
            M, c = HM @ GM, Hc + np.einsum("rst,rt->rs", HM, Gc)
        return self.b.solve_loop(M, c)

    def push(self, acts: np.ndarray, window: np.ndarray) -> None:
        """Slide: ``acts`` enters in front (``window`` is the new window, acts first)."""
        self.u += 1
        if self.u == self.m:
            self._start_block(window)
            return
        b = self.b
        if self.front is None:
            n_runs = acts.shape[0]
            HM = np.broadcast_to(b.eye, (n_runs, b.n, b.n))
            Hc = np.zeros((n_runs, b.n))
        else:
            HM, Hc = self.front
        out = np.empty((acts.shape[0], b.n, b.n))
        b.propagate(acts, np.ascontiguousarray(HM), out)
        self.front = (out, b.apply(acts, Hc))
