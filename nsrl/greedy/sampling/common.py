"""What both samplers share: transitions, plans, rollout lengths, stratified draws, CRN groups."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from nsrl.policies import (
    AnyPolicy,
    Constant,
    NonStationary,
    Policy,
    action_table,
    stationary_table,
)

if TYPE_CHECKING:
    from nsrl.model.mdp import FiniteMDP


@dataclass
class Transitions:
    """A batch of transitions (s, a, r, s').

    States are model indices (-1 when unknown); ``done`` marks terminations.
    """

    states: np.ndarray
    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    next_states: np.ndarray
    next_obs: np.ndarray
    done: np.ndarray


@dataclass
class Rollouts:
    """What a batch of rollouts returns.

    Attributes:
        returns: the (discounted, or undiscounted for a geometric horizon) sum of rewards.
        states: the state each rollout ended in (after its last transition).
        obs: the observation of ``states`` when the sampler reads it on the way (generic
            path), else None (call ``sampler.observe(states)``).
        steps: transitions of each rollout; shorter than asked when the plan ended first
            (a finite sequence) or the episode terminated.
        count: total transitions drawn (``steps.sum()``).
        first_rewards: the reward of each rollout's first transition (rollouts with a
            first action; None otherwise).
        first_states: the state each rollout reached after its first transition.
    """

    returns: np.ndarray
    states: np.ndarray
    obs: np.ndarray | None
    steps: np.ndarray
    count: int
    first_rewards: np.ndarray | None = None
    first_states: np.ndarray | None = None


class Plan:
    """The stationary policy acting at each phase of a rollout, and when the rollout ends.

    A stationary policy is a loop of length 1. A finite sequence ends after its policies;
    with ``terminal=True`` (state rewards) a last step with action 0 collects r(s_end).
    """

    def __init__(self, policy: AnyPolicy, terminal: bool) -> None:
        self.policies: list[Policy]
        if isinstance(policy, NonStationary):
            self.policies, self.loop = list(policy.policies), policy.loop
            if not self.loop and terminal:
                self.policies.append(Constant(0))
        else:
            self.policies, self.loop = [policy], True
        self._tables: dict[int, tuple[np.ndarray | None, np.ndarray | None]] = {}

    def __len__(self) -> int:
        return len(self.policies)

    def at(self, phase: int) -> Policy | None:
        """The policy acting at ``phase``, or None once a finite sequence has ended."""
        if self.loop:
            return self.policies[phase % len(self.policies)]
        return self.policies[phase] if phase < len(self.policies) else None

    def tables(self, phase: int,
               mdp: FiniteMDP) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(actions[s], None) for a deterministic policy, (None, cdf[s, a]) otherwise."""
        i = phase % len(self.policies) if self.loop else phase
        if i not in self._tables:
            pi = self.policies[i]
            if getattr(pi, "stochastic", False):
                table = stationary_table(pi, mdp)
                cdf = np.cumsum(table, axis=1)
                last = (table > 0).cumsum(axis=1).argmax(axis=1)  # last action with mass
                cdf[np.arange(mdp.n_actions)[None, :] >= last[:, None]] = 1.0
                self._tables[i] = (None, cdf)
            else:
                self._tables[i] = (np.asarray(action_table(pi, mdp), dtype=np.int64), None)
        return self._tables[i]

    def program(self, mdp: FiniteMDP,
                n_phases: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first ``n_phases`` phases as arrays for the rollout kernel.

        Returns:
            ``(actions[p, s], cdf[p, s, a], stochastic[p])``: deterministic phases use
            ``actions``, stochastic ones draw from ``cdf`` (a (1, 1, 1) dummy when no
            phase is stochastic).
        """
        n_phases = max(1, min(n_phases, len(self.policies))) if self.policies else 0
        S, A = mdp.n_states, mdp.n_actions
        actions = np.zeros((n_phases, S), dtype=np.int64)
        stochastic = np.zeros(n_phases, dtype=np.bool_)
        cdfs = {}
        for p in range(n_phases):
            act, cdf = self.tables(p, mdp)
            if act is not None:
                actions[p] = act
            else:
                stochastic[p], cdfs[p] = True, cdf
        cdf = np.zeros((n_phases, S, A) if cdfs else (1, 1, 1))
        for p, c in cdfs.items():
            cdf[p] = c
        return actions, cdf, stochastic

    def length(self, first_action: bool) -> float:
        """Transitions until a finite plan ends (inf for a loop)."""
        return float("inf") if self.loop else len(self.policies) + int(first_action)


def rollout_lengths(n: int, horizon: int | None, gamma: float,
                    rng: np.random.Generator) -> np.ndarray:
    """Number of transitions of each rollout: H, or 1 + Geometric with continuation gamma."""
    if horizon is None:
        return rng.geometric(1.0 - gamma, size=n).astype(np.int64)
    return np.full(n, int(horizon), dtype=np.int64)


def stratified_uniforms(n: int, rng: np.random.Generator, shuffle: bool = True) -> np.ndarray:
    """``n`` uniforms in [0, 1), one in each interval [i/n, (i+1)/n) (systematic sampling).

    With ``shuffle`` they come in random order, so each one is marginally U[0, 1) and any
    estimator unbiased with i.i.d. uniforms stays unbiased; without, they are increasing
    (enough when the order does not matter, e.g. states whose rollouts draw their own
    numbers). Either way, what they draw by inverse transform is within 1/n of the true
    distribution in every quantile.
    """
    u = (rng.random() + np.arange(n)) / n
    return u[rng.permutation(n)] if shuffle else u


def geometric_lengths(u: np.ndarray, gamma: float) -> np.ndarray:
    """Inverse transform of uniforms ``u`` in [0, 1) to L with P(L >= k) = gamma^k, k >= 0.

    ``L + 1`` is Geometric(1 - gamma) (the stopping time of d_{pi,nu} walks, or the length
    of a rollout with a geometric horizon).
    """
    with np.errstate(divide="ignore"):
        return np.floor(np.log1p(-u) / np.log(gamma)).astype(np.int64)


def walks_for(n: int, gamma: float) -> tuple[int, float]:
    """Walks, and the probability of keeping each visited state, for about ``n`` states.

    A walk stopped w.p. 1 - gamma visits s ``d(s) / (1 - gamma)`` times in expectation;
    ``ceil(n (1 - gamma))`` walks whose visited states are each kept w.p. ``p`` (independent
    thinning keeps the expected counts proportional to d) give ``n`` states on average.
    """
    walks = max(1, int(np.ceil(n * (1.0 - gamma))))
    return walks, min(1.0, n * (1.0 - gamma) / walks)


def thin(states: np.ndarray, keep: float, rng: np.random.Generator) -> np.ndarray:
    """Each state kept independently w.p. ``keep``; one drawn uniformly if none was."""
    if keep >= 1.0:
        return states
    kept = states[rng.random(len(states)) < keep]
    return kept if len(kept) else states[rng.integers(len(states), size=1)]


def crn_groups(n: int, n_actions: int, n_rollouts: int, crn: bool) -> np.ndarray:
    """The random-number group of each rollout of a Q estimate, ordered (state, action, k).

    With common random numbers, rollout k of every action of state i is in group
    ``i * K + k``: the same uniforms (transitions, mixture draws) and the same horizon drive
    them. Without, every rollout is its own group.
    """
    if not crn:
        return np.arange(n * n_actions * n_rollouts, dtype=np.int64)
    i = np.repeat(np.arange(n, dtype=np.int64), n_actions * n_rollouts)
    k = np.tile(np.arange(n_rollouts, dtype=np.int64), n * n_actions)
    return i * n_rollouts + k


def dense_indices(states: np.ndarray) -> bool:
    """Model indices in a range small enough for bincount (else np.unique sorts)."""
    return (states.ndim == 1 and np.issubdtype(states.dtype, np.integer) and len(states) > 0
            and states.min() >= 0 and states.max() < 4 * len(states) + 100_000)


def merge_states(states: npt.ArrayLike,
                 q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Repeated states merged: (distinct states, their mean Q, their counts).

    States that are not model indices (vector observations) are left as they are.
    """
    states = np.asarray(states)
    if not dense_indices(states):
        if states.ndim != 1 or not np.issubdtype(states.dtype, np.integer):
            return states, q, np.ones(len(q))
        uniq, inverse, counts = np.unique(states, return_inverse=True, return_counts=True)
        sums = np.stack([np.bincount(inverse, q[:, a]) for a in range(q.shape[1])], axis=1)
        return uniq, sums / counts[:, None], counts.astype(np.float64)
    counts = np.bincount(states)
    uniq = np.flatnonzero(counts)
    sums = np.stack([np.bincount(states, q[:, a])[uniq] for a in range(q.shape[1])], axis=1)
    return uniq, sums / counts[uniq, None], counts[uniq].astype(np.float64)
