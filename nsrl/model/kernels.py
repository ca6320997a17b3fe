"""Batched transition kernel of a FiniteMDP: numba-compiled, with a pure-numpy fallback.

The kernel draws one uniform per transition from the Generator it is given
(``rng.random(n)``, in batch order) and picks the successor by inverse transform sampling on
the sparse successor lists of ``mdp.successors``. Both backends get the same uniforms, read
the same cumulative tables and make the same comparisons, so for the same Generator state
they return the same numbers, bit for bit.

``NSRL_NO_NUMBA=1`` in the environment (read at import) makes the numpy fallback the default;
every function also takes ``backend="numba" | "numpy"`` to choose per call.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from nsrl.model.mdp import FiniteMDP

try:  # numba is a declared dependency; the fallback keeps nsrl usable without it.
    import numba

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - numba is installed in every supported setup
    numba = None
    HAVE_NUMBA = False

BACKENDS = ("numba", "numpy")
_NO_NUMBA = os.environ.get("NSRL_NO_NUMBA", "") not in ("", "0")
DEFAULT_BACKEND = "numba" if HAVE_NUMBA and not _NO_NUMBA else "numpy"

# Keyed by id(): a WeakKeyDictionary would compare keys with FiniteMDP.__eq__ (whole arrays)
# on every lookup. The finalizer drops the entry when the MDP is collected.
_TABLES: dict[int, _Tables] = {}
_PACKED: dict[int, _Packed] = {}


class _Tables(NamedTuple):
    next: np.ndarray  # next_states[s, a, j], int64 (the model's own array)
    cdf: np.ndarray  # cumulative probabilities [s, a, j]
    reward: np.ndarray  # R[s, a], C-contiguous
    cdf_columns: np.ndarray  # cdf[s, a, k] as [k, s * n_actions + a], k < width - 1
    next_flat: np.ndarray  # next_states.ravel() (a view)


_V = TypeVar("_V")


def _cached(cache: dict[int, _V], mdp: FiniteMDP, build: Callable[[FiniteMDP], _V]) -> _V:
    value = cache.get(id(mdp))
    if value is None:
        value = cache[id(mdp)] = build(mdp)
        weakref.finalize(mdp, cache.pop, id(mdp), None)
    return value


def _cdf(probs: np.ndarray) -> np.ndarray:
    """Cumulative successor probabilities, exactly 1.0 from the last positive one on."""
    cdf = np.cumsum(probs, axis=2)
    last = (probs > 0).sum(axis=2, keepdims=True) - 1
    cdf[np.arange(cdf.shape[2]) >= last] = 1.0
    return cdf


def _build_tables(mdp: FiniteMDP) -> _Tables:
    nxt, probs = mdp.successors
    cdf = _cdf(probs)
    width = cdf.shape[2]
    columns = np.ascontiguousarray(cdf.reshape(-1, width)[:, :-1].T)
    arrays = (nxt, cdf, np.ascontiguousarray(mdp.R), columns, nxt.reshape(-1))
    for x in arrays[1:4]:
        x.flags.writeable = False
    return _Tables(*arrays)


class _Packed(NamedTuple):
    records: np.ndarray  # [s * n_actions + a, k], starting on a 64-byte boundary
    flat: np.ndarray  # the same memory, one record after the other (for the prefetch)
    width: int  # b, the successors per (s, a)


_LINE = 64  # bytes in a cache line


def _record_length(width: int) -> int:
    """Doubles per record: 2 b, padded to 2, 4 or 8 doubles (one cache line) when it fits one.

    A record longer than a line spans two or more lines whatever its padding; padding it
    would only enlarge what small models keep in cache.
    """
    need = 2 * width
    if need <= _LINE // 8:
        return 1 << (need - 1).bit_length()
    return need


def _build_packed(mdp: FiniteMDP) -> _Packed:
    """One record per (s, a): cdf[:b-1], the b next states, the reward (padding after).

    At 10^6 states the tables do not fit in cache and a step is bound by memory latency:
    one record per transition is one cache line to fetch instead of three (measured 2.4x
    faster than separate cdf / next-state / reward arrays at 10^6 states, 10 actions, b = 2).
    The records start on a cache-line boundary and those shorter than a line are padded to a
    power of two, so none of them straddles two lines (numpy's large allocations start 16
    bytes into a line, which made half the 32-byte records of b = 2 cost two fetches:
    measured 40 -> 56 M transitions/s).
    Next states are stored exactly as doubles (< 2^53).
    """
    nxt, probs = mdp.successors
    width = nxt.shape[2]
    length = _record_length(width)
    cdf = _TABLES[id(mdp)].cdf if id(mdp) in _TABLES else _cdf(probs)
    n_rows = nxt.shape[0] * nxt.shape[1]
    raw = np.empty(n_rows * length * 8 + _LINE, dtype=np.uint8)
    start = -raw.ctypes.data % _LINE
    flat = raw[start : start + n_rows * length * 8].view(np.float64)
    rec = flat.reshape(n_rows, length)
    rec[:, : width - 1] = cdf.reshape(-1, width)[:, :-1]
    rec[:, width - 1 : 2 * width - 1] = nxt.reshape(-1, width)
    rec[:, 2 * width - 1] = mdp.R.ravel()
    rec[:, 2 * width :] = 0.0
    flat.flags.writeable = rec.flags.writeable = False
    return _Packed(rec, flat, width)


def _tables(mdp: FiniteMDP) -> _Tables:
    return _cached(_TABLES, mdp, _build_tables)


def transition_tables(mdp: FiniteMDP) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(next_states[s, a, j], cdf[s, a, j])``, cached per MDP instance.

    ``cdf`` is the cumulative sum of ``mdp.successors`` probabilities, set to exactly 1.0
    from the last successor with positive probability onwards, so that a uniform u in
    [0, 1) always selects a real successor: the index is the number of entries <= u.
    """
    tables = _tables(mdp)
    return tables.next, tables.cdf


