"""No silent wrong number: refuse problems float64 cannot solve accurately, and impossible losses.

Two limits, checked before any work:

- ``gamma <= GAMMA_MAX`` (:data:`nsrl.exact.operators.GAMMA_MAX`, which the exact backend
  enforces too): the largest discount whose values the exact backend certifies. The solves
  (I - gamma P_pi) v = r have condition number up to (1 + gamma) / (1 - gamma), and the
  Bellman residual that certifies them rounds by ~eps R_max / (1 - gamma); at
  1 - gamma = 1e-12 a Garnet's losses came out as +-1e10, some negative.
- ``R_max / (1 - gamma) <= VALUE_MAX``: values (and sums of n_S of them) must stay far from
  float64's overflow at 1.8e308, or losses come out inf or NaN.

And one check after the work: a loss mu (v* - v_pi) is never negative (v* dominates every
policy's value) and always finite. :func:`check_losses` refuses any result that is not, with a
tolerance of 1e-9 of the value scale R_max / (1 - gamma) for rounding. Where no model gives the
loss, :func:`check_scores` refuses Monte-Carlo scores that are not finite numbers of games.
"""

from __future__ import annotations

import numpy as np

from nsrl.exact.operators import GAMMA_MAX

__all__ = ["GAMMA_MAX", "VALUE_MAX", "InaccurateResult", "check_losses", "check_problem",
           "check_scores"]
VALUE_MAX = 1e150
_RELATIVE_TOLERANCE = 1e-9


class InaccurateResult(ValueError):
    """Losses that cannot be right (negative or not finite): never printed or stored."""


def check_problem(gamma: float, r_max: float, what: str) -> None:
    """Raise ValueError if ``gamma`` or the value scale ``r_max / (1 - gamma)`` is unsafe.

    Args:
        gamma: the discount factor.
        r_max: max |R| of the model.
        what: names the problem in the message, e.g. ``"--mdp model.npz"``.

    Examples:
        >>> check_problem(0.99, 1.0, "x")
        >>> check_problem(1 - 1e-12, 1.0, "x")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: x: gamma 0.999999999999 is too close to 1 ...
    """
    if gamma > GAMMA_MAX:
        raise ValueError(f"{what}: gamma {gamma!r} is too close to 1 for certified exact "
                         f"solves (their rounding grows like 1e-16 / (1 - gamma)); use gamma <= "
                         f"{GAMMA_MAX!r}.")
    scale = r_max / (1 - gamma)
    if not np.isfinite(scale) or scale > VALUE_MAX:
        raise ValueError(f"{what}: rewards up to R_max = {r_max:.3g} give values up to "
                         f"R_max / (1 - gamma) = {scale:.3g}, too close to float64's overflow "
                         f"(values are kept below {VALUE_MAX:.0e}); rescale the rewards (the "
                         f"greedy policies and relative losses do not change).")


def check_losses(losses, gamma: float, r_max: float, what: str) -> None:
    """Raise :class:`InaccurateResult` if a loss is not finite or is negative beyond rounding.

    Args:
        losses: array of losses mu (v* - v_pi).
        gamma: the model's discount.
        r_max: the model's max |R| (with gamma, the value scale).
        what: names the result in the message, e.g. ``"API's losses"``.
    """
    losses = np.asarray(losses, dtype=np.float64)
    bad_finite = ~np.isfinite(losses)
    tolerance = _RELATIVE_TOLERANCE * max(r_max, 1e-300) / (1 - gamma)
    negative = np.isfinite(losses) & (losses < -tolerance)
    if bad_finite.any() or negative.any():
        found = []
        if bad_finite.any():
            found.append(f"{int(bad_finite.sum())} not finite")
        if negative.any():
            found.append(f"{int(negative.sum())} negative (down to "
                         f"{losses[negative].min():.3g})")
        raise InaccurateResult(
            f"{what} are not accurate ({', '.join(found)} of {losses.size}; a loss is finite "
            f"and >= 0): the model's scale (gamma {gamma!r}, R_max {r_max:.3g}) is beyond "
            f"float64's accuracy; lower gamma or rescale the rewards.")


def check_scores(columns: dict, what: str) -> None:
    """Raise :class:`InaccurateResult` unless every score and interval is finite, with games.

    Args:
        columns: a shard's ``score``, ``score_ci`` and ``games`` columns (a domain without a
            model: :mod:`nsrl.experiments.quality`).
        what: names the result in the message, e.g. ``"the scores of shard m000"``.
    """
    score, ci = (np.asarray(columns[k], dtype=np.float64) for k in ("score", "score_ci"))
    bad = ~np.isfinite(score) | ~np.isfinite(ci) | (ci < 0) | (np.asarray(columns["games"]) < 1)
    if bad.any():
        raise InaccurateResult(
            f"{what} are not usable ({int(bad.sum())} of {bad.size} not finite, with a negative "
            f"interval or no game): the domain's env or estimate returned them; fix its rewards "
            f"or its estimate (a Score(mean, ci, games) of finite numbers, games >= 1).")
