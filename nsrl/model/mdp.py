"""Finite Markov decision processes: successor lists, R[s, a], gamma, features, start distribution.

Transitions are stored sparsely (:mod:`nsrl.model.transitions`): memory O(S A b) for b
successors per state-action pair. The dense ``P[s, a, s']`` is a view made on request, for
models small enough to hold it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nsrl.model import files, transitions
from nsrl.model.arrays import as_array, real_array
from nsrl.model.checks import SUM_TOL, check_distribution, normalise, rows_off
from nsrl.model.memory import check_memory, format_bytes
from nsrl.model.toytext import toy_text_arrays

__all__ = ["FiniteMDP", "check_distribution"]


def _check_dense_size(shape: tuple[int, ...]) -> None:
    n = int(np.prod(shape, dtype=np.float64))
    check_memory(16.0 * n, f"a dense P of shape {shape} ({format_bytes(8.0 * n)})",
                 "build the model from successor lists or a scipy.sparse matrix instead: "
                 "FiniteMDP.from_successors(next_states, probs, R, gamma) or "
                 "FiniteMDP.from_sparse(P, R, gamma)")


class FiniteMDP:
    """A finite MDP (S, A, P, R, gamma) with optional linear features and start distribution.

    Args:
        P: transition probabilities as a dense array of shape (n_states, n_actions,
            n_states), ``P[s, a, s']``. For large models use :meth:`from_successors` or
            :meth:`from_sparse`, which never hold S^2 A numbers.
        R: expected rewards, shape (n_states, n_actions); a state reward is R with equal
            columns (or pass a vector of shape (n_states,)).
        gamma: discount factor in (0, 1).
        features: optional feature matrix Phi of shape (n_states, p).
        start: optional start distribution nu over states (uniform if omitted).

    Each row ``P[s, a, :]`` (and ``start``) must sum to 1 within
    :data:`nsrl.model.checks.SUM_TOL` (1e-4); a row within it is divided by its sum, so
    the model is the exactly normalised one (:mod:`nsrl.model.checks` says why and what is
    left). Arrays are copied and made read-only, so an instance never changes; derived
    quantities (v*, the dense or CSR views of P) are cached on it. The transitions are kept
    as successor lists (:attr:`successors`, O(S A b) memory).

    Examples:
        >>> import numpy as np
        >>> mdp = FiniteMDP(np.ones((2, 1, 2)) / 2, np.array([0.0, 1.0]), gamma=0.5)
        >>> mdp.n_states, mdp.n_actions, mdp.state_reward, mdp.branching
        (2, 1, True, 2)
    """

    def __init__(self, P: npt.ArrayLike, R: npt.ArrayLike, gamma: float,
                 features: npt.ArrayLike | None = None,
                 start: npt.ArrayLike | None = None) -> None:
        P = as_array("P", P)
        if P.ndim == 3:
            _check_dense_size(P.shape)
        P = real_array("P", P, 3, bytes_per_entry=0)  # _check_dense_size counted the work
        n_states, n_actions, n_next = P.shape
        if n_next != n_states or n_states == 0 or n_actions == 0:
            raise ValueError(
                f"P should have shape (n_states, n_actions, n_states) with n_states, n_actions"
                f" >= 1, got {P.shape}."
            )
        if np.any(P < 0):
            s, a, t = (int(i) for i in np.argwhere(P < 0)[0])
            raise ValueError(f"P has a negative entry P[{s}, {a}, {t}] = {P[s, a, t]:.6g}.")
        sums = P.sum(axis=2)
        bad = np.argwhere(rows_off(sums))
        if len(bad):
            s, a = (int(i) for i in bad[0])
            raise ValueError(
                f"P[{s}, {a}, :] sums to {sums[s, a]:.10g}, not 1 ({len(bad)} rows are off by "
                f"more than {SUM_TOL:g}); each P[s, a, :] must be a probability distribution "
                f"over next states."
            )
        normalise(P, sums)  # rows within SUM_TOL: their sums divided out (nsrl.model.checks)
        nxt, probs = transitions.dense_to_successors(P)
        self._setup(nxt, probs, R, gamma, features, start)
        P.flags.writeable = False
        self.__dict__["P"] = P  # the given dense array is the cached dense view

    @classmethod
    def from_successors(cls, next_states: npt.ArrayLike, probs: npt.ArrayLike,
                        R: npt.ArrayLike, gamma: float, features: npt.ArrayLike | None = None,
                        start: npt.ArrayLike | None = None) -> FiniteMDP:
        """Build a model from successor lists, in O(S A b) memory.

        Args:
            next_states: ints of shape (n_states, n_actions, b): the successors of (s, a)
                (or (n_states, n_actions) for one successor each).
            probs: floats of the same shape: their probabilities (each row sums to 1; a
                state listed twice in a row has its probabilities added).
            R: expected rewards, as for :class:`FiniteMDP`.
            gamma: discount factor in (0, 1).
            features: optional feature matrix Phi (n_states, p).
            start: optional start distribution (uniform if omitted).

        Raises:
            ValueError: naming the first bad row (s, a): an index out of range, a negative
                or NaN probability, a row whose sum is further than
                :data:`nsrl.model.checks.SUM_TOL` from 1 (a row within it is divided by its
                sum, :mod:`nsrl.model.checks`).

        Examples:
            >>> mdp = FiniteMDP.from_successors([[[1]], [[0]]], [[[1.0]], [[1.0]]], [0, 1], 0.9)
            >>> mdp.successors[0][:, 0, 0], mdp.n_states
            (array([1, 0]), 2)
        """
        nxt, probs = transitions.check_successors(next_states, probs)
        self = cls.__new__(cls)
        self._setup(*transitions.canonical(nxt, probs), R, gamma, features, start)
        return self

    @classmethod
    def from_sparse(cls, P: object, R: npt.ArrayLike, gamma: float,
                    features: npt.ArrayLike | None = None,
                    start: npt.ArrayLike | None = None) -> FiniteMDP:
        """Build a model from a scipy.sparse P, in O(nnz) memory.

        Args:
            P: a scipy.sparse matrix of shape (n_states * n_actions, n_states), row
                ``s * n_actions + a``; or a list of n_actions matrices of shape
                (n_states, n_states), one per action (mdptoolbox's layout), dense or sparse.
            R: expected rewards, as for :class:`FiniteMDP`.
            gamma: discount factor in (0, 1).
            features: optional feature matrix Phi (n_states, p).
            start: optional start distribution (uniform if omitted).

        Raises:
            ValueError: a shape that is not one of the above, or a row (s, a) with a
                negative or NaN entry or whose sum is further than
                :data:`nsrl.model.checks.SUM_TOL` from 1 (named in the message; a row within
                it is divided by its sum).
        """
        csr, n_states, n_actions = transitions.sparse_to_csr(P)
        transitions.check_sparse(csr, n_states, n_actions)
        nxt, probs = transitions.from_csr(csr, n_states, n_actions)  # new arrays
        self = cls.__new__(cls)
        self._setup(nxt, normalise(probs), R, gamma, features, start)
        return self

    def _setup(self, nxt: np.ndarray, probs: np.ndarray, R: npt.ArrayLike, gamma: float,
               features: npt.ArrayLike | None, start: npt.ArrayLike | None,
               feature_draw: files.FeatureDraw | None = None) -> None:
        n_states, n_actions, _ = nxt.shape
        R = real_array("R", R)
        if R.ndim == 1:
            R = np.repeat(R[:, None], n_actions, axis=1)
        if R.shape != (n_states, n_actions):
            raise ValueError(
                f"R should have shape ({n_states}, {n_actions}) (or ({n_states},) for a state "
                f"reward), got {R.shape}."
            )
        if isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.floating)):
            raise TypeError(f"gamma should be a float in (0, 1), got {type(gamma).__name__}.")
        if not 0.0 < float(gamma) < 1.0:
            raise ValueError(f"gamma should be in (0, 1), got {gamma}; e.g. gamma=0.99.")
        if features is not None:
            features = real_array("features", features, 2)
            if features.shape[0] != n_states:
                raise ValueError(
                    f"features should have {n_states} rows (one per state), got shape "
                    f"{features.shape}."
                )
        if start is None:
            start = np.full(n_states, 1.0 / n_states)
        start = check_distribution("start", start, n_states)
        for arr in (nxt, probs, R, start) + ((features,) if features is not None else ()):
            arr.flags.writeable = False
        self._successors = (nxt, probs)
        self.R, self.gamma, self.start = R, float(gamma), start
        self._features, self._feature_draw = features, feature_draw
        self.n_states, self.n_actions = n_states, n_actions

    @property
    def features(self) -> np.ndarray | None:
        """The feature matrix Phi (n_states, p), or None.

        A Garnet's Phi larger than 64 MiB is drawn from its instance seed on first read
        (the same numbers as an eager draw), after a memory check naming ``n_features``.
        """
        if self._features is None and self._feature_draw is not None:
            phi = self._feature_draw.draw()
            phi.flags.writeable = False
            self._features = phi
        return self._features

    @property
    def n_features(self) -> int | None:
        """p, the number of features (without drawing lazily drawn features), or None."""
        if self._features is not None:
            return int(self._features.shape[1])
        return None if self._feature_draw is None else self._feature_draw.n_features

    @property
    def successors(self) -> tuple[np.ndarray, np.ndarray]:
        """The transitions ``(next_states[s, a, j], probs[s, a, j])``, j < :attr:`branching`.

        Canonical form: per row the successors of positive probability by increasing
        state, padded with probability 0 (pointing to state 0), so a batched expectation is
        ``(probs * v[next_states]).sum(-1)``.
        """
        return self._successors

    @property
    def branching(self) -> int:
        """The width of :attr:`successors`: the most successors of any (s, a)."""
        return int(self._successors[0].shape[2])

    @cached_property
    def P(self) -> np.ndarray:  # noqa: N802 - the paper's name
        """The dense ``P[s, a, s']`` (made on first use; refused if it does not fit)."""
        _check_dense_size((self.n_states, self.n_actions, self.n_states))
        P = transitions.to_dense(*self._successors)
        P.flags.writeable = False
        return P

    @cached_property
    def P_csr(self) -> sp.csr_matrix:  # noqa: N802 - the paper's name
        """P as a scipy.sparse CSR matrix of shape (n_states n_actions, n_states).

        Row ``s * n_actions + a`` is the distribution of the next state after (s, a).
        """
        return transitions.to_csr(*self._successors)

    def __repr__(self) -> str:
        return (
            f"FiniteMDP(n_states={self.n_states}, n_actions={self.n_actions}, "
            f"gamma={self.gamma}, n_features={self.n_features})"
        )

    @cached_property
    def state_reward(self) -> bool:
        """True when R[s, a] does not depend on a (the paper's r(s))."""
        return bool(np.all(self.R == self.R[:, :1]))

    @cached_property
    def terminal_value(self) -> np.ndarray:
        """Value v_empty of the empty policy: r for a state reward, 0 otherwise."""
        v = self.R[:, 0].copy() if self.state_reward else np.zeros(self.n_states)
        v.flags.writeable = False
        return v

    @cached_property
    def r_max(self) -> float:
        """``R_max = max |R|``, so that every value is bounded by R_max / (1 - gamma)."""
        return float(np.abs(self.R).max())

    @cached_property
    def row_error(self) -> float:
        """A bound on ``|sum_j probs[s, a, j] - 1|`` over the stored rows, summed exactly.

        Rows are divided by their sums when built (:mod:`nsrl.model.checks`) unless within
        rounding of 1; what is left is this (a Garnet's rows: at most a few 1e-16). The
        certificates of v* add ``gamma row_error |v|`` to their rounding term, so that they
        hold for the exactly normalised model. Measured once per model, by compensated
        sums (Knuth's TwoSum: each row's sum to about u^2), in blocks of rows.
        """
        return transitions.row_error(self._successors[1])

    def save(self, path: str | Path) -> Path:
        """Write the MDP to ``path`` as .npz (no pickle), atomically; return the path written.

        A name without the ``.npz`` suffix gets it (as numpy does). The file holds the
        successor lists (keys ``next_states``, ``probs``), ``R``, ``gamma``, ``start`` and
        ``features`` (or, for a large lazily drawn Phi, the recipe that draws it). An
        existing file is replaced only once the new one is complete.
        """
        return files.save_mdp(self, path)

    @classmethod
    def load(cls, path: str | Path) -> FiniteMDP:
        """Read an MDP written by :meth:`save` (never unpickles; sizes checked before reading).

        ``path`` may omit the ``.npz`` suffix. Files of earlier versions (a dense ``P``) load.
        """
        return files.load_mdp(cls, path)

    @classmethod
    def from_gymnasium(cls, env: object, gamma: float = 0.99,
                       start: npt.ArrayLike | None = None) -> FiniteMDP:
        """Read a Gymnasium toy_text model (FrozenLake, Taxi, CliffWalking): nsrl.model.toytext.

        Terminal states become absorbing with zero reward; the start distribution is the
        env's ``initial_state_distrib`` unless ``start`` is given.
        """
        P, R, start = toy_text_arrays(env, start)
        return cls(P, R, gamma, start=start)

    @classmethod
    def _from_parts(cls, nxt: np.ndarray, probs: np.ndarray, R: npt.ArrayLike, gamma: float,
                    features: npt.ArrayLike | None = None, start: npt.ArrayLike | None = None,
                    feature_draw: files.FeatureDraw | None = None) -> FiniteMDP:
        """Trusted constructor for canonical successor lists made inside nsrl.model."""
        self = cls.__new__(cls)
        self._setup(nxt, probs, R, gamma, features, start, feature_draw)
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FiniteMDP):
            return NotImplemented
        if (self.n_states, self.n_actions, self.gamma, self.n_features) != (
                other.n_states, other.n_actions, other.gamma, other.n_features):
            return False
        same_draw = self._feature_draw is not None and self._feature_draw == other._feature_draw
        same_features = same_draw or (
            (self.features is None and other.features is None)
            or (self.features is not None and other.features is not None
                and np.array_equal(self.features, other.features)))
        return (
            all(np.array_equal(x, y)
                for x, y in zip(self.successors, other.successors, strict=True))
            and np.array_equal(self.R, other.R)
            and np.array_equal(self.start, other.start)
            and same_features
        )

    __hash__ = object.__hash__
