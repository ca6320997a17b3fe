"""Generic sampling path: any single Gymnasium env with reset-to-state, step by step.

It gives the same draws in distribution as :class:`nsrl.greedy.sampling.ModelSampler` (see that
module for rollouts, horizons, terminal values and d_{pi,nu}), one ``reset``/``step`` at a
time: the compatibility path, not the fast one.
"""

from __future__ import annotations

import numpy as np

from nsrl.greedy.sampling.common import Plan, Transitions, rollout_lengths


class EnvSampler:
    """Generic path: any Gymnasium env with ``reset(options={"state": s})``, step by step.

    States are what ``reset(options={"state": s})`` accepts; ``info["state"]`` is read when
    the env reports it, else the observation itself is the state (Discrete observations).
    A terminated episode ends the rollout (no reward after it); a truncation also ends it,
    so give the env a ``max_episode_steps`` above the horizon.
    """

    def __init__(self, env, gamma: float, state_reward: bool = False):
        self.env, self.gamma, self.state_reward = env, float(gamma), bool(state_reward)
        self.n_actions = int(env.action_space.n)
        self.mdp = getattr(env.unwrapped, "mdp", None)

    def _reset(self, state=None):
        opts = None if state is None else {"state": int(state)}
        obs, info = self.env.reset(options=opts)
        got = info.get("state", obs)
        if state is not None and np.ndim(got) == 0 and int(got) != int(state):
            raise ValueError(
                f"{self.env!r} ignored reset(options={{'state': {int(state)}}}) (it started in "
                f"{int(got)}): rollouts need reset-to-state; use LSTDQ, which does not, or an "
                f"nsrl env (nsrl.envs.FiniteMDPEnv(FiniteMDP.from_gymnasium(env)))."
            )
        return obs, got

    def start(self, n: int, rng) -> np.ndarray:
        """``n`` states from the env's reset distribution."""
        self.env.reset(seed=int(rng.integers(2**31)))
        return np.array([self._reset()[1] for _ in range(n)])

    def observe(self, states) -> np.ndarray:
        """The observation of each state (reset-to-state, unless observations are indices)."""
        if hasattr(self.env.observation_space, "n"):  # Discrete: observation = state index
            return np.asarray(states)
        return np.array([self._reset(s)[0] for s in states])

    def _episode(self, plan, obs, first, length, horizon, rng) -> tuple[float, int, object]:
        ret, disc, t, offset = 0.0, 1.0, 0, 0 if first is None else 1
        state = obs
        while t < length:
            if t == 0 and first is not None:
                a = int(first)
            else:
                pi = plan.at(t - offset)
                if pi is None:
                    break
                a = int(pi.act(np.asarray([obs]), 0, rng)[0])
            obs, r, terminated, truncated, info = self.env.step(a)
            state = info.get("state", obs)
            ret, t = ret + disc * float(r), t + 1
            disc = disc * self.gamma if horizon is not None else 1.0
            if terminated or truncated:
                break
        return ret, t, state

    def rollouts(self, policy, states, actions, rng, horizon=None) -> tuple[np.ndarray, int]:
        """Returns of rollouts from ``states``, one ``reset``/``step`` episode each."""
        plan = Plan(policy, self.state_reward)
        lengths = rollout_lengths(len(states), horizon, self.gamma, rng)
        out, count = np.zeros(len(states)), 0
        self.env.reset(seed=int(rng.integers(2**31)))  # the env's own draws follow rng too
        for i, s in enumerate(states):
            obs, _ = self._reset(s)
            first = None if actions is None else actions[i]
            out[i], t, _ = self._episode(plan, obs, first, lengths[i], horizon, rng)
            count += t
        return out, count

    def occupancy_states(self, policy, n: int, rng) -> tuple[np.ndarray, int]:
        """``n`` states from d_{policy,nu}: walks from reset stopped w.p. 1 - gamma."""
        plan, states, count = Plan(policy, terminal=False), [], 0
        self.env.reset(seed=int(rng.integers(2**31)))
        for _ in range(n):
            obs, state = self._reset()
            length = int(rng.geometric(1.0 - self.gamma)) - 1
            if length:
                _, t, state = self._episode(plan, obs, None, length, None, rng)
                count += t
            states.append(state)
        return np.array(states), count


    def from_start(self, policy, n: int, rng, horizon=None) -> tuple[np.ndarray, int]:
        """Returns of ``n`` episodes of ``policy`` from ``reset()`` (a Monte-Carlo nu v_pi)."""
        plan, out, count = Plan(policy, self.state_reward), np.zeros(n), 0
        self.env.reset(seed=int(rng.integers(2**31)))
        for i, length in enumerate(rollout_lengths(n, horizon, self.gamma, rng)):
            out[i], t, _ = self._episode(plan, self.env.reset()[0], None, length, horizon, rng)
            count += t
        return out, count

    def transitions(self, n: int, rng, behaviour=None, explore: float = 1.0) -> Transitions:
        """``n`` transitions along episodes from ``reset()``, ended w.p. 1 - gamma per step.

        Actions are uniform with probability ``explore``, else ``behaviour``'s; no
        reset-to-state is needed. ``done`` marks terminations (nothing to bootstrap).
        """
        rows, (obs, info) = [], self.env.reset(seed=int(rng.integers(2**31)))
        for _ in range(n):
            a = int(rng.integers(self.n_actions))
            if behaviour is not None and rng.random() >= explore:
                a = int(behaviour.act(np.asarray([obs]), 0, rng)[0])
            nxt, r, terminated, truncated, nxt_info = self.env.step(a)
            rows.append((info.get("state", -1), obs, a, float(r),
                         nxt_info.get("state", -1), nxt, bool(terminated)))
            obs, info = nxt, nxt_info
            if terminated or truncated or rng.random() >= self.gamma:
                obs, info = self.env.reset()
        cols = [np.asarray(c) for c in zip(*rows, strict=True)]
        return Transitions(*cols)
