"""v* through an equivalent model whose arithmetic rounds less: scaled, then shifted rewards.

Two changes of the rewards leave the problem the same and map v* back exactly:

* **scale** by a power of two, ``R' = 2^k R``: exact in binary floating point, and every
  value, residual and bound scales by 2^k. Applied when ``R_max`` lies outside
  ``[2^-SCALE_BITS, 2^SCALE_BITS]``, so that no method meets rewards near 1e-50 (dense
  policy iteration stopped at once: its improvement threshold has an absolute floor) or near
  1e-40 (float32 sweeps underflowed), nor values near float64's top;
* **shift** by a constant, ``R' = R - (1 - gamma) c``: since every row of P sums to 1,
  ``v*' = v* - c``. The rounding of a Bellman residual grows with ``|v|_inf``, about
  ``u R_max / (1 - gamma)`` (u = 2^-53), while a certificate needs a residual of
  ``VALUE_RTOL R_max`` (1e-10): at gamma = 0.99999 the two are within a factor of two and
  dense policy iteration refused a quarter to three quarters of the Garnets (issue 47). With
  c the middle of v*'s range (from a first solve to a loose tolerance), ``|v'|`` is half the
  span of v* (for a Garnet a few R_max, not 10^5 R_max) and so is the rounding. Applied when
  the rounding at the values' scale exceeds :data:`SHIFT_FROM` of the residual needed.

The bound returned holds for v* of the model given (rows exactly normalised: see
:attr:`nsrl.FiniteMDP.row_error`): the method's certificate on the changed model, plus the
rounding of its rewards ``R'`` (at most ``2 u (|R'|_inf + (1 - gamma) |c|)`` per entry, so
``/ (1 - gamma)`` on values), plus the rounding of ``v' + c`` (``u`` of the result), all
times ``2^-k``, plus the underflow of scaled rewards or values (``2^-1074`` each).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nsrl.exact.operators import residual_rounding
from nsrl.model.mdp import FiniteMDP

SCALE_BITS = 20  # rewards rescaled by a power of two when R_max is outside [2^-20, 2^20]
SHIFT_FROM = 0.01  # shift when the values' rounding exceeds this fraction of the residual needed
LOOSE = 1e-6  # the first solve's tolerance, relative to R_max / (1 - gamma)
_UNIT = float(np.finfo(np.float64).eps) / 2
_TINY = 2.0**-1074

# method(model, tol) -> (v, bound): one exact method bound to its evaluations on ``model``
Run = Callable[[FiniteMDP, float], tuple[np.ndarray, float]]


def _with_rewards(mdp: FiniteMDP, R: np.ndarray) -> FiniteMDP:
    """``mdp`` with rewards R (the successor lists shared, not copied)."""
    out = FiniteMDP._from_parts(*mdp.successors, R, mdp.gamma, start=mdp.start)
    out.__dict__["row_error"] = mdp.row_error  # the same rows: not measured again
    return out


def scale_exponent(mdp: FiniteMDP) -> int:
    """k such that ``2^k R_max`` is in [0.5, 1), or 0 where R_max needs no scaling."""
    r = mdp.r_max
    if r == 0.0 or 2.0**-SCALE_BITS <= r <= 2.0**SCALE_BITS:
        return 0
    return -int(np.frexp(r)[1])


def needs_shift(mdp: FiniteMDP, tol: float) -> bool:
    """Whether rounding at the values' scale is more than SHIFT_FROM of the residual needed.

    A certificate ``(|T v - v| + delta) / (1 - gamma) <= tol`` needs a residual below
    ``tol (1 - gamma)``; delta (:func:`nsrl.exact.operators.residual_rounding`) is about
    ``(b + 3) u R_max / (1 - gamma)`` at the values' scale. At b = 2 this is gamma >
    0.9995 for the backend's tolerance.
    """
    scale = np.full(1, mdp.r_max / (1.0 - mdp.gamma))
    return residual_rounding(mdp, scale) > SHIFT_FROM * tol * (1.0 - mdp.gamma)


def solve(mdp: FiniteMDP, tol: float, run: Run) -> tuple[np.ndarray, float]:
    """v* within ``tol`` by ``run``, through the scaled and shifted model where that helps.

    Returns ``(v, bound)`` with ``|v - v*|_inf <= bound <= tol``; a model needing neither
    change is solved as given (the same numbers, bit for bit, as without this module).
    """
    k = scale_exponent(mdp)
    model, tol_k = mdp, tol
    if k:
        model, tol_k = _with_rewards(mdp, np.ldexp(mdp.R, k)), float(np.ldexp(tol, k))
    if not needs_shift(model, tol_k):
        if not k:
            return run(mdp, tol)
        v, bound = run(model, tol_k)
        return _back(v, bound, k, model.gamma)
    g = model.gamma
    first, _ = run(model, max(tol_k, LOOSE * model.r_max / (1.0 - g)))
    c = float(first.max() + first.min()) / 2
    shifted = _with_rewards(model, model.R - (1.0 - g) * c)
    rewards = 2 * _UNIT * (shifted.r_max + (1.0 - g) * abs(c)) / (1.0 - g)
    result = 1.01 * _UNIT * (model.r_max / (1.0 - g) + abs(c))  # rounding of v' + c, a priori
    v, bound = run(shifted, tol_k - rewards - result)
    out = v + c
    bound += rewards + 1.01 * _UNIT * float(np.abs(out).max(initial=0.0))
    return _back(out, bound, k, g)


def _back(v: np.ndarray, bound: float, k: int, gamma: float) -> tuple[np.ndarray, float]:
    """``(2^-k v, 2^-k bound)`` plus the underflow of scaled rewards and values."""
    if not k:
        return v, bound
    underflow = _TINY / (1.0 - gamma) + _TINY  # a reward rounded to 0, then a value
    return np.ldexp(v, -k), float(np.ldexp(bound, -k)) + float(np.ldexp(underflow, -k)) + _TINY
