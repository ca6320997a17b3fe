"""Finite Markov decision processes: P[s, a, s'], R[s, a], gamma, features, start distribution."""

from __future__ import annotations

import zipfile
from functools import cached_property
from pathlib import Path

import numpy as np

from nsrl.model.checks import check_distribution
from nsrl.model.toytext import toy_text_arrays

__all__ = ["FiniteMDP", "check_distribution"]

_ROW_TOL = 1e-8


def _as_float_array(name: str, x, ndim: int) -> np.ndarray:
    arr = np.array(x, dtype=np.float64, copy=True)
    if arr.ndim != ndim:
        raise ValueError(
            f"{name} should be a {ndim}-d array, got an array of shape {arr.shape}; "
            f"see FiniteMDP's docstring for the expected layout."
        )
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name} has a non-finite entry at index {bad}; replace NaN/inf values.")
    return arr


class FiniteMDP:
    """A finite MDP (S, A, P, R, gamma) with optional linear features and start distribution.

    Args:
        P: transition probabilities, shape (n_states, n_actions, n_states), ``P[s, a, s']``.
        R: expected rewards, shape (n_states, n_actions); a state reward is R with equal
            columns (or pass a vector of shape (n_states,)).
        gamma: discount factor in (0, 1).
        features: optional feature matrix Phi of shape (n_states, p).
        start: optional start distribution nu over states (uniform if omitted).

    Arrays are copied and made read-only, so an instance never changes; derived
    quantities (v*, sparse successors) are cached on it.

    Examples:
        >>> import numpy as np
        >>> mdp = FiniteMDP(np.ones((2, 1, 2)) / 2, np.array([0.0, 1.0]), gamma=0.5)
        >>> mdp.n_states, mdp.n_actions, mdp.state_reward
        (2, 1, True)
    """

    def __init__(self, P, R, gamma: float, features=None, start=None):
        P = _as_float_array("P", P, 3)
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
        bad = np.argwhere(np.abs(sums - 1.0) > _ROW_TOL)
        if len(bad):
            s, a = (int(i) for i in bad[0])
            raise ValueError(
                f"P[{s}, {a}, :] sums to {sums[s, a]:.10g}, not 1 ({len(bad)} rows are off); "
                f"each P[s, a, :] must be a probability distribution over next states."
            )
        R = np.asarray(R, dtype=np.float64)
        if R.ndim == 1:
            R = np.repeat(R[:, None], n_actions, axis=1)
        R = _as_float_array("R", R, 2)
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
            features = _as_float_array("features", features, 2)
            if features.shape[0] != n_states:
                raise ValueError(
                    f"features should have {n_states} rows (one per state), got shape "
                    f"{features.shape}."
                )
        if start is None:
            start = np.full(n_states, 1.0 / n_states)
        start = check_distribution("start", start, n_states).copy()
        for arr in (P, R, start) + ((features,) if features is not None else ()):
            arr.flags.writeable = False
        self.P, self.R, self.gamma = P, R, float(gamma)
        self.features, self.start = features, start
        self.n_states, self.n_actions = n_states, n_actions

    def __repr__(self) -> str:
        p = None if self.features is None else self.features.shape[1]
        return (
            f"FiniteMDP(n_states={self.n_states}, n_actions={self.n_actions}, "
            f"gamma={self.gamma}, n_features={p})"
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
        """R_max = max |R|, so that every value is bounded by R_max / (1 - gamma)."""
        return float(np.abs(self.R).max())

    @cached_property
    def successors(self) -> tuple[np.ndarray, np.ndarray]:
        """Sparse successors ``(next_states[s, a, j], probs[s, a, j])``, j < max branching.

        Rows with fewer successors than the widest row are padded with probability 0
        (pointing to state 0), so a batched expectation is ``(probs * v[next]).sum(-1)``.
        """
        nnz = (self.P > 0).sum(axis=2)
        width = max(int(nnz.max()), 1)
        order = np.argsort(self.P <= 0, axis=2, kind="stable")[:, :, :width]
        probs = np.take_along_axis(self.P, order, axis=2)
        nxt = np.where(probs > 0, order, 0)
        nxt.flags.writeable = False
        probs.flags.writeable = False
        return nxt.astype(np.int64), probs

    def save(self, path: str | Path) -> None:
        """Write the MDP to ``path`` (.npz, keys P, R, gamma, features, start; no pickle)."""
        arrays = {"P": self.P, "R": self.R, "gamma": np.float64(self.gamma), "start": self.start}
        arrays["features"] = (
            self.features if self.features is not None else np.zeros((self.n_states, 0))
        )
        np.savez_compressed(path, **arrays)

    @classmethod
    def from_gymnasium(cls, env, gamma: float = 0.99, start=None) -> FiniteMDP:
        """Read a Gymnasium toy_text model (FrozenLake, Taxi, CliffWalking): nsrl.model.toytext.

        Terminal states become absorbing with zero reward; the start distribution is the
        env's ``initial_state_distrib`` unless ``start`` is given.
        """
        P, R, start = toy_text_arrays(env, start)
        return cls(P, R, gamma, start=start)

    @classmethod
    def load(cls, path: str | Path) -> FiniteMDP:
        """Read an MDP written by :meth:`save` (never unpickles)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no MDP file at {str(path)!r}; create one with `nsrl garnet`.")
        try:
            z = np.load(path, allow_pickle=False)
            if not hasattr(z, "files"):
                raise ValueError("it holds a single array, not an .npz archive")
        except (OSError, EOFError, ValueError, zipfile.BadZipFile) as exc:
            raise ValueError(f"cannot read {path} as an nsrl .npz MDP file: {exc}") from None
        with z:
            missing = {"P", "R", "gamma"} - set(z.files)
            if missing:
                raise ValueError(
                    f"{path} is not an nsrl MDP file: keys {sorted(missing)} are missing."
                )
            features = z["features"] if "features" in z.files else None
            if features is not None and features.shape[1] == 0:
                features = None
            start = z["start"] if "start" in z.files else None
            return cls(z["P"], z["R"], float(z["gamma"]), features=features, start=start)

    def __eq__(self, other) -> bool:
        if not isinstance(other, FiniteMDP):
            return NotImplemented
        same_features = (self.features is None and other.features is None) or (
            self.features is not None
            and other.features is not None
            and np.array_equal(self.features, other.features)
        )
        return (
            self.gamma == other.gamma
            and np.array_equal(self.P, other.P)
            and np.array_equal(self.R, other.R)
            and np.array_equal(self.start, other.start)
            and same_features
        )

    __hash__ = object.__hash__
