"""Generic sampling path: any single Gymnasium env with reset-to-state, step by step.

It gives the same draws in distribution as :class:`nsrl.greedy.sampling.ModelSampler` (see that
module for rollouts, horizons, terminal values and d_{pi,nu}), one ``reset``/``step`` at a
time: the compatibility path, not the fast one.

Common random numbers: each random-number group (rollout k of every action of a state) gets
one seed; each rollout of the group starts with ``reset(seed=seed, options={"state": s})``
and draws its policy's actions from ``np.random.default_rng(seed)``. The env's transitions
are then common random numbers when the env draws them from its ``np_random`` in a fixed
order (nsrl's envs: one uniform per step); an env that draws a varying number of numbers
per step still gets valid, merely less correlated, rollouts.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nsrl.greedy.sampling.common import (
    Plan,
    Rollouts,
    Transitions,
    crn_groups,
    geometric_lengths,
    rollout_lengths,
    stratified_uniforms,
    thin,
    walks_for,
)
from nsrl.greedy.sampling.states import as_states, is_index, same_state
from nsrl.policies import AnyPolicy, Policy, act_masked


class EnvSampler:
    """Generic path: any Gymnasium env with ``reset(options={"state": s})``, step by step.

    States are what ``reset(options={"state": s})`` accepts; ``info["state"]`` is read when
    the env reports it, else the observation itself is the state (Discrete observations).
    A state is any object: a model's index, or a simulator's array, bytes or tuple (a batch of
    them is an object array, :func:`nsrl.greedy.sampling.states.as_states`). Where the env
    reports legal actions (``info["action_mask"]``), policies act with that mask, and the
    rollouts of Q(s, a) for an action illegal in s are not played (their return is NaN).
    A terminated episode ends the rollout (no reward after it); a truncation also ends it,
    so give the env a ``max_episode_steps`` above the horizon.
    """

    def __init__(self, env: Any, gamma: float, state_reward: bool = False) -> None:
        self.env, self.gamma, self.state_reward = env, float(gamma), bool(state_reward)
        self.n_actions = int(env.action_space.n)
        self.mdp = getattr(env.unwrapped, "mdp", None)
        self._mask: Any = None  # the legal actions the env reported last (or None)

    def _reset(self, state: Any = None, seed: int | None = None) -> tuple[Any, Any]:
        if state is not None and is_index(state):
            state = int(state)
        opts = None if state is None else {"state": state}
        obs, info = self.env.reset(seed=seed, options=opts)
        got = info.get("state", obs)
        self._mask = info.get("action_mask")
        if state is not None and not same_state(got, state):
            raise ValueError(
                f"{self.env!r} ignored reset(options={{'state': {state!r}}}) (it started in "
                f"{got!r}): rollouts need reset-to-state; use LSTDQ, which does not, an nsrl "
                f"env (nsrl.envs.FiniteMDPEnv(FiniteMDP.from_gymnasium(env))), or "
                f"nsrl.envs.SavedState for an env that keeps its state in an attribute."
            )
        return obs, got

    def start(self, n: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
        """``n`` states from the env's reset distribution (stratified on a known model)."""
        if stratified and self.mdp is not None:
            cdf = np.cumsum(self.mdp.start)
            idx = np.searchsorted(cdf, stratified_uniforms(n, rng, shuffle=False), side="right")
            return np.minimum(idx, int(np.flatnonzero(self.mdp.start > 0)[-1]))
        self.env.reset(seed=int(rng.integers(2**31)))
        return as_states(self._reset()[1] for _ in range(n))

    def observe(self, states: Any) -> np.ndarray:
        """The observation of each state (reset-to-state, unless observations are indices)."""
        if hasattr(self.env.observation_space, "n"):  # Discrete: observation = state index
            return np.asarray(states)
        return np.array([self._reset(s)[0] for s in as_states(states)])

    def _episode(self, plan: Plan, obs: Any, state: Any, first: int | None, length: float,
                 discounted: bool, rng: np.random.Generator,
                 visited: list | None = None) -> tuple[float, int, Any, Any]:
        ret, disc, t, offset = 0.0, 1.0, 0, 0 if first is None else 1
        first_step = (0.0, state)  # the first transition's reward and next state
        while t < length:
            if t == 0 and first is not None:
                a = int(first)
            else:
                pi = plan.at(t - offset)
                if pi is None:
                    break
                mask = None if self._mask is None else np.asarray(self._mask)[None]
                a = int(act_masked(pi, np.asarray([obs]), rng, mask)[0])
            obs, r, terminated, truncated, info = self.env.step(a)
            state = info.get("state", obs)
            self._mask = info.get("action_mask")
            if t == 0:
                first_step = (float(r), state)
            if visited is not None:
                visited.append(state)
            ret, t = ret + disc * float(r), t + 1
            disc = disc * self.gamma if discounted else 1.0
            if terminated or truncated:
                break
        self._first_step = first_step
        return ret, t, state, obs

    def _run(self, plan: Plan, states: np.ndarray | None, actions: np.ndarray | None,
             group: np.ndarray, lengths: np.ndarray, rng: np.random.Generator,
             discounted: bool) -> Rollouts:
        """Rollouts one ``reset``/``step`` episode each; a group shares one seed."""
        seeds = rng.integers(2**63, size=int(group.max()) + 1 if len(group) else 0)
        n = len(group)
        ret, steps, r0 = np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n)
        ends, obs, s1 = [None] * n, [None] * n, [None] * n
        for i in range(n):
            seed = int(seeds[group[i]])
            start = None if states is None else states[i]
            o, s = self._reset(start, seed=seed)
            first = None if actions is None else actions[i]
            if first is not None and self._mask is not None and not self._mask[int(first)]:
                ret[i], r0[i], ends[i], obs[i], s1[i] = np.nan, np.nan, s, o, s
                continue  # an illegal first action is not played: its Q is NaN
            ret[i], steps[i], ends[i], obs[i] = self._episode(
                plan, o, s, first, lengths[i], discounted, np.random.default_rng(seed))
            r0[i], s1[i] = self._first_step
        out = Rollouts(ret, as_states(ends), np.asarray(obs), steps, int(steps.sum()))
        if actions is not None:
            out.first_rewards, out.first_states = r0, as_states(s1)
        return out

    def q_rollouts(self, policy: AnyPolicy, states: np.ndarray, rng: np.random.Generator,
                   n_rollouts: int = 1, horizon: int | None = None,
                   crn: bool = True) -> Rollouts:
        """Rollouts for Q_policy(s, a), ordered (state, action, k); see ModelSampler."""
        n, A, K = len(states), self.n_actions, int(n_rollouts)
        group = crn_groups(n, A, K, crn)
        lengths = rollout_lengths(int(group.max()) + 1 if n else 0, horizon, self.gamma, rng)
        s = np.repeat(as_states(states), A * K, axis=0)
        a = np.tile(np.repeat(np.arange(A), K), n)
        return self._run(Plan(policy, self.state_reward), s, a, group, lengths[group], rng,
                         horizon is not None)

    def rollouts(self, policy: AnyPolicy, states: np.ndarray, actions: np.ndarray | None,
                 rng: np.random.Generator, horizon: int | None = None) -> tuple[np.ndarray, int]:
        """Returns of independent rollouts from ``states``, one episode each."""
        n = len(states)
        out = self._run(Plan(policy, self.state_reward), states, actions, np.arange(n),
                        rollout_lengths(n, horizon, self.gamma, rng), rng, horizon is not None)
        return out.returns, out.count

    def occupancy_states(self, policy: AnyPolicy, n: int, rng: np.random.Generator,
                         stratified: bool = False,
                         every_state: bool = False) -> tuple[np.ndarray, int]:
        """States from d_{policy,nu}: walks from reset stopped w.p. 1 - gamma.

        See ModelSampler.occupancy_states for ``stratified`` and ``every_state``.
        """
        walks, keep = walks_for(n, self.gamma) if every_state else (n, 1.0)
        u = stratified_uniforms(walks, rng) if stratified else rng.random(walks)
        lengths = geometric_lengths(u, self.gamma)
        starts = self.start(walks, rng, True) if stratified and self.mdp is not None else None
        plan, seeds = Plan(policy, terminal=False), rng.integers(2**63, size=walks)
        visits: list = []
        count = 0
        for i in range(walks):
            obs, state = self._reset(None if starts is None else starts[i], seed=int(seeds[i]))
            visited = [state]
            _, t, end, _ = self._episode(plan, obs, state, None, lengths[i], False,
                                         np.random.default_rng(int(seeds[i])), visited)
            visits.extend(visited if every_state else [end])
            count += t
        return thin(as_states(visits), keep, rng), count

    def from_start(self, policy: AnyPolicy, n: int, rng: np.random.Generator,
                   horizon: int | None = None,
                   stratified: bool = False) -> tuple[np.ndarray, int]:
        """Returns of ``n`` episodes of ``policy`` from ``reset()`` (a Monte-Carlo nu v_pi)."""
        starts = self.start(n, rng, True) if stratified and self.mdp is not None else None
        out = self._run(Plan(policy, self.state_reward), starts, None, np.arange(n),
                        rollout_lengths(n, horizon, self.gamma, rng), rng, horizon is not None)
        return out.returns, out.count

    def transitions(self, n: int, rng: np.random.Generator, behaviour: Policy | None = None,
                    explore: float = 1.0) -> Transitions:
        """``n`` transitions along episodes from ``reset()``, ended w.p. 1 - gamma per step.

        Actions are uniform with probability ``explore``, else ``behaviour``'s; no
        reset-to-state is needed. ``done`` marks terminations (nothing to bootstrap).
        """
        rows, (obs, info) = [], self.env.reset(seed=int(rng.integers(2**31)))
        for _ in range(n):
            legal = info.get("action_mask")
            if legal is None:
                a = int(rng.integers(self.n_actions))
            else:  # uniform over the legal actions
                a = int(rng.choice(np.flatnonzero(legal)))
            if behaviour is not None and rng.random() >= explore:
                mask = None if legal is None else np.asarray(legal)[None]
                a = int(act_masked(behaviour, np.asarray([obs]), rng, mask)[0])
            nxt, r, terminated, truncated, nxt_info = self.env.step(a)
            rows.append((info.get("state", -1), obs, a, float(r),
                         nxt_info.get("state", -1), nxt, bool(terminated)))
            obs, info = nxt, nxt_info
            if terminated or truncated or rng.random() >= self.gamma:
                obs, info = self.env.reset()
        cols = [as_states(c) if i in (0, 4) else np.asarray(c)
                for i, c in enumerate(zip(*rows, strict=True))]
        return Transitions(*cols)
