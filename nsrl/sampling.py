"""Rollouts and d_{pi,nu} sampling through a Gymnasium (vector) environment.

Two samplers give the same draws in distribution:

* :class:`ModelSampler`, the fast path, for an env with a batched generative model
  ``env.sample(states, actions, rng)`` and its finite model ``env.mdp`` (the native
  ``nsrl.envs.FiniteMDPVectorEnv``): policies are tabulated on the model once per call, and
  all rollouts of a greedy step (states x actions x K) advance together, one vectorised step
  per time step;
* :class:`~nsrl.sampling_generic.EnvSampler`, the generic path, for any single Gymnasium env whose
  ``reset(options={"state": s})`` puts it in state ``s``: one rollout at a time through
  ``reset``/``step``, the policy acting on the env's observations.

Rollouts (Lagoudakis & Parr 2003) estimate ``Q_pi(s, a) = R(s, a) + gamma P v_pi``: take
``a`` in ``s``, then follow ``pi`` from its phase 0. Every policy kind is followed: a
mixture draws a component (here: an action from its table) at every step; a finite sequence
sigma stops after its last policy, and for a state-reward MDP one more transition collects
the terminal value ``v_empty = r(s_end)`` (as the exact backend's ``v_empty = r``); a
periodic loop cycles through its policies. The horizon is either fixed (``H`` rewards,
discounted: bias at most ``gamma^H V_max``) or geometric (continue each step with
probability gamma, rewards undiscounted: an unbiased estimate of Q).

States from ``d_{pi,nu}`` are drawn as Kakade & Langford (2002) do (paper, footnote on
API(alpha)): start from nu (the env's reset distribution), follow pi, stop at each step with
probability ``1 - gamma``. Every transition drawn is counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nsrl.greedy.base import Nu, Occupancy
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


class ModelSampler:
    """Fast path: batched draws from ``env.sample`` on the env's finite model ``env.mdp``."""

    def __init__(self, env):
        self.env, self.mdp = env, env.mdp
        self.gamma, self.n_actions = self.mdp.gamma, self.mdp.n_actions
        self.state_reward = self.mdp.state_reward

    def start(self, n: int, rng) -> np.ndarray:
        """``n`` states from nu, the env's reset distribution (``mdp.start``)."""
        cdf = np.cumsum(self.mdp.start)
        last = int(np.flatnonzero(self.mdp.start > 0)[-1])
        return np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), last)

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
        lengths = _lengths(n, horizon, self.gamma, rng)
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


def _lengths(n: int, horizon, gamma: float, rng) -> np.ndarray:
    """Number of transitions of each rollout: H, or 1 + Geometric with continuation gamma."""
    if horizon is None:
        return rng.geometric(1.0 - gamma, size=n).astype(np.int64)
    return np.full(n, int(horizon), dtype=np.int64)


def make_sampler(env, gamma: float | None = None):
    """The fast sampler when ``env`` has ``sample`` and ``mdp``, else the generic one."""
    from nsrl.sampling_generic import EnvSampler

    if hasattr(env, "sample") and hasattr(env, "mdp"):
        return ModelSampler(env)
    if hasattr(env, "num_envs"):
        raise TypeError(
            f"{type(env).__name__} is a vector env without a batched generative model "
            f"(sample(states, actions, rng)); pass a single env with reset-to-state, or "
            f"nsrl.envs.FiniteMDPVectorEnv."
        )
    if not hasattr(env, "reset") or not hasattr(getattr(env, "action_space", None), "n"):
        raise TypeError(
            f"expected a Gymnasium env with a Discrete action space, got {type(env).__name__}."
        )
    mdp = getattr(env.unwrapped, "mdp", None)
    gamma = gamma if gamma is not None else getattr(mdp, "gamma", None)
    if gamma is None:
        raise ValueError(f"{type(env).__name__} has no model: pass gamma=... (e.g. 0.99).")
    return EnvSampler(env, gamma, state_reward=getattr(mdp, "state_reward", False))


def sample_states(sampler, rho, n: int, rng) -> tuple[np.ndarray, int]:
    """``n`` states from ``rho`` (Nu() or Occupancy(pi)) and the transitions drawn."""
    if isinstance(rho, Nu):
        return sampler.start(n, rng), 0
    if isinstance(rho, Occupancy):
        return sampler.occupancy_states(rho.policy, n, rng)
    raise TypeError(f"rho should be Nu() or Occupancy(policy) for sampling, got {rho!r}.")


def action_probs(sampler, policy, states, obs, rng) -> np.ndarray:
    """pi(a | s) of a stationary policy, shape (n, n_actions).

    On a model it is the policy's table; otherwise each mixture component acts on the
    observations (a stochastic policy that is not a mixture contributes one drawn action,
    an unbiased estimate).
    """
    if sampler.mdp is not None and np.all(np.asarray(states) >= 0):
        return stationary_table(policy, sampler.mdp)[np.asarray(states, dtype=np.int64)]
    probs = np.zeros((len(obs), sampler.n_actions))
    for w, pi in getattr(policy, "components", [(1.0, policy)]):
        probs[np.arange(len(obs)), pi.act(obs, 0, rng)] += w
    return probs


def __getattr__(name):
    if name == "EnvSampler":  # defined in nsrl.sampling_generic (which imports this module)
        from nsrl.sampling_generic import EnvSampler

        return EnvSampler
    raise AttributeError(f"module 'nsrl.sampling' has no attribute {name!r}")
