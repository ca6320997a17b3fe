"""API's policy values by low-rank updates of an explicit inverse (b between 2 and 4).

Between two API iterations the greedy policy changes in c states only (about n_S / 8 on
the paper's Garnets), so I - gamma P_pi changes in c rows: A' = A - E_S D, with E_S the
columns of the identity at the changed states S and D = gamma (P_pi' - P_pi)[S, :] (at most
2b entries per row). Sherman-Morrison-Woodbury gives the new inverse,

    B' = B + B E_S (I_c - D B E_S)^{-1} D B,

in 2 n^2 c flops (one BLAS product), against (2/3) n^3 for a fresh LU. Every value
v = B' r_pi' is certified by its residual ||r - A' v|| (sparse); a run whose residual is
too large, or whose policy changed in more than n / 4 states, is re-inverted.
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg.solvers import RTOL

MOST_CHANGED = 0.25  # re-invert when more than this fraction of the states changed


class PolicyInverse:
    """Explicit inverses of I - gamma P_pi for R deterministic policies, kept up to date.

    Args:
        batch: the Batch of the MDP.
        acts: the initial policies (R, n).
    """

    def __init__(self, batch, acts: np.ndarray):
        self.b = batch
        self.acts = acts.copy()
        self.B = np.linalg.inv(batch.systems(acts))

    def _update(self, r: int, new: np.ndarray) -> None:
        b, old = self.b, self.acts[r]
        S = np.flatnonzero(new != old)
        if not S.size:
            return
        if S.size > MOST_CHANGED * b.n:
            self.B[r] = np.linalg.inv(b.systems(new[None])[0])
            return
        B = self.B[r]
        # Y = D B: rows of B combined along the old and new successors of the changed states
        pn, po = b.probs[S, new[S]], b.probs[S, old[S]]
        Y = b.gamma * (np.einsum("cj,cjt->ct", pn, B[b.nxt[S, new[S]]])
                       - np.einsum("cj,cjt->ct", po, B[b.nxt[S, old[S]]]))
        K = np.eye(S.size) - Y[:, S]
        B += B[:, S] @ np.linalg.solve(K, Y)

    def values(self, acts: np.ndarray) -> np.ndarray:
        """v_pi for the new policies ``acts`` (R, n), certified; the inverses follow them."""
        b = self.b
        for r in range(len(acts)):
            self._update(r, acts[r])
        self.acts = acts.copy()
        rewards = b.mdp.R[b.states, acts]
        v = np.matmul(self.B, rewards[..., None])[..., 0]
        res = b.apply(acts, v) - v  # r - (I - gamma P_pi) v
        bad = np.linalg.norm(res, axis=1) > RTOL * np.linalg.norm(rewards, axis=1)
        if bad.any():  # rounding has built up: start these runs afresh
            A = b.systems(acts[bad])
            self.B[bad] = np.linalg.inv(A)
            v[bad] = np.linalg.solve(A, rewards[bad][..., None])[..., 0]
        return v
