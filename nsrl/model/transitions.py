"""Transition models as successor lists: validation, canonical form, sparse and dense views.

A finite MDP's transitions are stored as two arrays of shape (n_states, n_actions, width),
``next_states[s, a, j]`` and ``probs[s, a, j]``: the successors of (s, a) and their
probabilities. Memory is O(S A b) for b successors per pair, never O(S^2 A).

The canonical form, which every FiniteMDP holds whatever it was built from: in each row the
successors with positive probability come first, by increasing next state, each state at
most once; the row is padded to ``width`` (the largest number of successors of any row) with
``(next_state 0, prob 0.0)``. This is the layout the dense ``P[s, a, s']`` of earlier
versions produced, so models and every sum over successors are the same, bit for bit.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nsrl.model.arrays import as_array, check_copy_memory, index_array, real_array
from nsrl.model.checks import SUM_TOL, normalise, rows_off
from nsrl.model.memory import check_memory

# Peak bytes per successor entry while checking and canonicalising user lists: the copies
# (16), the masks and row sums of the checks, and a sort into canonical form (~5 arrays).
_BYTES_PER_SUCCESSOR = 64


def _first_bad(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0])


def check_successors(next_states: npt.ArrayLike, probs: npt.ArrayLike,
                     n_states: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Validate successor lists and return new (int64, float64) arrays of one shape.

    The caller's arrays are copied once (after a memory check: a broadcast view is copied in
    full), never kept nor made read-only.

    Args:
        next_states: integer array (n_states, n_actions, width).
        probs: float array of the same shape, each row a distribution over its successors.
        n_states: the number of states (default: next_states.shape[0]).

    Raises:
        ValueError: naming the first offending row (s, a): a shape mismatch, a next state out
            of range, a negative or non-finite probability, or a row whose sum is further
            than :data:`nsrl.model.checks.SUM_TOL` from 1 (a row within it is divided by its
            sum: :func:`nsrl.model.checks.normalise`); a ragged list; more memory than is
            available.
        TypeError: non-integer next states, complex or non-numeric probabilities.
    """
    nxt, probs = as_array("next_states", next_states), as_array("probs", probs)
    if nxt.ndim == 2 and probs.ndim == 2:  # one successor per pair: (S, A)
        nxt, probs = nxt[:, :, None], probs[:, :, None]
    if nxt.ndim != 3 or nxt.shape != probs.shape or min(nxt.shape) == 0:
        raise ValueError(
            f"next_states and probs should both have shape (n_states, n_actions, width) with "
            f"every size >= 1, got {nxt.shape} and {probs.shape}."
        )
    # Before any copy: the copies, the masks of the checks and the canonical form.
    check_copy_memory("next_states and probs", nxt.shape, _BYTES_PER_SUCCESSOR)
    nxt, probs = index_array("next_states", nxt, bytes_per_entry=0), \
        real_array("probs", probs, bytes_per_entry=0)
    n = nxt.shape[0] if n_states is None else n_states
    bad = (nxt < 0) | (nxt >= n)
    if bad.any():
        s, a, j = _first_bad(bad)
        raise ValueError(f"next_states[{s}, {a}, {j}] = {nxt[s, a, j]} is not a state in "
                         f"[0, {n}); successors must index the model's states.")
    bad = probs < 0
    if bad.any():
        s, a, j = _first_bad(bad)
        raise ValueError(f"probs[{s}, {a}, {j}] = {float(probs[s, a, j])}: probabilities must be "
                         f"non-negative (row s={s}, a={a}).")
    sums = probs.sum(axis=2)
    bad = rows_off(sums)
    if bad.any():
        s, a = _first_bad(bad)
        raise ValueError(f"the successors of (s={s}, a={a}) have probabilities summing to "
                         f"{sums[s, a]:.10g}, not 1 ({int(bad.sum())} rows are off by more "
                         f"than {SUM_TOL:g}); each row must be a probability distribution over "
                         f"next states.")
    return nxt, normalise(probs, sums)


_ROW_BLOCK = 2**18  # rows per block of row_error (a few MiB of temporaries)