def _step_numpy(mdp: FiniteMDP, states: np.ndarray, actions: np.ndarray, u: np.ndarray,
                out_next: np.ndarray, out_reward: np.ndarray) -> None:
    t = _tables(mdp)
    # Column by column over the (few) successors: 1-d takes are ~4x faster than a 2-d
    # fancy gather followed by a row sum, and the comparisons are the numba kernel's.
    sa = states * t.cdf.shape[1] + actions
    j = np.zeros(states.shape[0], dtype=np.int64)
    for column in t.cdf_columns:
        j += np.take(column, sa) <= u
    j += sa * t.cdf.shape[2]
    np.take(t.next_flat, j, out=out_next)
    np.take(t.reward.ravel(), sa, out=out_reward)


if HAVE_NUMBA:
    from llvmlite import ir
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def _prefetch(typingctx: Any, arr: Any, idx: Any) -> tuple[Any, Callable[..., Any]]:
        """Ask the CPU to start loading ``arr[idx]`` (LLVM's prefetch hint; no effect on values)."""
        sig = numba.types.void(arr, idx)

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            ary = context.make_array(signature.args[0])(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [args[1]],
                                           wraparound=False)
            i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                "llvm.prefetch.p0i8")
            builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(0), i32(1)])
            return context.get_dummy_value()

        return sig, codegen

    _PREFETCH_AHEAD = 16  # transitions whose record is requested before it is read

    @numba.njit(cache=True, nogil=True)
    def _kernel_numba(rec: np.ndarray, flat: np.ndarray, width: int, n_actions: int,
                      states: np.ndarray, actions: np.ndarray, u: np.ndarray,
                      out_next: np.ndarray,
                      out_reward: np.ndarray) -> None:  # pragma: no cover - compiled
        n = states.shape[0]
        length = rec.shape[1]
        # At 10^6 states a step waits on memory: the record of transition i + 16 is requested
        # while transition i is read (measured 30% more transitions per second). Written out
        # in one loop: the same loop split into inlined helpers ran 4x slower.
        for i in range(min(_PREFETCH_AHEAD, n)):
            _prefetch(flat, (states[i] * n_actions + actions[i]) * length)
        for i in range(n):
            if i + _PREFETCH_AHEAD < n:
                ahead = i + _PREFETCH_AHEAD
                _prefetch(flat, (states[ahead] * n_actions + actions[ahead]) * length)
            row = states[i] * n_actions + actions[i]
            # Same rule as the numpy path, j = number of cdf entries <= u; counted without
            # branches because a data-dependent loop exit mispredicts (2-3x slower).
            j = 0
            for k in range(width - 1):
                j += rec[row, k] <= u[i]
            out_next[i] = np.int64(rec[row, width - 1 + j])
            out_reward[i] = rec[row, 2 * width - 1]

    @numba.njit(cache=True, nogil=True)
    def _clocked_numba(rec: np.ndarray, flat: np.ndarray, width: int, n_actions: int,
                       states: np.ndarray, actions: np.ndarray, u: np.ndarray,
                       elapsed: np.ndarray, max_steps: int, out_next: np.ndarray,
                       out_reward: np.ndarray,
                       out_truncated: np.ndarray) -> int:  # pragma: no cover - compiled
        _kernel_numba(rec, flat, width, n_actions, states, actions, u, out_next, out_reward)
        count = 0
        for i in range(states.shape[0]):
            elapsed[i] += 1
            out_truncated[i] = max_steps > 0 and elapsed[i] >= max_steps
            count += out_truncated[i]
        return count

    def _packed(mdp: FiniteMDP) -> _Packed:
        return _cached(_PACKED, mdp, _build_packed)

    def _step_numba(mdp: FiniteMDP, states: np.ndarray, actions: np.ndarray, u: np.ndarray,
                    out_next: np.ndarray, out_reward: np.ndarray) -> None:
        pk = _packed(mdp)
        _kernel_numba(pk.records, pk.flat, pk.width, mdp.n_actions, states, actions, u,
                      out_next, out_reward)


