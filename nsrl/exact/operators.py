"""Bellman operators on the successor lists: Q-values, greedy actions, T_pi v, P_pi.

``Q[s, a] = R[s, a] + gamma sum_j probs[s, a, j] v[next_states[s, a, j]]``: O(S A b) work.
Small models use one numpy expression (the arithmetic of every earlier version, so results
are the same bit for bit); models of more than :data:`COMPILED_MIN_ENTRIES` successor
entries use a compiled loop that allocates nothing but Q (the numpy expression makes two
temporaries of S A b floats: 320 MB at 10^6 states, 10 actions, b = 2).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nsrl.model.kernels import HAVE_NUMBA
from nsrl.model.mdp import FiniteMDP
from nsrl.policies import Policy, action_table

COMPILED_MIN_ENTRIES = 2**20  # S A b from which Q-values are computed by the compiled loop
# The largest discount whose values the backend certifies (measured: see check_certifiable).
GAMMA_MAX = 1 - 1e-5
_SCALE_MAX = np.finfo(np.float64).max / 16  # values, their differences and sums stay finite
_UNIT = np.finfo(np.float64).eps / 2  # unit roundoff u = 2^-53

if HAVE_NUMBA:
    import numba

    @numba.njit(cache=True, nogil=True)
    def _q_compiled(R: np.ndarray, nxt: np.ndarray, probs: np.ndarray, gamma: float,
                    v: np.ndarray, out: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
        n_states, n_actions, width = nxt.shape
        for s in range(n_states):
            for a in range(n_actions):
                acc = 0.0
                for j in range(width):
                    acc += probs[s, a, j] * v[nxt[s, a, j]]
                out[s, a] = R[s, a] + gamma * acc
        return out


def check_mdp(mdp: object) -> FiniteMDP:
    """Raise TypeError unless ``mdp`` is a FiniteMDP."""
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(
            f"expected a nsrl.FiniteMDP, got {type(mdp).__name__}; build one with "
            f"nsrl.garnet(...) or nsrl.FiniteMDP(P, R, gamma)."
        )
    return mdp


def check_certifiable(mdp: FiniteMDP) -> FiniteMDP:
    """Raise ValueError, before any work, on a model whose exact values cannot be certified.

    Two limits. ``gamma <= GAMMA_MAX``: a certificate needs a Bellman residual of
    ``VALUE_RTOL * R_max`` (1e-10 R_max), while computing it rounds by about
    ``eps R_max / (1 - gamma)`` (:func:`residual_rounding`); at 1 - gamma = 1e-5 that is
    ~1e-11 R_max and every model tried is certified, at 1 - 3e-6 the Garnets are not
    (``benchmarks/exact_gamma_limit.py``).
    ``R_max / (1 - gamma)`` (the values' scale) at most float64's largest number / 16: values,
    their differences and residuals then stay finite.
    """
    check_mdp(mdp)
    if mdp.gamma > GAMMA_MAX:
        raise ValueError(
            f"gamma = {mdp.gamma!r} is too close to 1 for certified exact values (the rounding "
            f"of a Bellman residual, ~1e-16 R_max / (1 - gamma), exceeds the 1e-10 R_max a "
            f"certificate needs): use gamma <= {GAMMA_MAX!r}."
        )
    scale = mdp.r_max / (1.0 - mdp.gamma)
    if not scale <= _SCALE_MAX:
        raise ValueError(
            f"rewards up to R_max = {mdp.r_max:.3g} with gamma = {mdp.gamma!r} give values up to "
            f"R_max / (1 - gamma) = {scale:.3g}, beyond float64's range (at most "
            f"{_SCALE_MAX:.3g} here); rescale the rewards (greedy policies do not change)."
        )
    return mdp


def residual_rounding(mdp: FiniteMDP, v: np.ndarray) -> float:
    """A bound on the rounding error of one computed entry of ``T v - v`` (or ``T_pi v - v``).

    Each entry sums b products and R, scales by gamma and subtracts v: with the unit roundoff
    u = 2^-53, ``(b + 3) u (R_max + |v|_inf)`` covers the accumulated errors of that sum
    (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, section 3.1: gamma_k =
    k u / (1 - k u)) and of the final subtraction. ``gamma row_error |v|_inf`` adds the
    difference between the stored rows and the exactly normalised ones
    (:attr:`nsrl.FiniteMDP.row_error`, a few u), so a certificate holds for the model the
    user meant: ``T v`` of rows summing to 1 + e differs from the normalised one's by
    ``gamma e |v|``.
    """
    width = mdp.successors[0].shape[2]
    v_max = float(np.abs(v).max(initial=0.0))
    return (width + 3) * _UNIT * (mdp.r_max + v_max) + mdp.gamma * mdp.row_error * v_max


def check_values(mdp: FiniteMDP, v: object) -> np.ndarray:
    """``v`` as a float64 vector of one finite value per state of ``mdp``, or ValueError.

    O(S), against the O(S A b) of the operator it guards: a vector of another length would
    otherwise be gathered from (numpy raises deep inside, or, for a longer one, reads values
    of no state), and a NaN would make every greedy action 0.
    """
    check_mdp(mdp)
    v = np.asarray(v)
    if v.shape != (mdp.n_states,) or v.dtype.kind not in "biuf":
        raise ValueError(f"v should be a real vector of one value per state, shape "
                         f"({mdp.n_states},) for {mdp!r}, got shape {v.shape} and dtype "
                         f"{v.dtype}; pass e.g. nsrl.optimal_value(mdp) or "
                         f"nsrl.evaluate(mdp, pi).")
    finite = np.isfinite(v)
    if not finite.all():
        s = int(np.argmin(finite))
        raise ValueError(f"v[{s}] = {v[s]} is not finite ({int((~finite).sum())} of "
                         f"{v.size} entries): Bellman operators need finite values; replace "
                         f"NaN/inf (a diverged estimate?).")
    return v


def q_values(mdp: FiniteMDP, v: np.ndarray) -> np.ndarray:
    """Q[s, a] = R[s, a] + gamma sum_s' P[s, a, s'] v[s'] (sparse successors).

    Raises:
        ValueError: ``v`` is not one finite value per state (:func:`check_values`).
    """
    v = check_values(mdp, v)
    nxt, probs = mdp.successors
    if HAVE_NUMBA and nxt.size >= COMPILED_MIN_ENTRIES:
        out = np.empty((mdp.n_states, mdp.n_actions))
        return _q_compiled(mdp.R, nxt, probs, mdp.gamma, np.ascontiguousarray(v, dtype=float), out)
    return mdp.R + mdp.gamma * (probs * v[nxt]).sum(axis=-1)


def greedy_actions(mdp: FiniteMDP, v: np.ndarray) -> np.ndarray:
    """A greedy policy w.r.t. ``v`` (T_pi v = T v); ties go to the lowest action index.

    Raises:
        ValueError: ``v`` is not one finite value per state (:func:`check_values`).
    """
    return np.argmax(q_values(mdp, v), axis=1)


def bellman(mdp: FiniteMDP, table: np.ndarray, v: np.ndarray) -> np.ndarray:
    """T_pi v for a table pi[s, a] (or for a batch of tables pi[..., s, a])."""
    return (table * q_values(mdp, v)).sum(axis=-1)


def apply_policy(mdp: FiniteMDP, pi: Policy, v: np.ndarray) -> np.ndarray:
    """T_pi v for any stationary policy object."""
    if getattr(pi, "stochastic", False):
        return bellman(mdp, pi.table(mdp), v)
    q = q_values(mdp, v)
    return q[np.arange(mdp.n_states), action_table(pi, mdp)]


def policy_rows(mdp: FiniteMDP, pi: Policy) -> tuple[sp.csr_matrix, np.ndarray]:
    """(P_pi as a CSR matrix (S, S), r_pi) of a stationary policy, in O(S A b) memory.

    A deterministic policy keeps b entries per row, a stochastic one n_A b (padding entries
    of probability 0 are kept as explicit zeros: they change no product).
    """
    nxt, probs = mdp.successors
    n = mdp.n_states
    s = np.arange(n)
    if getattr(pi, "stochastic", False):
        table = pi.table(mdp)
        cols = nxt.reshape(n, -1)
        data = (table[:, :, None] * probs).reshape(n, -1)
        r_pi = (table * mdp.R).sum(axis=1)
    else:
        a = action_table(pi, mdp)
        cols, data, r_pi = nxt[s, a], probs[s, a], mdp.R[s, a]
    k = cols.shape[1]
    P_pi = sp.csr_matrix((data.ravel(), cols.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    return P_pi, np.ascontiguousarray(r_pi, dtype=np.float64)