def row_error(probs: np.ndarray) -> float:
    """``max |sum_j probs[..., j] - 1|`` over the rows, with the sums computed exactly.

    Knuth's TwoSum carries each addition's rounding error, so ``s + e`` is the row's sum to
    within about ``b^2 u^2``; ``s - 1`` is exact (Sterbenz) for s in [1/2, 2]. The bound
    returned adds ``4 b^2 u^2 + u |deviation|`` for what remains.
    """
    unit = float(np.finfo(np.float64).eps) / 2
    flat = probs.reshape(-1, probs.shape[-1])
    worst = 0.0
    for start in range(0, flat.shape[0], _ROW_BLOCK):
        block = flat[start:start + _ROW_BLOCK]
        s, err = block[:, 0].copy(), np.zeros(block.shape[0])
        for j in range(1, block.shape[1]):
            x = block[:, j]
            t = s + x
            back = t - s
            err += (s - (t - back)) + (x - back)  # TwoSum: s + x = t + this, exactly
            s = t
        worst = max(worst, float(np.abs((s - 1.0) + err).max(initial=0.0)))
    width = probs.shape[-1]
    return worst * (1 + 2 * unit) + 4 * width * width * unit * unit


def _is_canonical(nxt: np.ndarray, probs: np.ndarray) -> bool:
    positive = probs > 0
    if nxt.shape[2] > 1:
        # positives first, strictly increasing states among them, padding (0, 0.0) after
        if np.any(~positive[..., :-1] & positive[..., 1:]):
            return False
        both = positive[..., :-1] & positive[..., 1:]
        if np.any(both & (nxt[..., 1:] <= nxt[..., :-1])):
            return False
    if np.any(~positive & (nxt != 0)) or np.any(positive.sum(axis=2).max() != nxt.shape[2]):
        return False
    return True


