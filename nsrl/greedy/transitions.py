"""A bounded FIFO store of transitions, shared by the greedy calls of one run (sample reuse).

LSTD-Q is off-policy: a transition (x, a, r, x') says what the environment does after taking
``a`` in ``x``, whatever policy chose ``a``. So every transition drawn during a run can
serve every later greedy call, whatever its target (stationary, mixture, NSPI's loop,
PSDP's finite sequence). A :class:`TransitionStore` keeps the last ``max_size`` of them
(first in, first out).

For index observations (a Discrete space: the state index, or any finite index), it also
keeps the *sufficient statistics* of what it holds, :class:`IndexCounts`: the visit counts
N(x, a), the reward sums and the transition counts N(x, a, x'). They are updated in
O(batch) when transitions come in or are evicted, so a greedy call with reuse costs
O(S A b) to solve, whatever the number of stored transitions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nsrl.greedy.sampling import Transitions
from nsrl.model.kernels import DEFAULT_BACKEND, numba


class _Running(Protocol):
    """Statistics a store keeps up to date as transitions come and go."""

    def update(self, data: Transitions, weights: npt.ArrayLike | None = None,
               sign: float = 1.0) -> None:
        """Add (``sign`` = 1) or remove (``sign`` = -1) the statistics of ``data``."""


_S = TypeVar("_S", bound=_Running)

# Transition counts are kept dense (one float per (x, a, x')) up to this many entries
# (32 MB), sparse beyond.
DENSE_COUNTS = 1 << 22
# One fused pass over a batch (numba) instead of four np.add.at passes; the same bits.
FUSED = DEFAULT_BACKEND == "numba"

if numba is not None:
    @numba.njit(cache=True, nogil=True)
    def _accumulate(x: np.ndarray, a: np.ndarray, r: np.ndarray, nxt: np.ndarray, done: np.ndarray,
                    w: np.ndarray, sign: float, n_index: int, visits: np.ndarray,
                    rewards: np.ndarray, states: np.ndarray,
                    nexts: np.ndarray) -> None:  # pragma: no cover - compiled
        for i in range(len(x)):
            wi = sign if len(w) == 0 else sign * w[i]
            sa = a[i] * n_index + x[i]
            visits[sa] += wi
            rewards[sa] += wi * r[i]
            states[x[i]] += wi
            if not done[i]:
                nexts[sa * n_index + nxt[i]] += wi


def take(data: Transitions, idx: slice | np.ndarray) -> Transitions:
    """The transitions ``idx`` (a slice or an index array) of ``data``."""
    return Transitions(*(np.asarray(col)[idx] for col in _columns(data)))


def concat(batches: Iterable[Transitions]) -> Transitions:
    """One batch made of ``batches`` in order."""
    parts = list(batches)
    if len(parts) == 1:
        return parts[0]
    return Transitions(*(np.concatenate(cols) for cols in zip(*map(_columns, parts),
                                                                strict=True)))


def _columns(data: Transitions) -> tuple:
    return (data.states, data.obs, data.actions, data.rewards, data.next_states, data.next_obs,
            data.done)


class IndexCounts:
    """Sufficient statistics of transitions whose observations are indices in [0, n_index).

    Pairs are numbered ``a * n_index + x`` (the order of the LSTD-Q parameters).

    Attributes:
        visits: N(x, a), weighted count of transitions from each pair (terminations included).
        rewards: the (weighted) sum of the rewards of each pair.
        states: (weighted) count of transitions leaving each index x (any action).
    """

    def __init__(self, n_index: int, n_actions: int) -> None:
        self.n_index, self.n_actions = int(n_index), int(n_actions)
        n_pairs = self.n_index * self.n_actions
        self.visits, self.rewards = np.zeros(n_pairs), np.zeros(n_pairs)
        self.states = np.zeros(self.n_index)
        self.dense = n_pairs * self.n_index <= DENSE_COUNTS
        # N(x, a, x'): a flat dense array (self.dense), else a CSR matrix (pairs, n_index)
        self._next: Any = np.zeros(n_pairs * self.n_index) if self.dense else \
            sp.csr_matrix((n_pairs, self.n_index))

    def update(self, data: Transitions, weights: npt.ArrayLike | None = None,
               sign: float = 1.0) -> None:
        """Add (``sign`` = 1) or remove (``sign`` = -1) the statistics of ``data``."""
        x, nxt = self.check(data.obs), self.check(data.next_obs)
        n_pairs, a = len(self.visits), np.asarray(data.actions, dtype=np.int64)
        if a.size and (a.min() < 0 or a.max() >= self.n_actions):
            raise ValueError(f"actions should be in [0, {self.n_actions}), got "
                             f"[{a.min()}, {a.max()}].")
        r, done = np.asarray(data.rewards, dtype=float), np.asarray(data.done, dtype=bool)
        if self.dense and FUSED:  # indices were checked above: the kernel does not
            w = np.zeros(0) if weights is None else np.asarray(weights, dtype=float)
            _accumulate(x, a, r, nxt, done, w, float(sign), self.n_index, self.visits,
                        self.rewards, self.states, self._next)
            return
        sa = a * self.n_index + x
        w = np.full(len(x), sign) if weights is None else sign * np.asarray(weights, float)
        live = ~done  # nothing is bootstrapped after a termination
        if self.dense:
            # np.add.at adds in batch order into the running sums, as the fused kernel does,
            # so both give the same bits (bincount would round the batch's sum first).
            np.add.at(self.visits, sa, w)
            np.add.at(self.rewards, sa, w * r)
            np.add.at(self.states, x, w)
            np.add.at(self._next, sa[live] * self.n_index + nxt[live], w[live])
            return
        self.visits += np.bincount(sa, w, minlength=n_pairs)
        self.rewards += np.bincount(sa, w * r, minlength=n_pairs)
        self.states += np.bincount(x, w, minlength=self.n_index)
        shape = (n_pairs, self.n_index)
        self._next = self._next + sp.csr_matrix((w[live], (sa[live], nxt[live])), shape)

    def check(self, obs: npt.ArrayLike) -> np.ndarray:
        """``obs`` as int64 indices, or ValueError if they are not indices in range."""
        obs = np.asarray(obs)
        if obs.ndim != 1 or (obs.size and (obs.min() < 0 or obs.max() >= self.n_index)):
            raise ValueError(
                f"index statistics need observations that are indices in [0, {self.n_index}), "
                f"got an array of shape {obs.shape}; use features that are not a table "
                f"(e.g. features='identity') for vector observations."
            )
        return obs.astype(np.int64, copy=False)

    def next_matrix(self) -> sp.csr_matrix:
        """N(x, a, x') as a sparse (n_index n_actions, n_index) matrix (rows: pairs)."""
        if self.dense:
            return sp.csr_matrix(self._next.reshape(len(self.visits), self.n_index))
        return self._next.tocsr()

    @classmethod
    def of(cls, data: Transitions, n_index: int, n_actions: int,
           weights: npt.ArrayLike | None = None) -> IndexCounts:
        """The statistics of one batch."""
        counts = cls(n_index, n_actions)
        counts.update(data, weights)
        return counts


class TransitionStore:
    """The last ``max_size`` transitions added (FIFO), with their index statistics.

    One store belongs to one run: an operator keeps its store across the greedy calls of
    the run it serves (build a new operator, or call :meth:`clear`, for a new run).

    Args:
        max_size: the most transitions kept; the oldest go first.

    Examples:
        >>> import numpy as np
        >>> store = TransitionStore(max_size=3)
        >>> z = np.zeros(2, dtype=np.int64)
        >>> store.add(Transitions(z, z, z, np.ones(2), z, z, z.astype(bool)))
        >>> store.add(Transitions(z, z, z, np.ones(2), z, z, z.astype(bool)))
        >>> len(store), store.added
        (3, 4)
    """

    def __init__(self, max_size: int = 1_000_000) -> None:
        if isinstance(max_size, bool) or int(max_size) != max_size or max_size < 1:
            raise ValueError(f"max_size should be a positive int (transitions), got "
                             f"{max_size!r}; e.g. TransitionStore(max_size=1_000_000).")
        self.max_size = int(max_size)
        self.clear()

    def __repr__(self) -> str:
        return f"TransitionStore({len(self)} of {self.max_size})"

    def __len__(self) -> int:
        return self._size

    def clear(self) -> None:
        """Forget every transition (e.g. before a new run)."""
        self._chunks: deque[Transitions] = deque()
        self._size, self.added = 0, 0
        self._running: dict = {}  # key -> statistics kept up to date (update(data, sign=))
        self._joined: Transitions | None = None

    def add(self, data: Transitions) -> None:
        """Store ``data``, evicting the oldest transitions beyond ``max_size``."""
        n = len(data.rewards)
        if n > self.max_size:
            raise ValueError(f"a batch of {n} transitions does not fit in a store of "
                             f"max_size={self.max_size}; pass max_size >= {n}.")
        if self._chunks:
            self._check_like(self._chunks[0], data)
        if n == 0:
            return
        for stats in self._running.values():
            stats.update(data)
        self._chunks.append(data)
        self._size, self.added, self._joined = self._size + n, self.added + n, None
        while self._size > self.max_size:
            first, excess = self._chunks[0], self._size - self.max_size
            m = len(first.rewards)
            gone = first if m <= excess else take(first, slice(0, excess))
            if m <= excess:
                self._chunks.popleft()
            else:
                self._chunks[0] = take(first, slice(excess, m))
            for stats in self._running.values():
                stats.update(gone, sign=-1.0)
            self._size -= len(gone.rewards)

    @staticmethod
    def _check_like(old: Transitions, new: Transitions) -> None:
        for name in ("obs", "next_obs"):
            a, b = np.asarray(getattr(old, name)), np.asarray(getattr(new, name))
            if a.shape[1:] != b.shape[1:]:
                raise ValueError(
                    f"these transitions' {name} have shape {b.shape[1:]} per transition, the "
                    f"stored ones {a.shape[1:]}: a store holds one environment's transitions; "
                    f"give each environment (each run) its own TransitionStore."
                )

    def transitions(self) -> Transitions:
        """Everything stored, oldest first, as one batch."""
        if self._joined is None:
            if not self._chunks:
                raise ValueError("the store is empty: add transitions first.")
            self._joined = concat(self._chunks)
            self._chunks = deque([self._joined])
        return self._joined

    def running(self, key: Hashable, make: Callable[[], _S]) -> _S:
        """The statistics ``make()`` of everything stored, kept up to date from now on.

        ``make()`` returns an object with ``update(data, sign=1.0)`` (sign -1: remove
        ``data``); it is built once per ``key`` and updated at every add and eviction.
        """
        if key not in self._running:
            stats = make()
            for chunk in self._chunks:
                stats.update(chunk)
            self._running[key] = stats
        return self._running[key]

    def index_counts(self, n_index: int, n_actions: int) -> IndexCounts:
        """The :class:`IndexCounts` of everything stored; kept up to date from now on."""
        return self.running(("index", int(n_index), int(n_actions)),
                            lambda: IndexCounts(n_index, n_actions))
