"""Fast path: batched draws from the generative model of an env's finite model ``env.mdp``.

See :mod:`nsrl.greedy.sampling` for what rollouts, horizons, CRN and d_{pi,nu} draws mean.

For the native envs of :mod:`nsrl.envs` (whose ``sample`` is the transition kernel of
``env.mdp``), rollouts run whole in :mod:`nsrl.greedy.sampling.rollouts` on the model's
transition tables with the same inverse-transform rule, so that the sampler chooses the
uniforms: that is what makes common random numbers possible. An env whose ``sample`` is
its own (a wrapper, a counter) is stepped through ``env.sample`` one time step at a time;
its rollouts use independent random numbers (``crn`` has no effect there).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from nsrl.envs.model import ModelAccess
from nsrl.greedy.sampling import rollouts, walks
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
from nsrl.model.kernels import start_states
from nsrl.policies import AnyPolicy, Policy


class ModelSampler:
    """Fast path: batched draws from ``env.sample`` on the env's finite model ``env.mdp``."""

    def __init__(self, env: Any) -> None:
        self.env, self.mdp = env, env.mdp
        self.gamma, self.n_actions = self.mdp.gamma, self.mdp.n_actions
        self.state_reward = self.mdp.state_reward
        # The fused kernel only replaces env.sample when env.sample *is* the model's kernel.
        self.native = getattr(type(env), "sample", None) is ModelAccess.sample
        self.backend = getattr(env, "backend", None)

    def start(self, n: int, rng: np.random.Generator, stratified: bool = False) -> np.ndarray:
        """``n`` states from nu, the env's reset distribution (``mdp.start``).

        With ``stratified``, systematic sampling: state s appears floor or ceil of
        ``n nu(s)`` times, in increasing order (shuffle them if order matters; the
        rollouts of each state draw their own numbers, so here it does not).
        """
        if not stratified:
            return start_states(self.mdp, n, rng)
        cdf = np.cumsum(self.mdp.start)
        idx = np.searchsorted(cdf, stratified_uniforms(n, rng, shuffle=False), side="right")
        last = int(np.flatnonzero(self.mdp.start > 0)[-1])
        return np.minimum(idx, last).astype(np.int64)

    def observe(self, states: npt.ArrayLike) -> np.ndarray:
        """Observations of ``states`` as the env gives them (what policies are trained on)."""
        observe = getattr(self.env, "observe", None)
        return np.asarray(states) if observe is None else observe(np.asarray(states))

    def act(self, plan: Plan, phase: int, states: np.ndarray,
            rng: np.random.Generator) -> np.ndarray:
        """Actions of the plan's policy at ``phase`` in ``states`` (tabulated on the model)."""
        actions, cdf = plan.tables(phase, self.mdp)
        if actions is not None:
            return actions[states]
        assert cdf is not None  # tables() gives the actions or the cdf
        u = rng.random(len(states))
        return (cdf[states, :-1] <= u[:, None]).sum(axis=1)

    def _run(self, plan: Plan, states: npt.ArrayLike, actions: npt.ArrayLike | None,
             group: np.ndarray, lengths: np.ndarray, rng: np.random.Generator, discounted: bool,
             group_lengths: np.ndarray | None = None) -> Rollouts:
        states = np.asarray(states, dtype=np.int64)
        first = None if actions is None else np.asarray(actions, dtype=np.int64)
        if not self.native:
            return self._run_stepwise(plan, states, first, lengths, rng, discounted)
        natural = plan.length(first is not None)  # a finite plan ends there anyway
        if natural < np.inf:
            lengths = np.minimum(lengths, int(natural))
            group_lengths = None if group_lengths is None else np.minimum(group_lengths,
                                                                          int(natural))
        longest = int(lengths.max()) if len(lengths) else 0
        program = plan.program(self.mdp, longest)
        ret, end, steps, *rs = rollouts.run(self.mdp, program, plan.loop, states, first, group,
                                          lengths, rng, self.gamma, discounted, self.backend,
                                          group_lengths=group_lengths)
        return Rollouts(ret, end, None, steps, int(steps.sum()), *rs)

    def q_rollouts(self, policy: AnyPolicy, states: np.ndarray, rng: np.random.Generator,
                   n_rollouts: int = 1, horizon: int | None = None,
                   crn: bool = True) -> Rollouts:
        """Rollouts for Q_policy(s, a): every action of every state, ``n_rollouts`` each.

        Rollouts are ordered (state, action, k). With ``crn``, rollout k of every action of
        a state shares its uniforms and its (geometric) length (``crn_groups``).
        """
        n, A, K = len(states), self.n_actions, int(n_rollouts)
        group = crn_groups(n, A, K, crn)
        lengths = rollout_lengths(n * K * (1 if crn else A), horizon, self.gamma, rng)
        s = np.repeat(np.asarray(states, dtype=np.int64), A * K)
        a = np.tile(np.repeat(np.arange(A, dtype=np.int64), K), n)
        return self._run(Plan(policy, self.state_reward), s, a, group, lengths[group], rng,
                         horizon is not None, group_lengths=lengths)

    def rollouts(self, policy: AnyPolicy, states: np.ndarray, actions: np.ndarray | None,
                 rng: np.random.Generator, horizon: int | None = None) -> tuple[np.ndarray, int]:
        """Returns of independent rollouts from ``states``, and the transitions drawn.

        Each rollout takes its ``actions`` entry first (the policy acts from the start when
        ``actions`` is None).
        """
        n = len(states)
        lengths = rollout_lengths(n, horizon, self.gamma, rng)
        out = self._run(Plan(policy, self.state_reward), states, actions,
                        np.arange(n, dtype=np.int64), lengths, rng, horizon is not None,
                        group_lengths=lengths)
        return out.returns, out.count

    def _run_stepwise(self, plan: Plan, states: np.ndarray, first: np.ndarray | None,
                      lengths: np.ndarray, rng: np.random.Generator, discounted: bool,
                      visited: list[np.ndarray] | None = None) -> Rollouts:
        """One ``env.sample`` per time step over the rollouts still running.

        The states reached at each step are appended to ``visited`` if given.
        """
        n = len(states)
        order = np.argsort(-lengths, kind="stable")  # the live rollouts are always a prefix
        neg, s = -lengths[order], states[order].copy()
        first = None if first is None else first[order]
        returns, steps, t, disc = np.zeros(n), np.zeros(n, dtype=np.int64), 0, 1.0
        offset = 0 if first is None else 1
        while True:
            alive = int(np.searchsorted(neg, -t, side="left"))  # rollouts longer than t
            if alive == 0 or (t >= offset and plan.at(t - offset) is None):
                break
            a = (first[:alive] if first is not None and t < offset
                 else self.act(plan, t - offset, s[:alive], rng))
            s[:alive], r = self.env.sample(s[:alive], a, rng)
            if t == 0 and first is not None:
                r0, s1 = np.zeros(n), np.zeros(n, dtype=np.int64)
                r0[:alive], s1[:alive] = r, s[:alive]
            if visited is not None:
                visited.append(s[:alive].copy())
            returns[:alive] += disc * r
            steps[:alive] += 1
            t += 1
            disc = disc * self.gamma if discounted else 1.0
        out = Rollouts(np.empty(n), np.empty(n, dtype=np.int64), None,
                       np.empty(n, dtype=np.int64), int(steps.sum()))
        out.returns[order], out.states[order], out.steps[order] = returns, s, steps
        if first is not None and t > 0:
            out.first_rewards, out.first_states = np.empty(n), np.empty(n, dtype=np.int64)
            out.first_rewards[order], out.first_states[order] = r0, s1
        return out

    def occupancy_states(self, policy: AnyPolicy, n: int, rng: np.random.Generator,
                         stratified: bool = False,
                         every_state: bool = False) -> tuple[np.ndarray, int]:
        """States from d_{policy,nu} by geometric stopping, and the transitions used.

        A walk starts from nu, follows ``policy`` and stops w.p. 1 - gamma before each
        step (Kakade & Langford 2002): its last state is a draw of d_{policy,nu}, at an
        expected cost of gamma / (1 - gamma) transitions; ``n`` walks give ``n`` states.
        With ``every_state``, the states a walk visits are all kept (each w.p. p, see
        :func:`~nsrl.greedy.sampling.common.walks_for`, when fewer than one walk's worth
        are asked): one walk visits s ``sum_t gamma^t P(s_t = s) = d(s) / (1 - gamma)``
        times in expectation, so the expected count of every state in the sample is
        ``n d(s)``, at one transition per state instead of gamma / (1 - gamma).
        With ``stratified``, the start states and the stopping times are each drawn by
        systematic sampling (independently paired); every walk keeps its distribution.
        """
        walks, keep = walks_for(n, self.gamma) if every_state else (n, 1.0)
        u = stratified_uniforms(walks, rng) if stratified else rng.random(walks)
        lengths = geometric_lengths(u, self.gamma)
        s0, plan = self.start(walks, rng, stratified), Plan(policy, terminal=False)
        if not every_state:
            out = self._run(plan, s0, None, np.arange(walks, dtype=np.int64), lengths, rng,
                            False, group_lengths=lengths)
            return out.states, out.count
        if not self.native:
            visited: list[np.ndarray] = []
            out = self._run_stepwise(plan, s0, None, lengths, rng, False, visited)
            path = np.concatenate([s0] + visited)
        else:
            _, _, steps, path, start = rollouts.run(
                self.mdp, plan.program(self.mdp, int(lengths.max())), plan.loop, s0, None,
                np.arange(walks, dtype=np.int64), lengths, rng, self.gamma, False,
                self.backend, record=True)
            t = np.arange(len(path)) - np.repeat(start, lengths + 1)  # step of each entry
            path = path[t <= np.repeat(steps, lengths + 1)]
            return thin(path, keep, rng), int(steps.sum())
        return thin(path, keep, rng), out.count

    def from_start(self, policy: AnyPolicy, n: int, rng: np.random.Generator,
                   horizon: int | None = None,
                   stratified: bool = False) -> tuple[np.ndarray, int]:
        """Returns of ``n`` rollouts of ``policy`` from nu (a Monte-Carlo nu v_pi)."""
        return self.rollouts(policy, self.start(n, rng, stratified), None, rng, horizon)

    def transitions(self, n: int, rng: np.random.Generator, behaviour: Policy | None = None,
                    explore: float = 1.0) -> Transitions:
        """``n`` transitions along walks from nu that restart w.p. 1 - gamma at each step.

        Visited states follow d_{b,nu} of the behaviour b: uniform actions with probability
        ``explore``, else ``behaviour``'s. Walkers run about four episodes each. Native envs
        walk in compiled code (:mod:`nsrl.greedy.sampling.walks`); others step through
        ``env.sample``.
        """
        walkers = max(1, min(n, int(n * (1.0 - self.gamma) / 4)))
        plan = None if behaviour is None else Plan(behaviour, False)
        if self.native and n:
            program: tuple[np.ndarray, np.ndarray, bool] | None = None
            if plan is not None:
                actions, cdf = plan.tables(0, self.mdp)
                if actions is not None:
                    program = (actions, np.zeros((1, 1)), False)
                else:
                    assert cdf is not None  # tables() gives the actions or the cdf
                    program = (np.zeros(self.mdp.n_states, dtype=np.int64), cdf, True)
            s, a, r, nxt = walks.walk(self.mdp, n, walkers, rng, program, explore, self.backend)
        else:
            s, a, r, nxt = self._stepped_walks(n, walkers, rng, plan, explore)
        return Transitions(s, self.observe(s), a, r, nxt, self.observe(nxt), np.zeros(n, bool))

    def _stepped_walks(self, n: int, walkers: int, rng: np.random.Generator, plan: Plan | None,
                       explore: float) -> tuple[np.ndarray, ...]:
        """The walks of :meth:`transitions` through ``env.sample``, one time step at a time."""
        s = self.start(walkers, rng)
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
        if not out:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0), empty
        return tuple(np.concatenate(x) for x in zip(*out, strict=True))
