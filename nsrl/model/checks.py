"""Checks shared by the model layer."""

from __future__ import annotations

import os

import numpy as np


def check_distribution(name: str, x, n_states: int) -> np.ndarray:
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


def available_memory() -> int | None:
    """Bytes of physical memory available now (None where the OS does not say)."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # not POSIX, or the name is unknown
        return None


def check_allocation(nbytes: float, what: str, fix: str) -> None:
    """Refuse (ValueError), before allocating, an array larger than the free memory.

    Args:
        nbytes: the size about to be allocated.
        what: what it is, for the message (e.g. "NSPI(m)'s window of 30 runs").
        fix: how to make it smaller, for the message.
    """
    free = available_memory()
    if free is not None and nbytes > 0.8 * free:
        raise ValueError(f"{what} needs {nbytes / 2**30:,.1f} GiB, more than the "
                          f"{free / 2**30:,.1f} GiB free on this machine; {fix}.")
