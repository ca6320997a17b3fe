"""What both samplers share: transitions, the plan a rollout follows, rollout lengths."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nsrl.policies import Constant, NonStationary, action_table, stationary_table


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


class Plan:
    """The stationary policy acting at each phase of a rollout, and when the rollout ends.

    A stationary policy is a loop of length 1. A finite sequence ends after its policies;
    with ``terminal=True`` (state rewards) a last step with action 0 collects r(s_end).
    """

    def __init__(self, policy, terminal: bool):
        if isinstance(policy, NonStationary):
            self.policies, self.loop = list(policy.policies), policy.loop
            if not self.loop and terminal:
                self.policies.append(Constant(0))
        else:
            self.policies, self.loop = [policy], True
        self._tables: dict[int, tuple[np.ndarray | None, np.ndarray | None]] = {}

    def at(self, phase: int):
        """The policy acting at ``phase``, or None once a finite sequence has ended."""
        if self.loop:
            return self.policies[phase % len(self.policies)]
        return self.policies[phase] if phase < len(self.policies) else None

    def tables(self, phase: int, mdp):
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


def rollout_lengths(n: int, horizon, gamma: float, rng) -> np.ndarray:
    """Number of transitions of each rollout: H, or 1 + Geometric with continuation gamma."""
    if horizon is None:
        return rng.geometric(1.0 - gamma, size=n).astype(np.int64)
    return np.full(n, int(horizon), dtype=np.int64)
