"""One validation path for the arrays a user hands to nsrl: real, finite, integer where indices.

Every array that enters a model (P, the successor lists, R, start, features) or a policy
(a table of actions) goes through :func:`real_array` or :func:`index_array`, which

* refuse what numpy would quietly coerce: complex numbers (numpy drops the imaginary part
  with a warning), strings, ``None`` and other objects, ragged nested lists;
* refuse NaN and infinities, and (for indices) non-integer dtypes;
* check the memory the copy needs before making it (a broadcast view of 10^10 entries holds
  80 bytes; its copy would hold 80 GB);
* copy the data exactly once, so that the caller keeps its arrays (writable, never aliased)
  and nothing the caller does later changes the model.
"""

from __future__ import annotations

import numpy as np

from nsrl.model.memory import check_memory, format_bytes

__all__ = ["as_array", "check_copy_memory", "index_array", "real_array"]


def as_array(name: str, x: object) -> np.ndarray:
    """``x`` as a numpy array *without copying or converting it* (views stay views).

    Raises:
        TypeError: complex numbers, strings, objects (``None``, mixed types).
        ValueError: a ragged nested list (rows of different lengths).
    """
    if hasattr(x, "toarray") and hasattr(x, "nnz"):
        raise TypeError(f"{name} should be a dense array, got a scipy.sparse "
                        f"{type(x).__name__}; for a sparse P use FiniteMDP.from_sparse, "
                        f"elsewhere call .toarray().")
    try:
        arr = np.asarray(x)
    except ValueError as exc:
        if "inhomogeneous" not in str(exc):
            raise
        raise ValueError(f"{name} is a ragged nested list (its rows have different lengths): "
                         f"{name} must be rectangular; pad the short rows (e.g. with "
                         f"probability 0) or pass a numpy array.") from None
    kind = arr.dtype.kind
    if kind == "c":
        raise TypeError(f"{name} holds complex numbers (dtype {arr.dtype}); nsrl takes real "
                        f"numbers only: pass {name}.real if the imaginary parts are 0.")
    if kind not in "biuf":
        raise TypeError(f"{name} should hold numbers, got dtype {arr.dtype} (e.g. "
                        f"{_first_entry(arr)!r}); convert it to a float or int array first.")
    return arr


def _first_entry(arr: np.ndarray) -> object:
    return arr.reshape(-1)[0] if arr.size else None


# Work this small is never refused: reading the available memory costs more than the copy
# (measured: a tenth of the reference loop's time on Garnet(100, 5, 2), one policy a step).
_ALWAYS_FITS = 2**20


def check_copy_memory(name: str, shape: tuple[int, ...], bytes_per_entry: float) -> None:
    """Refuse, before allocating, work of ``bytes_per_entry`` bytes per entry of ``shape``.

    Raises:
        ValueError: the estimate exceeds the memory available now (names ``name`` and shape).
    """
    n = float(np.prod(shape, dtype=np.float64))
    if bytes_per_entry * n <= _ALWAYS_FITS:  # the hot path (a policy a step) reads no /proc
        return
    check_memory(bytes_per_entry * n,
                 f"checking and copying {name} of shape {shape} ({n:.3g} entries, "
                 f"{format_bytes(8.0 * n)} as float64)",
                 "pass smaller arrays (a broadcast view is copied in full)")


def real_array(name: str, x: object, ndim: int | None = None,
               bytes_per_entry: float = 24.0) -> np.ndarray:
    """``x`` as a new, real, finite float64 array (one copy; memory checked first).

    Args:
        name: what ``x`` is, for the messages (``"R"``, ``"features"``).
        x: array-like of real numbers.
        ndim: the number of dimensions wanted, or None for any.
        bytes_per_entry: the caller's peak work per entry (the copy and its checks).

    Raises:
        TypeError: complex, string or object entries.
        ValueError: a ragged list, a wrong number of dimensions, a NaN or infinite entry, or
            more memory than is available.
    """
    arr = as_array(name, x)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} should be a {ndim}-d array, got an array of shape "
                         f"{arr.shape}; see FiniteMDP's docstring for the expected layout.")
    check_copy_memory(name, arr.shape, bytes_per_entry)
    out = np.array(arr, dtype=np.float64, copy=True)
    if not np.isfinite(out).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
        where = ", ".join(map(str, bad))
        raise ValueError(f"{name}[{where}] = {out[bad]} is not finite: {name} has a "
                         f"non-finite entry; replace NaN/inf values.")
    return out


def index_array(name: str, x: object, ndim: int | None = None,
                bytes_per_entry: float = 24.0) -> np.ndarray:
    """``x`` as a new int64 array of indices (one copy; memory checked first).

    Integer dtypes are taken; floats are refused, even integral ones (``np.array([0.5])``
    would otherwise be truncated to 0): cast with ``.astype(int)`` if that is meant.

    Raises:
        TypeError: a non-integer dtype (floats, complex, strings, objects).
        ValueError: a ragged list, a wrong number of dimensions, or too little memory.
    """
    arr = as_array(name, x)
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{name} should hold integers (indices), got dtype {arr.dtype} (e.g. "
                        f"{_first_entry(arr)!r}); cast with .astype(int) if the values are "
                        f"whole numbers.")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} should be a {ndim}-d array, got an array of shape "
                         f"{arr.shape}.")
    check_copy_memory(name, arr.shape, bytes_per_entry)
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} has an entry {int(arr.max())} beyond int64; indices must be "
                         f"states or actions of the model.")
    return np.array(arr, dtype=np.int64, copy=True)
