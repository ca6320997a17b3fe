"""Policies: deterministic, mixtures, and non-stationary (finite sequence or periodic loop).

Every policy can

* act in a simulator: ``policy.act(obs, phase=0, rng=None) -> actions`` for a batch of
  observations (``phase`` is the time step since the start, used by non-stationary policies;
  ``rng`` draws the component of a mixture);
* be tabulated on a finite model: ``policy.table(mdp) -> pi[s, a]`` for stationary policies,
  ``policy.tables(mdp) -> pi[i, s, a]`` for non-stationary ones (phase i);
* say how many deterministic stationary policies it stores: ``policy.memory``.

A *stationary deterministic* policy is any object with ``act``, ``table``, ``memory == 1``
and ``stochastic = False``: :class:`Deterministic` here, fitted classifiers in
:mod:`nsrl.greedy`. Sequences are written as in the paper: ``sigma_k = pi_k pi_{k-1} ...
pi_1`` acts first with ``pi_k``, i.e. ``NonStationary([pi_k, ..., pi_1])``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Deterministic:
    """A stationary deterministic policy given by its table of actions ``actions[s]``.

    Examples:
        >>> pi = Deterministic([0, 1, 1])
        >>> pi.act(np.array([2, 0]))
        array([1, 0])
    """

    memory = 1
    stochastic = False

    def __init__(self, actions):
        actions = np.array(actions, dtype=np.int64, copy=True)
        if actions.ndim != 1:
            raise ValueError(f"actions should be a 1-d array (one per state), got {actions.shape}.")
        if actions.size and actions.min() < 0:
            raise ValueError(f"actions should be non-negative indices, got {actions.min()}.")
        actions.flags.writeable = False
        self.actions = actions

    def __repr__(self) -> str:
        return f"Deterministic(n_states={self.actions.size})"

    def act(self, obs, phase=0, rng=None) -> np.ndarray:
        """Actions for a batch of state indices ``obs``."""
        return self.actions[np.asarray(obs, dtype=np.int64)]

    def action_table(self, mdp) -> np.ndarray:
        """The action of each state of ``mdp``, shape (n_states,)."""
        if self.actions.size != mdp.n_states or self.actions.max() >= mdp.n_actions:
            raise ValueError(
                f"this policy is defined on {self.actions.size} states with actions up to "
                f"{self.actions.max()}, but the MDP has {mdp.n_states} states and "
                f"{mdp.n_actions} actions."
            )
        return self.actions

    def table(self, mdp) -> np.ndarray:
        """The one-hot table pi[s, a]."""
        return one_hot(self.action_table(mdp), mdp.n_actions)


def one_hot(actions: np.ndarray, n_actions: int) -> np.ndarray:
    """pi[s, a] = 1 if a == actions[s]."""
    table = np.zeros((actions.size, n_actions))
    table[np.arange(actions.size), actions] = 1.0
    return table


def action_table(policy, mdp) -> np.ndarray:
    """Actions of a stationary deterministic policy in every state of ``mdp``."""
    if hasattr(policy, "action_table"):
        return policy.action_table(mdp)
    return np.asarray(policy.act(np.arange(mdp.n_states)), dtype=np.int64)


class Stochastic:
    """A stationary stochastic policy given by its table ``pi[s, a]`` (rows sum to one)."""

    stochastic = True

    def __init__(self, table, memory: int = 1):
        table = np.array(table, dtype=np.float64, copy=True)
        if table.ndim != 2 or np.any(table < 0) or not np.allclose(table.sum(axis=1), 1.0):
            raise ValueError("table should be a (n_states, n_actions) array of distributions.")
        table.flags.writeable = False
        self._table, self.memory = table, memory

    def act(self, obs, phase=0, rng=None) -> np.ndarray:
        """Draw one action per observation (state index) from pi[obs, :]."""
        if rng is None:
            raise ValueError("a stochastic policy needs rng=np.random.Generator to act.")
        cdf = np.cumsum(self._table[np.asarray(obs, dtype=np.int64)], axis=1)
        u = rng.random(cdf.shape[0])[:, None]
        return np.minimum((u >= cdf).sum(axis=1), self._table.shape[1] - 1)

    def table(self, mdp) -> np.ndarray:
        """The table pi[s, a]."""
        return np.array(self._table)


class Mixture:
    """A stochastic mixture sum_i w_i pi_i of stationary policies (CPI, API(alpha)).

    At each step the policy draws one component with probability ``w_i`` and follows its
    action, so its table is ``sum_i w_i table(pi_i)``. Components that are themselves
    mixtures are flattened.

    Args:
        components: a sequence of ``(weight, policy)``; weights are positive and sum to 1.

    Examples:
        >>> mix = Mixture([(0.9, Deterministic([0, 0])), (0.1, Deterministic([1, 1]))])
        >>> mix.memory
        2
    """

    stochastic = True

    def __init__(self, components: Sequence[tuple[float, object]]):
        flat: list[tuple[float, object]] = []
        for w, pi in components:
            if isinstance(pi, Mixture):
                flat.extend((w * wi, pi_i) for wi, pi_i in pi.components)
            else:
                flat.append((float(w), pi))
        weights = np.array([w for w, _ in flat])
        if len(flat) == 0 or np.any(weights < 0) or abs(weights.sum() - 1.0) > 1e-9:
            raise ValueError(
                f"Mixture weights should be non-negative and sum to 1, got {weights.tolist()}."
            )
        self.components = tuple(flat)
        self.weights = weights

    @property
    def memory(self) -> int:
        """Number of stored deterministic policies."""
        return sum(pi.memory for _, pi in self.components)

    def act(self, obs, phase=0, rng=None) -> np.ndarray:
        """Draw a component per observation, then take that component's action."""
        if rng is None:
            raise ValueError("a Mixture needs rng=np.random.Generator to act.")
        obs = np.asarray(obs)
        which = rng.choice(len(self.components), size=len(obs), p=self.weights)
        actions = np.zeros(len(obs), dtype=np.int64)
        for i in np.unique(which):
            mask = which == i
            actions[mask] = self.components[i][1].act(obs[mask], phase, rng)
        return actions

    def table(self, mdp) -> np.ndarray:
        """The table pi[s, a] = sum_i w_i pi_i[s, a]."""
        out = np.zeros((mdp.n_states, mdp.n_actions))
        for w, pi in self.components:
            if getattr(pi, "stochastic", False):
                out += w * pi.table(mdp)
            else:
                out[np.arange(mdp.n_states), action_table(pi, mdp)] += w
        return out


