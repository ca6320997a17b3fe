"""Checks shared by the model layer."""

from __future__ import annotations

import numpy as np

from nsrl.model.arrays import as_array, real_array


def check_distribution(name: str, x, n_states: int) -> np.ndarray:
    """``x`` as a new probability vector over ``n_states`` states, or ValueError/TypeError."""
    d = as_array(name, x)
    if d.shape != (n_states,):
        raise ValueError(f"{name} should have shape ({n_states},), got {d.shape}.")
    d = real_array(name, d, 1)
    if np.any(d < 0):
        raise ValueError(f"{name} should be non-negative, got {d[d < 0][0]:.6g} at index "
                         f"{int(np.argmax(d < 0))}.")
    total = d.sum()
    if abs(total - 1.0) > 1e-8:
        raise ValueError(f"{name} should sum to 1, got {total:.10g}; normalise it (x / x.sum()).")
    return d
