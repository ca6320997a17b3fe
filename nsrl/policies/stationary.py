"""Stationary policies: deterministic tables, stochastic tables, mixtures, constants."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from nsrl.model.arrays import index_array, real_array
from nsrl.model.checks import SUM_TOL, normalise, rows_off

if TYPE_CHECKING:
    from nsrl.model.mdp import FiniteMDP


class Policy(Protocol):
    """A stationary policy as the schemes take it: ``act``, ``table`` and ``memory``.

    ``stochastic`` (default False) and ``action_table`` are read when present.
    """

    @property
    def memory(self) -> int:
        """Number of stored deterministic policies."""

    def act(self, obs: npt.ArrayLike, phase: int = 0,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """Actions for a batch of observations."""

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The table pi[s, a] on ``mdp``."""


class Deterministic:
    """A stationary deterministic policy given by its table of actions ``actions[s]``.

    ``actions`` must hold integers (a float table such as ``[0.5, 1.0]`` is refused rather
    than truncated; cast with ``.astype(int)`` if the values are whole numbers).

    Examples:
        >>> pi = Deterministic([0, 1, 1])
        >>> pi.act(np.array([2, 0]))
        array([1, 0])
    """

    memory = 1
    stochastic = False

    def __init__(self, actions: npt.ArrayLike) -> None:
        actions = index_array("actions", actions)  # a new int64 array; floats refused
        if actions.ndim != 1:
            raise ValueError(f"actions should be a 1-d array (one per state), got {actions.shape}.")
        if actions.size and actions.min() < 0:
            raise ValueError(f"actions should be non-negative indices, got {actions.min()}.")
        actions.flags.writeable = False
        self.actions = actions

    def __repr__(self) -> str:
        return f"Deterministic(n_states={self.actions.size})"

    def act(self, obs: npt.ArrayLike, phase: int = 0,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """Actions for a batch of state indices ``obs``."""
        return self.actions[np.asarray(obs, dtype=np.int64)]

    def action_table(self, mdp: FiniteMDP) -> np.ndarray:
        """The action of each state of ``mdp``, shape (n_states,)."""
        if self.actions.size != mdp.n_states or self.actions.max() >= mdp.n_actions:
            raise ValueError(
                f"this policy is defined on {self.actions.size} states with actions up to "
                f"{self.actions.max()}, but the MDP has {mdp.n_states} states and "
                f"{mdp.n_actions} actions."
            )
        return self.actions

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The one-hot table pi[s, a]."""
        return one_hot(self.action_table(mdp), mdp.n_actions)


def one_hot(actions: np.ndarray, n_actions: int) -> np.ndarray:
    """pi[s, a] = 1 if a == actions[s]."""
    table = np.zeros((actions.size, n_actions))
    table[np.arange(actions.size), actions] = 1.0
    return table


def act_masked(policy: object, obs: npt.ArrayLike, rng: np.random.Generator | None,
               mask: np.ndarray | None = None, phase: int = 0) -> np.ndarray:
    """``policy.act`` on a batch, with the legal actions ``mask`` where the policy takes one.

    A policy that acts on observations through scores of actions (e.g.
    :class:`nsrl.policies.linear.LinearScoringPolicy`) declares ``takes_mask = True`` and
    chooses among the legal actions only; a policy tabulated on a model's states needs none.

    Examples:
        >>> act_masked(Constant(1), np.zeros(2), None, np.ones((2, 3), dtype=bool)).tolist()
        [1, 1]
    """
    if mask is None or not getattr(policy, "takes_mask", False):
        return policy.act(obs, phase, rng)  # type: ignore[attr-defined]
    return policy.act(obs, phase, rng, mask=mask)  # type: ignore[attr-defined]


def action_table(policy: Policy, mdp: FiniteMDP) -> np.ndarray:
    """Actions of a stationary deterministic policy in every state of ``mdp``."""
    if hasattr(policy, "action_table"):
        return policy.action_table(mdp)
    return np.asarray(policy.act(np.arange(mdp.n_states)), dtype=np.int64)


class Stochastic:
    """A stationary stochastic policy given by its table ``pi[s, a]`` (rows sum to one).

    Each row must sum to 1 within :data:`nsrl.model.checks.SUM_TOL` (1e-4) and is then
    divided by its sum (a float32 softmax, off by 1e-7, is the distribution it stands for:
    at gamma near 1 such an error would move values by ``e R_max / (1 - gamma)^2``); a row
    further off is refused.

    Examples:
        >>> Stochastic([[0.5, 0.5 + 1e-6]]).table(None).round(6).tolist()
        [[0.5, 0.5]]
    """

    stochastic = True

    def __init__(self, table: npt.ArrayLike, memory: int = 1) -> None:
        table = real_array("table", table, 2)  # a new real, finite array
        sums = table.sum(axis=1)
        if np.any(table < 0) or rows_off(sums).any():
            where = (f"row {int(np.argmax(rows_off(sums)))} sums to "
                     f"{sums[rows_off(sums)][0]:.10g}" if rows_off(sums).any()
                     else f"{int((table < 0).sum())} entries are negative")
            raise ValueError(f"table should be a (n_states, n_actions) array of distributions "
                             f"(non-negative rows summing to 1 within {SUM_TOL:g}), but "
                             f"{where}; normalise it (table / table.sum(axis=1, keepdims=True)).")
        normalise(table, sums)
        table.flags.writeable = False
        self._table, self.memory = table, memory

    def act(self, obs: npt.ArrayLike, phase: int = 0,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """Draw one action per observation (state index) from pi[obs, :]."""
        if rng is None:
            raise ValueError("a stochastic policy needs rng=np.random.Generator to act.")
        cdf = np.cumsum(self._table[np.asarray(obs, dtype=np.int64)], axis=1)
        u = rng.random(len(cdf))[:, None]
        return np.minimum((u >= cdf).sum(axis=1), self._table.shape[1] - 1)

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The table pi[s, a]."""
        return np.array(self._table)


class Mixture:
    """A stochastic mixture sum_i w_i pi_i of stationary policies (CPI, API(alpha)).

    At each step the policy draws one component with probability ``w_i`` and follows its
    action, so its table is ``sum_i w_i table(pi_i)``. Components that are themselves
    mixtures are flattened.

    :meth:`fold` builds the conservative update ``(1 - alpha) pi + alpha new`` in O(1): its
    table on a model is ``(1 - alpha) table(pi) + alpha table(new)`` from the cached table of
    ``pi``, and its components are flattened only when asked for, so that the k-th step of a
    scheme costs the same as the first.

    Args:
        components: a sequence of ``(weight, policy)``; weights are non-negative and sum to
            1 within :data:`nsrl.model.checks.SUM_TOL`, and are divided by their sum.

    Examples:
        >>> mix = Mixture([(0.9, Deterministic([0, 0])), (0.1, Deterministic([1, 1]))])
        >>> mix.memory
        2
    """

    stochastic = True

    def __init__(self, components: Sequence[tuple[float, Policy]]) -> None:
        flat: list[tuple[float, Policy]] = []
        for w, pi in components:
            if isinstance(pi, Mixture):
                flat.extend((w * wi, pi_i) for wi, pi_i in pi.components)
            else:
                flat.append((float(w), pi))
        weights = np.array([w for w, _ in flat])
        if len(flat) == 0 or not np.all(weights >= 0) or rows_off(weights.sum()):
            raise ValueError(
                f"Mixture weights should be non-negative and sum to 1 (within {SUM_TOL:g}, "
                f"which is divided out), got {weights.tolist()}."
            )
        normalise(weights)
        flat = [(float(w), pi) for w, (_, pi) in zip(weights, flat, strict=True)]
        self._flat: tuple[tuple[float, Policy], ...] | None = tuple(flat)
        self._fold: tuple[Policy, Policy, float] | None = None
        self.memory = sum(pi.memory for _, pi in flat)
        self._table: tuple[object, np.ndarray] | None = None

    @classmethod
    def fold(cls, pi: Policy, new: Policy, alpha: float) -> Mixture:
        """``(1 - alpha) pi + alpha new`` for 0 < alpha < 1, without flattening ``pi``."""
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha should be in (0, 1) for a mixture, got {alpha!r}.")
        self = cls.__new__(cls)
        self._flat, self._fold, self._table = None, (pi, new, float(alpha)), None
        self.memory = pi.memory + new.memory
        return self

    @property
    def folded(self) -> tuple[Policy, Policy, float] | None:
        """``(pi, new, alpha)`` for a mixture built by :meth:`fold`, else None.

        Whatever is linear in the policy's table (e.g. LSTD-Q's X_pi) is then
        ``(1 - alpha)`` of pi's plus ``alpha`` of new's.
        """
        return self._fold

    @property
    def components(self) -> tuple[tuple[float, Policy], ...]:
        """The flattened ``(weight, policy)`` pairs (computed once, on demand)."""
        if self._flat is None:
            assert self._fold is not None  # a Mixture holds one of the two forms
            pi, new, alpha = self._fold
            head = pi.components if isinstance(pi, Mixture) else ((1.0, pi),)
            self._flat = tuple((w * (1.0 - alpha), p) for w, p in head) + ((alpha, new),)
        return self._flat

    @property
    def weights(self) -> np.ndarray:
        """The weights w_i of :attr:`components`."""
        return np.array([w for w, _ in self.components])

    takes_mask = True  # forwards the legal actions to components that take them

    def act(self, obs: npt.ArrayLike, phase: int = 0, rng: np.random.Generator | None = None,
            mask: np.ndarray | None = None) -> np.ndarray:
        """Draw a component per observation, then take that component's action.

        ``mask`` (legal actions, one row per observation) goes to the components that take
        one (:func:`act_masked`).
        """
        if rng is None:
            raise ValueError("a Mixture needs rng=np.random.Generator to act.")
        obs = np.asarray(obs)
        which = rng.choice(len(self.components), size=len(obs), p=self.weights)
        actions = np.zeros(len(obs), dtype=np.int64)
        for i in np.unique(which):
            rows = which == i
            actions[rows] = act_masked(self.components[i][1], obs[rows], rng,
                                       None if mask is None else np.asarray(mask)[rows], phase)
        return actions

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The table pi[s, a] = sum_i w_i pi_i[s, a] (cached per model; read-only).

        Folds do not drift: ``(1 - alpha) x + alpha y`` of rows within rounding of 1 stays
        there (measured: 3,000 folds of alpha 1e-3 and 0.3, rows within 2 eps of 1).
        """
        if self._table is None or self._table[0] is not mdp:
            if self._fold is not None:
                pi, new, alpha = self._fold
                out = (1.0 - alpha) * stationary_table(pi, mdp)
                out += alpha * stationary_table(new, mdp)
            else:
                out = np.zeros((mdp.n_states, mdp.n_actions))
                for w, pi in self.components:
                    if getattr(pi, "stochastic", False):
                        out += w * pi.table(mdp)
                    else:
                        out[np.arange(mdp.n_states), action_table(pi, mdp)] += w
            out.flags.writeable = False
            self._table = (mdp, out)
        return self._table[1]


def stationary_table(policy: Policy, mdp: FiniteMDP) -> np.ndarray:
    """pi[s, a] of any stationary policy on ``mdp``."""
    if getattr(policy, "stochastic", False):
        return policy.table(mdp)
    return one_hot(action_table(policy, mdp), mdp.n_actions)


class Constant:
    """The stationary policy that takes ``action`` whatever the observation.

    It is the default pi_0 of every scheme, and acts on any observation space (indices,
    features, continuous observations), so schemes start the same way on any environment.
    """

    memory = 1
    stochastic = False

    def __init__(self, action: int = 0) -> None:
        if int(action) < 0:
            raise ValueError(f"action should be a non-negative index, got {action}.")
        self.action = int(action)

    def __repr__(self) -> str:
        return f"Constant({self.action})"

    def act(self, obs: npt.ArrayLike, phase: int = 0,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """``action`` for every observation of the batch."""
        return np.full(np.shape(obs)[0], self.action, dtype=np.int64)

    def action_table(self, mdp: FiniteMDP) -> np.ndarray:
        """``action`` in every state of ``mdp``."""
        if self.action >= mdp.n_actions:
            raise ValueError(f"action {self.action} is out of range for {mdp.n_actions} actions.")
        return np.full(mdp.n_states, self.action, dtype=np.int64)

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The one-hot table pi[s, a]."""
        return one_hot(self.action_table(mdp), mdp.n_actions)


def constant(action: int = 0) -> Constant:
    """The policy that takes ``action`` everywhere (the default pi_0 of every scheme)."""
    return Constant(action)
