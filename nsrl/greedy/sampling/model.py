"""Fast path: batched draws from a generative model ``env.sample`` on the env's finite model.

See :mod:`nsrl.greedy.sampling` for what rollouts, horizons and d_{pi,nu} draws mean.
"""

from __future__ import annotations

import numpy as np

from nsrl.greedy.sampling.common import Plan, Transitions, rollout_lengths
from nsrl.model.kernels import start_states


class ModelSampler:
    """Fast path: batched draws from ``env.sample`` on the env's finite model ``env.mdp``."""

    def __init__(self, env):
        self.env, self.mdp = env, env.mdp
        self.gamma, self.n_actions = self.mdp.gamma, self.mdp.n_actions
        self.state_reward = self.mdp.state_reward

    def start(self, n: int, rng) -> np.ndarray:
        """``n`` states from nu, the env's reset distribution (``mdp.start``)."""
        return start_states(self.mdp, n, rng)

    def observe(self, states) -> np.ndarray:
        """Observations of ``states`` as the env gives them (what policies are trained on)."""
        observe = getattr(self.env, "observe", None)
        return np.asarray(states) if observe is None else observe(np.asarray(states))

    def act(self, plan: Plan, phase: int, states, rng) -> np.ndarray:
        """Actions of the plan's policy at ``phase`` in ``states`` (tabulated on the model)."""
        actions, cdf = plan.tables(phase, self.mdp)
        if actions is not None:
            return actions[states]
        u = rng.random(len(states))
        return (cdf[states, :-1] <= u[:, None]).sum(axis=1)

    def rollouts(self, policy, states, actions, rng, horizon=None) -> tuple[np.ndarray, int]:
        """Returns of rollouts from ``states`` (first ``actions``, or the policy's if None).

        Rollouts are sorted by their (geometric) length, so the live ones are always a
        prefix of the batch and each step is a slice, not a gather.
        """
        states = np.asarray(states, dtype=np.int64)
        n = len(states)
        plan = Plan(policy, self.state_reward)
        lengths = rollout_lengths(n, horizon, self.gamma, rng)
        order = np.argsort(-lengths, kind="stable")
        lengths, s = lengths[order], states[order]
        first = None if actions is None else np.asarray(actions, dtype=np.int64)[order]
        returns, t, disc, count = np.zeros(n), 0, 1.0, 0
        offset, neg = (0 if first is None else 1), -lengths
        while True:
            alive = int(np.searchsorted(neg, -t, side="left"))  # rollouts longer than t
            if alive == 0 or (t >= offset and plan.at(t - offset) is None):
                break
            s = s[:alive]
            a = first[:alive] if t < offset else self.act(plan, t - offset, s, rng)
            s, r = self.env.sample(s, a, rng)
            returns[:alive] += disc * r
            count += alive
            t += 1
            disc = disc * self.gamma if horizon is not None else 1.0
        out = np.empty(n)
        out[order] = returns
        return out, count

    def occupancy_states(self, policy, n: int, rng) -> tuple[np.ndarray, int]:
        """``n`` states from d_{policy,nu} by geometric stopping, and the transitions used."""
        plan = Plan(policy, terminal=False)
        lengths = np.sort(rng.geometric(1.0 - self.gamma, size=n) - 1)[::-1]
        s, count = self.start(n, rng), 0
        for t in range(int(lengths[0]) if n else 0):
            alive = int((lengths > t).sum())
            if plan.at(t) is None:
                break
            s[:alive], _ = self.env.sample(s[:alive], self.act(plan, t, s[:alive], rng), rng)
            count += alive
        return s, count


    def from_start(self, policy, n: int, rng, horizon=None) -> tuple[np.ndarray, int]:
        """Returns of ``n`` rollouts of ``policy`` from nu (a Monte-Carlo nu v_pi)."""
        return self.rollouts(policy, self.start(n, rng), None, rng, horizon)

    def transitions(self, n: int, rng, behaviour=None, explore: float = 1.0) -> Transitions:
        """``n`` transitions along walks from nu that restart w.p. 1 - gamma at each step.

        Visited states follow d_{b,nu} of the behaviour b: uniform actions with probability
        ``explore``, else ``behaviour``'s. Walkers run about four episodes each.
        """
        walkers = max(1, min(n, int(n * (1.0 - self.gamma) / 4)))
        s, plan = self.start(walkers, rng), None if behaviour is None else Plan(behaviour, False)
        out, drawn = [], 0
        while drawn < n:
            s = s[:n - drawn]  # the last step draws exactly what is left of n
            a = rng.integers(self.n_actions, size=len(s))
            if plan is not None:
                own = rng.random(len(s)) >= explore
                a[own] = self.act(plan, 0, s[own], rng)
            nxt, r = self.env.sample(s, a, rng)
            out.append((s, a, r, nxt))
            drawn += len(s)
            restart = rng.random(len(s)) >= self.gamma
            s = nxt.copy()
            s[restart] = self.start(int(restart.sum()), rng)
        s, a, r, nxt = (np.concatenate(x) for x in zip(*out, strict=True))
        return Transitions(s, self.observe(s), a, r, nxt, self.observe(nxt), np.zeros(n, bool))
