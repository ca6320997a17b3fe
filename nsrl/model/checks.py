"""Checks shared by the model layer: probability vectors and rows, one tolerance, one rule.

Every distribution a user hands to nsrl (a transition row ``P[s, a, :]``, a row of a
stochastic policy, a mixture's weights, a start or weighting distribution) is read the same
way:

* a sum further than :data:`SUM_TOL` from 1 is refused, naming the row (a mistake, e.g.
  unnormalised weights, is never guessed at);
* a sum within it is **divided out**: the row is replaced by ``row / row.sum()``. Values are
  that sensitive: an error e in a row's sum moves values by up to ``e R_max / (1 - gamma)^2``
  (``v' - v = gamma (P' v' - P v)``, so ``|v' - v| <= gamma e |v'| / (1 - gamma)``), which at
  gamma = 0.99999 is 10^10 e R_max: a row summing to 1 + 1e-9 would move values by 10 R_max,
  a million times the certificate of the exact backend (1e-10 R_max / (1 - gamma));
* only a row whose computed sum is within rounding of 1 (``k eps`` for k entries, eps =
  2^-52) is left as it is, bit for bit (so the models and policies of earlier versions keep
  their numbers). What is left, at most ``k eps`` per row plus the rounding of the sum, is
  measured on each model (:attr:`nsrl.FiniteMDP.row_error`) and added to the rounding term
  of every certificate of v* (:func:`nsrl.exact.operators.residual_rounding`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from nsrl.model.arrays import as_array, real_array

__all__ = ["SUM_TOL", "check_distribution", "normalise", "rows_off"]

SUM_TOL = 1e-4  # |sum - 1| beyond this is refused; within it, the sum is divided out
_EPS = float(np.finfo(np.float64).eps)


def rows_off(sums: np.ndarray) -> np.ndarray:
    """The mask of sums further than :data:`SUM_TOL` from 1 (NaN included)."""
    return ~(np.abs(sums - 1.0) <= SUM_TOL)


def normalise(x: np.ndarray, sums: np.ndarray | None = None) -> np.ndarray:
    """``x`` with each row (last axis) divided by its sum unless that is within rounding of 1.

    In place on ``x`` (a fresh array the caller owns), which is returned. ``sums`` are the
    rows' sums if the caller has them. Rows whose computed sum is within ``k eps`` of 1 (k
    entries) are left bit for bit; the caller has refused sums beyond :data:`SUM_TOL`.
    """
    sums = np.asarray(x.sum(axis=-1) if sums is None else sums)
    off = np.abs(sums - 1.0) > x.shape[-1] * _EPS
    if x.ndim == 1:
        if off:
            x /= sums
    elif off.any():
        x[off] /= sums[off][..., None]
    return x


def check_distribution(name: str, x: npt.ArrayLike, n_states: int) -> np.ndarray:
    """``x`` as a new probability vector over ``n_states`` states, or ValueError/TypeError.

    A sum within :data:`SUM_TOL` of 1 is divided out (:func:`normalise`); beyond, refused.
    """
    d = as_array(name, x)
    if d.shape != (n_states,):
        raise ValueError(f"{name} should have shape ({n_states},), got {d.shape}.")
    d = real_array(name, d, 1)
    if np.any(d < 0):
        raise ValueError(f"{name} should be non-negative, got {d[d < 0][0]:.6g} at index "
                         f"{int(np.argmax(d < 0))}.")
    total = d.sum()
    if rows_off(total):
        raise ValueError(f"{name} should sum to 1 (within {SUM_TOL:g}, which is divided out), "
                         f"got {total:.10g}; normalise it (x / x.sum()).")
    return normalise(d, total)