def resolve_backend(backend: str | None) -> str:
    """The kernel backend to use: ``backend`` checked, or the default for None."""
    if backend is None:
        return DEFAULT_BACKEND
    if backend not in BACKENDS:
        raise ValueError(f"backend should be one of {BACKENDS} or None, got {backend!r}.")
    if backend == "numba" and not HAVE_NUMBA:
        raise ValueError("backend='numba' was asked for but numba is not installed; use 'numpy'.")
    return backend


def step_unchecked(mdp: FiniteMDP, states: np.ndarray, actions: np.ndarray,
                   rng: np.random.Generator, out_next: np.ndarray | None = None,
                   out_reward: np.ndarray | None = None,
                   backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Draw one transition per (state, action) pair without validating the inputs.

    For callers that validated once (the vector env's hot path). ``states`` and ``actions``
    must be int64 arrays of equal length with entries in range. ``out_next`` may be
    ``states`` itself (an in-place step).

    Returns:
        ``(next_states, rewards)``: int64 and float64 arrays (``out_*`` if given).
    """
    n: int = states.shape[0]
    if out_next is None:
        out_next = np.empty(n, dtype=np.int64)
    if out_reward is None:
        out_reward = np.empty(n, dtype=np.float64)
    kernel = _step_numba if resolve_backend(backend) == "numba" else _step_numpy
    # Uniforms are drawn by numpy for both backends: bit-identical results, and numba's
    # unboxing of a Generator costs more than the draws themselves at N = 4096.
    kernel(mdp, states, actions, rng.random(n), out_next, out_reward)
    return out_next, out_reward


def step_clocked(mdp: FiniteMDP, states: np.ndarray, actions: np.ndarray,
                 rng: np.random.Generator, elapsed: np.ndarray, max_steps: int | None,
                 backend: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """One step of N episodes with their clocks: the vector env's hot path in one call.

    As ``step_unchecked`` (same uniforms, same successors), and also adds 1 to ``elapsed``
    (int64, in place) and marks the copies whose clock reached ``max_steps`` (None: never).

    Returns:
        ``(next_states, rewards, truncated, n_truncated)``.
    """
    n: int = states.shape[0]
    out_next = np.empty(n, dtype=np.int64)
    out_reward = np.empty(n, dtype=np.float64)
    u = rng.random(n)
    if resolve_backend(backend) == "numba":
        pk = _packed(mdp)
        truncated = np.empty(n, dtype=np.bool_)
        count = _clocked_numba(pk.records, pk.flat, pk.width, mdp.n_actions, states, actions, u,
                               elapsed, -1 if max_steps is None else max_steps, out_next,
                               out_reward, truncated)
        return out_next, out_reward, truncated, int(count)
    _step_numpy(mdp, states, actions, u, out_next, out_reward)
    elapsed += 1
    if max_steps is None:
        truncated = np.zeros(n, dtype=np.bool_)
    else:
        truncated = elapsed >= max_steps
    return out_next, out_reward, truncated, int(np.count_nonzero(truncated))


def step_one(mdp: FiniteMDP, state: int, action: int,
             rng: np.random.Generator) -> tuple[int, float]:
    """One transition from a valid (state, action): the kernel's rule without the batch.

    ``rng.random()`` is the same draw as ``rng.random(1)[0]``, so this gives the same
    numbers as :func:`sample` on a batch of one, for either backend.

    Returns:
        ``(next_state, reward)`` as Python int and float.
    """
    nxt, cdf = transition_tables(mdp)
    j = int(np.count_nonzero(cdf[state, action, :-1] <= rng.random()))
    return int(nxt[state, action, j]), float(mdp.R[state, action])


def _out_of_range(arr: np.ndarray, n: int) -> bool:
    """Whether an int64 array has an entry outside [0, n) (compiled: a step's hot path)."""
    if HAVE_NUMBA:
        return _any_outside(arr, n)
    return bool((arr.view(np.uint64) >= n).any())  # a negative entry, as unsigned, is >= n


if HAVE_NUMBA:

    @numba.njit(cache=True, nogil=True)
    def _any_outside(arr: np.ndarray, n: int) -> bool:  # pragma: no cover - compiled
        for x in arr:
            if x < 0 or x >= n:
                return True
        return False


def check_indices(name: str, x: npt.ArrayLike, n: int, size: int | None = None) -> np.ndarray:
    """Return ``x`` as a 1-d int64 array with entries in [0, n), or raise a clear error."""
    if type(x) is np.ndarray and x.dtype == np.int64 and x.ndim == 1 and (
        size is None or x.shape[0] == size
    ):  # the common case, checked in ~1 us (a vector env's step at N = 4096)
        if x.size and _out_of_range(x, n):
            raise ValueError(f"{name} should be in [0, {n}), got {int(x[(x < 0) | (x >= n)][0])}.")
        return x
    arr = np.asarray(x)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or (size is not None and arr.shape[0] != size):
        want = f"({size},)" if size is not None else "(n,)"
        raise ValueError(f"{name} should be a 1-d array of shape {want}, got shape {arr.shape}.")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"{name} should hold integers, got dtype {arr.dtype}; cast with .astype(int)."
        )
    if arr.size and _out_of_range(arr.astype(np.int64, copy=False), n):
        bad = int(arr[(arr < 0) | (arr >= n)][0])
        raise ValueError(f"{name} should be in [0, {n}), got {bad}.")
    return arr.astype(np.int64, copy=False)


def sample(mdp: FiniteMDP, states: npt.ArrayLike, actions: npt.ArrayLike,
           rng: np.random.Generator, *,
           backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pure batched generative model: ``s' ~ P(. | s, a)`` and reward ``R[s, a]``.

    Args:
        mdp: the model.
        states: int array of shape (n,) (or a scalar), entries in [0, n_states).
        actions: int array of the same shape, entries in [0, n_actions).
        rng: the Generator the n uniforms are drawn from (one per pair, in order).
        backend: "numba", "numpy", or None for the default (numba unless NSRL_NO_NUMBA=1).

    Returns:
        ``(next_states, rewards)``: int64 and float64 arrays of shape (n,).

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(10, 2, 3, seed=0)
        >>> s1, r = sample(mdp, [0, 1], [1, 1], np.random.default_rng(0))
        >>> s1.shape, bool(r[0] == mdp.R[0, 1])
        ((2,), True)
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng should be a numpy Generator, got {type(rng).__name__}.")
    states = check_indices("states", states, mdp.n_states)
    actions = check_indices("actions", actions, mdp.n_actions, size=states.shape[0])
    return step_unchecked(mdp, states, actions, rng, backend=backend)


def start_states(mdp: FiniteMDP, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``n`` start states from ``mdp.start`` (nu) by inverse transform, one uniform each."""
    cdf = np.cumsum(mdp.start)
    idx = np.searchsorted(cdf, rng.random(n), side="right")
    # Rounding can leave cdf[-1] slightly below 1: fall back to the last state with mass.
    last = int(np.flatnonzero(mdp.start > 0)[-1])
    return np.minimum(idx, last).astype(np.int64)
