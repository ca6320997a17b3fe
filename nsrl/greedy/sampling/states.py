"""States as objects: what an env hands out in ``info["state"]`` and takes back in a reset.

A state is put back with ``reset(options={"state": s})``. A finite model's states are ints
(the fast special case: int64 arrays, bincounts); a simulator's are objects (a Tetris board
and piece, a car's position and speed): arrays, bytes, tuples. A batch of them is a 1-d array,
of int64 for ints and of objects otherwise, so that indexing, ``np.repeat`` and thinning work
alike; repeated states are found by a key (:func:`state_key`) rather than by sorting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeGuard

import numpy as np


def is_index(state: object) -> TypeGuard[int | np.integer]:
    """Whether ``state`` is a model's state index (an int, not a bool)."""
    return isinstance(state, (int, np.integer)) and not isinstance(state, (bool, np.bool_))


def as_states(states: Iterable[Any]) -> np.ndarray:
    """A batch of states as a 1-d array: int64 for indices, objects otherwise.

    Examples:
        >>> as_states([3, 1]).dtype, as_states([(1, 2), (3, 4)]).shape
        (dtype('int64'), (2,))
    """
    items = list(states)
    if all(is_index(s) for s in items):
        return np.asarray(items, dtype=np.int64)
    out = np.empty(len(items), dtype=object)
    for i, s in enumerate(items):  # one by one: numpy would unpack tuples and arrays
        out[i] = s
    return out


def state_key(state: object) -> Any:
    """A hashable key equal for equal states (arrays by dtype, shape and bytes)."""
    if isinstance(state, np.ndarray):
        return (state.dtype.str, state.shape, state.tobytes())
    if isinstance(state, (list, tuple)):
        return tuple(state_key(s) for s in state)
    if is_index(state):
        return int(state)
    return state


def same_state(a: object, b: object) -> bool:
    """Whether two states are equal (arrays elementwise)."""
    return state_key(a) == state_key(b)


def unique_states(states: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(first index of each distinct state, inverse)``, distinct states in order of first sight.

    Examples:
        >>> first, inverse = unique_states(as_states([(0, 1), (2, 3), (0, 1)]))
        >>> first.tolist(), inverse.tolist()
        ([0, 1], [0, 1, 0])
    """
    seen: dict[Any, int] = {}
    first: list[int] = []
    inverse = np.empty(len(states), dtype=np.int64)
    for i, s in enumerate(states):
        key = state_key(s)
        j = seen.get(key)
        if j is None:
            j = seen[key] = len(first)
            first.append(i)
        inverse[i] = j
    return np.asarray(first, dtype=np.int64), inverse
