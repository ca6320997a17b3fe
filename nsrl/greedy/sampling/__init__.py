"""Rollouts and d_{pi,nu} sampling through a Gymnasium (vector) environment.

Two samplers give the same draws in distribution:

* :class:`ModelSampler`, the fast path, for an env with a batched generative model
  ``env.sample(states, actions, rng)`` and its finite model ``env.mdp`` (the native
  ``nsrl.envs.FiniteMDPVectorEnv``): policies are tabulated on the model once per call, and
  all rollouts of a greedy step (states x actions x K) run in one call of a fused numba
  kernel on the model's transition tables (:mod:`nsrl.greedy.sampling.rollouts`, with a
  numpy fallback that gives the same numbers);
* :class:`EnvSampler`, the generic path, for any single Gymnasium env whose
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

**Common random numbers (CRN).** ``q_rollouts`` estimates Q_pi(s, a) for every action of a
state; with ``crn=True`` rollout k of every action of state s is driven by the same random
numbers: the inverse-transform uniform of its t-th transition, the uniform of its t-th
mixture draw, and its (geometric) length. Each Q estimate keeps its distribution (it is
unbiased exactly when it was), but the estimates of the actions of a state become
positively correlated: two continuations that meet in the same state at the same step go
on together, so differences Q(s, a) - Q(s, b), which is all a greedy step uses, lose the
variance of everything after they meet. The fast path shares the uniforms themselves; the
generic path shares a seed per group (the env is reset with it, and the policy's draws come
from a Generator seeded with it), which is CRN exactly when the env draws its transitions
from its own ``np_random`` in a fixed order (true of nsrl's envs and of Gymnasium's
toy-text envs).

States from ``d_{pi,nu}`` are drawn as Kakade & Langford (2002) do (paper, footnote on
API(alpha)): start from nu (the env's reset distribution), follow pi, stop at each step with
probability ``1 - gamma``; the last state is the draw, at gamma / (1 - gamma) transitions
each. With ``every_state=True`` every state a walk visits is kept (thinned when fewer are
asked): a walk visits s ``d(s) / (1 - gamma)`` times in expectation, so the sample's expected
counts stay proportional to d, at one transition per state. Every transition drawn is
counted.

**Stratified states.** ``sample_states(..., stratified=True)`` draws the n states of nu on a
finite model by systematic sampling (state s appears floor or ceil of ``n nu(s)`` times), and
the walks of d_{pi,nu} from stratified start states and stratified stopping times; the
expected count of each state is unchanged (n nu(s), resp. n d(s)), so every estimator that
sums over the drawn states keeps its expectation and consistency, with less variance. The
generic path stratifies nu only when the env exposes its finite model
(``env.unwrapped.mdp``); otherwise it draws i.i.d. resets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from nsrl.greedy.base import Nu, Occupancy, Rho
from nsrl.greedy.sampling.common import (
    Plan,
    Rollouts,
    Transitions,
    crn_groups,
    rollout_lengths,
    stratified_uniforms,
)
from nsrl.greedy.sampling.env import EnvSampler
from nsrl.greedy.sampling.model import ModelSampler
from nsrl.policies import Policy, stationary_table

Sampler = EnvSampler | ModelSampler

__all__ = ["EnvSampler", "ModelSampler", "Plan", "Rollouts", "Sampler", "Transitions",
           "action_probs",
           "crn_groups", "make_sampler", "rollout_lengths", "sample_states",
           "stratified_uniforms"]


def make_sampler(env: Any, gamma: float | None = None) -> Sampler:
    """The fast sampler when ``env`` has ``sample`` and ``mdp``, else the generic one."""
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


def sample_states(sampler: Sampler, rho: Rho, n: int, rng: np.random.Generator,
                  stratified: bool = False,
                  every_state: bool = False) -> tuple[np.ndarray, int]:
    """States from ``rho`` (Nu() or Occupancy(pi)) and the transitions drawn.

    ``n`` states, or about ``n`` for d_{pi,nu} with ``every_state`` (every state of the
    walks kept, see ``ModelSampler.occupancy_states``).
    """
    if isinstance(rho, Nu):
        return sampler.start(n, rng, stratified), 0
    if isinstance(rho, Occupancy):
        return sampler.occupancy_states(rho.policy, n, rng, stratified, every_state)
    raise TypeError(f"rho should be Nu() or Occupancy(policy) for sampling, got {rho!r}.")


def action_probs(sampler: Sampler, policy: Policy, states: npt.ArrayLike, obs: np.ndarray,
                 rng: np.random.Generator | None) -> np.ndarray:
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