def canonical(nxt: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The canonical form (module docstring) of validated successor lists.

    Already canonical input (e.g. a Garnet's) is returned as is; otherwise rows are sorted,
    repeated next states merged (their probabilities summed) and zeros moved to the padding.
    """
    if _is_canonical(nxt, probs):
        return nxt, probs
    n_states, n_actions, width = nxt.shape
    rows = np.repeat(np.arange(n_states * n_actions), width)
    csr = sp.csr_matrix((probs.ravel(), (rows, nxt.ravel())),
                        shape=(n_states * n_actions, n_states))
    return from_csr(csr, n_states, n_actions)


def from_csr(csr: sp.csr_matrix, n_states: int, n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """Successor lists in canonical form from a (n_states n_actions, n_states) sparse matrix."""
    csr = sp.csr_matrix(csr, dtype=np.float64, copy=True)
    csr.sum_duplicates()
    csr.eliminate_zeros()
    csr.sort_indices()
    counts = np.diff(csr.indptr)
    width = max(int(counts.max(initial=0)), 1)
    row = np.repeat(np.arange(n_states * n_actions), counts)
    j = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], counts)
    nxt = np.zeros((n_states * n_actions, width), dtype=np.int64)
    probs = np.zeros((n_states * n_actions, width))
    nxt[row, j] = csr.indices
    probs[row, j] = csr.data
    return nxt.reshape(n_states, n_actions, width), probs.reshape(n_states, n_actions, width)


def dense_to_successors(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Canonical successor lists of a dense P[s, a, s'] (the positive entries, by state)."""
    nnz = (P > 0).sum(axis=2)
    width = max(int(nnz.max()), 1)
    order = np.argsort(P <= 0, axis=2, kind="stable")[:, :, :width]
    probs = np.take_along_axis(P, order, axis=2)
    return np.where(probs > 0, order, 0).astype(np.int64), probs


def sparse_to_csr(P: object, n_states: int | None = None) -> tuple[sp.csr_matrix, int, int]:
    """A user's sparse transition model as one CSR matrix of shape (S A, S).

    Accepts a scipy.sparse matrix or array of shape (S A, S) (row ``s * n_actions + a``), or
    a sequence of n_A matrices of shape (S, S) (mdptoolbox's layout: one per action, dense or
    sparse). Returns ``(csr, n_states, n_actions)``.
    """
    if sp.issparse(P):
        # scipy-stubs: issparse narrows to SparseABC, which declares none of a matrix's API;
        # P is not converted before _check_sparse_input has checked what converting costs.
        sparse: Any = P
        rows, cols = sparse.shape
        if cols == 0 or rows == 0 or rows % cols:
            raise ValueError(f"a sparse P should have shape (n_states * n_actions, n_states) with "
                             f"n_states, n_actions >= 1, row s * n_actions + a; got "
                             f"{sparse.shape}.")
        _check_sparse_input("P", sparse, rows)
        return sp.csr_matrix(sparse, dtype=np.float64), cols, rows // cols
    if isinstance(P, (list, tuple)) and P:
        for a, m in enumerate(P):
            if sp.issparse(m):
                _check_sparse_input(f"P[{a}]", m, m.shape[0])  # type: ignore[attr-defined]
            else:
                m = as_array(f"P[{a}]", m)
                check_copy_memory(f"P[{a}]", m.shape, 16.0)
        mats = [sp.csr_matrix(m, dtype=np.float64) for m in P]
        n = mats[0].shape[0]
        if n == 0 or any(m.shape != (n, n) for m in mats):
            raise ValueError(f"a per-action P should be n_actions matrices of shape (S, S) with "
                             f"S >= 1, got shapes {[m.shape for m in mats]}.")
        stacked = sp.vstack(mats, format="csr")  # row a * S + s
        perm = (np.arange(n)[:, None] + n * np.arange(len(mats))[None, :]).ravel()
        return stacked[perm], n, len(mats)
    raise TypeError(f"expected a scipy.sparse matrix of shape (n_states * n_actions, n_states) "
                    f"or a non-empty list of n_actions (S, S) matrices, got "
                    f"{type(P).__name__}.")


# Peak bytes of the conversion of a user's sparse P to canonical successor lists: per row,
# CSR's indptr and counts, the padded lists (16 per entry of width 1) and their index
# arrays; per stored entry, the CSR copy (12), the sort and the scatter into the lists.
_SPARSE_ROW_BYTES = 64
_SPARSE_ENTRY_BYTES = 48


def _check_sparse_input(name: str, P: Any, rows: int) -> None:
    """Refuse a sparse P before converting it: complex, non-numeric, too large, or empty rows.

    A P with fewer stored entries than rows has an empty row, which sums to 0, not 1.
    """
    if P.dtype.kind == "c":
        raise TypeError(f"{name} holds complex numbers (dtype {P.dtype}); transition "
                        f"probabilities are real: pass {name}.real if the imaginary parts are 0.")
    if P.dtype.kind not in "biuf":
        raise TypeError(f"{name} should hold numbers, got dtype {P.dtype}.")
    if P.nnz < rows:  # counts duplicates too: fewer entries than rows leaves a row empty
        raise ValueError(f"{name} has {P.nnz} stored entries for {rows} rows, so at least one "
                         f"row (s, a) is empty and sums to 0, not 1; each row must be a "
                         f"probability distribution over next states.")
    check_memory(_SPARSE_ROW_BYTES * float(rows) + _SPARSE_ENTRY_BYTES * float(P.nnz),
                 f"converting the sparse {name} of shape {P.shape} with {P.nnz} entries",
                 "use fewer states or actions")


def check_sparse(csr: sp.csr_matrix, n_states: int, n_actions: int) -> None:
    """Refuse a sparse model with negative, non-finite entries or rows not summing to 1.

    Rows within :data:`nsrl.model.checks.SUM_TOL` pass; the caller divides their sums out
    once the model is in successor lists (``csr`` may be the user's own matrix).
    """
    data = csr.data
    bad = ~np.isfinite(data) | (data < 0)
    if bad.any():
        k = int(np.argmax(bad))
        row = int(np.searchsorted(csr.indptr, k, side="right") - 1)
        s, a = divmod(row, n_actions)
        raise ValueError(f"P has entry {float(data[k])} in the row of (s={s}, a={a}) (next state "
                         f"{int(csr.indices[k])}): probabilities must be finite and "
                         f"non-negative.")
    sums = np.asarray(csr.sum(axis=1)).ravel()
    bad = rows_off(sums)
    if bad.any():
        s, a = divmod(int(np.argmax(bad)), n_actions)
        raise ValueError(f"the row of (s={s}, a={a}) of P sums to {sums[s * n_actions + a]:.10g},"
                         f" not 1 ({int(bad.sum())} rows are off by more than {SUM_TOL:g}); "
                         f"each row must be a probability distribution over next states.")


def to_csr(nxt: np.ndarray, probs: np.ndarray) -> sp.csr_matrix:
    """P as a CSR matrix of shape (S A, S), row ``s * n_actions + a`` (padding dropped)."""
    n_states, n_actions, width = nxt.shape
    counts = (probs > 0).sum(axis=2).ravel()
    keep = probs.reshape(-1, width) > 0
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_matrix((probs.reshape(-1, width)[keep], nxt.reshape(-1, width)[keep], indptr),
                         shape=(n_states * n_actions, n_states))


def to_dense(nxt: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The dense P[s, a, s'] of successor lists (padding contributes nothing)."""
    n_states, n_actions, _ = nxt.shape
    P = np.zeros((n_states, n_actions, n_states))
    s, a, _ = np.nonzero(probs > 0)
    P[s, a, nxt[probs > 0]] = probs[probs > 0]
    return P


def check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an int in [low, high], or TypeError / ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} should be an int, got {value!r}.")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} should be {bound}, got {value}.")
    return value
