"""What the structured domains (grid worlds, the discretised mountain car) share.

Argument checks whose messages name the fix, the instance seed, and :func:`with_features`,
which swaps a model's feature matrix (the domains carry their natural coordinates as
features; a study projects on a feature map of them instead).
"""

from __future__ import annotations

import numbers

import numpy as np

from nsrl.model.mdp import FiniteMDP


def as_generator(seed) -> np.random.Generator:
    """The instance seed as a Generator: a non-negative int, a SeedSequence or a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return np.random.Generator(np.random.PCG64(seed))
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return np.random.Generator(np.random.PCG64(int(seed)))
    raise TypeError(f"seed should be a non-negative int or a numpy Generator, got {seed!r}.")


def check_float(name: str, value, low: float, high: float, fix: str, *,
                low_open: bool = False, high_open: bool = False) -> float:
    """``value`` as a float in [low, high] (ends open when asked), else an error naming ``fix``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} should be a float, got {value!r}; {fix}.")
    value = float(value)
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if not np.isfinite(value) or too_low or too_high:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name} should be in {interval}, got {value!r}; {fix}.")
    return value


def check_size(name: str, value, low: int, high: int, fix: str) -> int:
    """``value`` as an int in [low, high], else an error naming ``fix``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} should be an int, got {value!r}; {fix}.")
    if not low <= value <= high:
        raise ValueError(f"{name} should be in [{low}, {high}], got {value}; {fix}.")
    return int(value)


def with_features(mdp: FiniteMDP, features) -> FiniteMDP:
    """The same model (transitions, rewards, gamma, start) with another feature matrix.

    The successor lists are shared, not copied (a FiniteMDP is read-only); R, start and the
    new Phi are copied once, so this costs O(S A + S p).

    Args:
        mdp: the model.
        features: the new Phi, shape (n_states, p) (e.g. a feature map of the coordinates).

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = with_features(nsrl.garnet(10, 2, 1, seed=0), np.ones((10, 1)))
        >>> mdp.n_features
        1
    """
    return FiniteMDP._from_parts(*mdp.successors, mdp.R, mdp.gamma, features=features,
                                 start=mdp.start)