class NonStationary:
    """A non-stationary policy: a finite sequence sigma, or the periodic loop (sigma)^inf.

    ``NonStationary([pi_k, ..., pi_1])`` acts with ``pi_k`` at phase 0, ``pi_{k-1}`` at
    phase 1, and so on. With ``loop=False`` it is the finite-horizon policy sigma_k of PSDP
    (it stops after its last policy); with ``loop=True`` it is (sigma)^inf, which starts
    again at phase 0 after the last policy (PSDP's output, NSPI(m)).

    Examples:
        >>> a, b = Deterministic([0, 0]), Deterministic([1, 1])
        >>> loop = NonStationary([a, b], loop=True)
        >>> loop.act(np.array([0, 1]), phase=3).tolist()
        [1, 1]
    """

    def __init__(self, policies: Sequence[object], loop: bool, parent: NonStationary | None = None):
        self.policies = tuple(policies)
        self.loop = bool(loop)
        if self.loop and not self.policies:
            raise ValueError("a periodic loop needs at least one policy.")
        # For a finite sequence built by prepend(): the sequence without its first policy,
        # which lets the exact backend evaluate sigma_{k+1} = T_{pi_{k+1}} v_{sigma_k} in O(1).
        self.parent = parent

    @classmethod
    def empty(cls) -> NonStationary:
        """The empty policy of PSDP, whose value is the terminal value (r for state rewards)."""
        return cls((), loop=False)

    def prepend(self, pi) -> NonStationary:
        """The finite sequence ``pi sigma`` (PSDP: sigma_{k+1} = pi_{k+1} sigma_k)."""
        if self.loop:
            raise ValueError("prepend() builds finite sequences; call it on a loop=False policy.")
        return NonStationary((pi,) + self.policies, loop=False, parent=self)

    def looped(self) -> NonStationary:
        """The periodic policy (sigma)^inf that loops over this sequence."""
        return NonStationary(self.policies, loop=True)

    def __len__(self) -> int:
        return len(self.policies)

    def __repr__(self) -> str:
        kind = "loop" if self.loop else "finite"
        return f"NonStationary({kind}, length={len(self.policies)})"

    @property
    def memory(self) -> int:
        """Number of stored deterministic policies."""
        return sum(pi.memory for pi in self.policies)

    @property
    def horizon(self) -> int | None:
        """Number of steps a finite sequence acts for; None for a loop."""
        return None if self.loop else len(self.policies)

    def at(self, phase: int):
        """The stationary policy used at time ``phase``."""
        if self.loop:
            return self.policies[phase % len(self.policies)]
        if not 0 <= phase < len(self.policies):
            raise ValueError(
                f"this finite sequence acts for {len(self.policies)} steps; phase {phase} is "
                f"past its end (use .looped() to repeat it)."
            )
        return self.policies[phase]

    def act(self, obs, phase=0, rng=None) -> np.ndarray:
        """Actions at ``phase`` (an int, or one phase per observation)."""
        obs = np.asarray(obs)
        if np.ndim(phase) == 0:
            return self.at(int(phase)).act(obs, 0, rng)
        phase = np.asarray(phase)
        actions = np.zeros(len(obs), dtype=np.int64)
        for p in np.unique(phase):
            mask = phase == p
            actions[mask] = self.at(int(p)).act(obs[mask], 0, rng)
        return actions

    def tables(self, mdp) -> np.ndarray:
        """Tables pi[i, s, a] of the policies in acting order."""
        if not self.policies:
            return np.zeros((0, mdp.n_states, mdp.n_actions))
        return np.stack([stationary_table(pi, mdp) for pi in self.policies])


def stationary_table(policy, mdp) -> np.ndarray:
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

    def __init__(self, action: int = 0):
        if int(action) < 0:
            raise ValueError(f"action should be a non-negative index, got {action}.")
        self.action = int(action)

    def __repr__(self) -> str:
        return f"Constant({self.action})"

    def act(self, obs, phase=0, rng=None) -> np.ndarray:
        """``action`` for every observation of the batch."""
        return np.full(len(obs), self.action, dtype=np.int64)

    def action_table(self, mdp) -> np.ndarray:
        """``action`` in every state of ``mdp``."""
        if self.action >= mdp.n_actions:
            raise ValueError(f"action {self.action} is out of range for {mdp.n_actions} actions.")
        return np.full(mdp.n_states, self.action, dtype=np.int64)

    def table(self, mdp) -> np.ndarray:
        """The one-hot table pi[s, a]."""
        return one_hot(self.action_table(mdp), mdp.n_actions)


def constant(action: int = 0) -> Constant:
    """The policy that takes ``action`` everywhere (the default pi_0 of every scheme)."""
    return Constant(action)
