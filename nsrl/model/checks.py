"""Checks shared by the model layer."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def check_distribution(name: str, x: npt.ArrayLike, n_states: int) -> np.ndarray:
    """Return ``x`` as a probability vector over ``n_states`` states, or raise ValueError."""
    d = np.asarray(x, dtype=np.float64)
    if d.shape != (n_states,):
        raise ValueError(f"{name} should have shape ({n_states},), got {d.shape}.")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError(f"{name} should be non-negative and finite.")
    total = d.sum()
    if abs(total - 1.0) > 1e-8:
        raise ValueError(f"{name} should sum to 1, got {total:.10g}; normalise it (x / x.sum()).")
    return d
