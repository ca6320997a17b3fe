"""Stable-Baselines3 both ways: exact losses of SB3 agents, nsrl policies where SB3 wants a model.

* :func:`from_sb3` tabulates a trained PPO, A2C or DQN model on a finite model, so that
  ``nsrl.loss(mdp, from_sb3(model, mdp))`` is its exact loss mu (v* - v_pi).
* :class:`SB3Policy` (:func:`to_sb3`) gives any nsrl policy, non-stationary ones included, the
  ``predict(obs, state, episode_start, deterministic)`` method of SB3's ``PolicyPredictor``, so
  ``stable_baselines3.common.evaluation.evaluate_policy(to_sb3(pi), env)`` runs it. The phase of
  a non-stationary policy travels as the recurrent ``state`` and restarts at ``episode_start``.
* :class:`nsrl.sb3.vecenv.SB3VecEnv` is an SB3 ``VecEnv`` over the native vector env.

This module imports torch and stable-baselines3; ``import nsrl`` does not import it.

Examples:
    >>> import nsrl
    >>> from stable_baselines3 import PPO
    >>> mdp = nsrl.garnet(10, 2, 2, seed=0)
    >>> model = PPO("MlpPolicy", SB3VecEnv(mdp, 4, seed=0), n_steps=8, batch_size=32,
    ...             device="cpu", seed=0)
    >>> 0.0 <= nsrl.loss(mdp, from_sb3(model, mdp))
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from gymnasium import spaces

from nsrl.exact import check_mdp
from nsrl.model.mdp import FiniteMDP
from nsrl.policies import AnyPolicy, Deterministic, NonStationary, Stochastic
from nsrl.sb3.vecenv import SB3VecEnv

OBSERVATIONS = ("index", "onehot", "features")

__all__ = ["OBSERVATIONS", "SB3Policy", "SB3VecEnv", "from_sb3", "state_observations", "to_sb3"]


def state_observations(mdp: FiniteMDP, observation: str | npt.ArrayLike) -> np.ndarray:
    """The observation of every state of ``mdp``, in the layout Garnet-v0 emits.

    Args:
        mdp: the finite model.
        observation: ``"index"`` (Discrete: the state number), ``"onehot"`` (Box of size
            n_states), ``"features"`` (Box: the row Phi[s] of ``mdp.features``), or an array
            whose row s is the observation of state s (any other encoding).

    Returns:
        An array of shape (n_states, ...).
    """
    if not isinstance(observation, str):
        obs = np.asarray(observation)
        if obs.ndim == 0 or obs.shape[0] != mdp.n_states:
            raise ValueError(
                f"an observation array should have one row per state ({mdp.n_states}), got "
                f"shape {obs.shape}; or pass observation='index', 'onehot' or 'features'."
            )
        return obs
    if observation == "index":
        return np.arange(mdp.n_states, dtype=np.int64)
    if observation == "onehot":
        return np.eye(mdp.n_states, dtype=np.float32)
    if observation == "features":
        if mdp.features is None:
            raise ValueError("observation='features' needs an MDP with features (e.g. a Garnet).")
        return np.asarray(mdp.features, dtype=np.float32)
    raise ValueError(
        f"observation should be one of {OBSERVATIONS} or an array, got {observation!r}."
    )


def _infer_observation(space: spaces.Space, mdp: FiniteMDP) -> str:
    """Which Garnet-v0 observation mode ``space`` is, or a ValueError asking to say it."""
    if isinstance(space, spaces.Discrete) and space.n == mdp.n_states:
        return "index"
    if isinstance(space, spaces.Box) and len(space.shape) == 1:
        modes = [m for m, size in (("onehot", mdp.n_states),
                                   ("features", None if mdp.features is None
                                    else mdp.features.shape[1])) if size == space.shape[0]]
        if len(modes) == 1:
            return modes[0]
    raise ValueError(
        f"cannot tell how the model's observation space {space} encodes the {mdp.n_states} "
        f"states; pass observation='index', 'onehot', 'features' or an array of observations."
    )


def _policy_outputs(policy: Any, obs: np.ndarray, kind: str, chunk: int = 65536) -> np.ndarray:
    """Action probabilities (kind 'probs') or Q-values (kind 'q') of a batch, in float64."""
    out = []
    with torch.no_grad():
        for start in range(0, len(obs), chunk):
            tensor, _ = policy.obs_to_tensor(obs[start:start + chunk])
            if kind == "q":
                out.append(policy.q_net(tensor).cpu().numpy())
            else:
                out.append(policy.get_distribution(tensor).distribution.probs.cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def from_sb3(model: Any, mdp: FiniteMDP, observation: str | npt.ArrayLike | None = None, *,
             deterministic: bool = False,
             exploration_rate: float | str | None = None) -> Deterministic | Stochastic:
    """Tabulate a trained SB3 PPO, A2C or DQN model on a finite model.

    Every state's observation goes through the model's network once (one batched forward).

    * Actor-critic models (PPO, A2C: any policy with ``get_distribution``): the table of the
      action distribution, pi[s, a] = probs(obs(s))[a], a :class:`nsrl.Stochastic`; with
      ``deterministic=True`` the mode of that distribution, what ``model.predict(obs,
      deterministic=True)`` returns, as a :class:`nsrl.Deterministic`.
    * DQN: the greedy policy argmax_a q_net(obs(s))[a], what ``predict(obs,
      deterministic=True)`` and ``evaluate_policy`` use. DQN's epsilon-greedy exploration is
      a training device and is left out by default. ``exploration_rate=eps`` (a float, or
      ``"current"`` for ``model.exploration_rate``) gives the behaviour policy instead,
      (1 - eps) greedy + eps uniform: SB3's ``predict(deterministic=False)`` draws one coin
      per call for the whole batch, but for each state that is this same distribution.

    Args:
        model: a trained ``PPO``, ``A2C`` or ``DQN`` (or its ``.policy``), Discrete actions.
        mdp: the finite model the model was trained on (``env.unwrapped.mdp``).
        observation: how states are encoded: ``"index"``, ``"onehot"``, ``"features"`` (the
            modes of Garnet-v0), an array of per-state observations, or None to read it from
            the model's observation space.
        deterministic: tabulate the mode of an actor-critic policy instead of its distribution.
        exploration_rate: DQN only: mix the greedy policy with the uniform one.

    Returns:
        A :class:`nsrl.Stochastic` or :class:`nsrl.Deterministic` policy on ``mdp``.
    """
    check_mdp(mdp)
    policy = getattr(model, "policy", model)
    if not hasattr(policy, "obs_to_tensor"):
        raise TypeError(
            f"expected a Stable-Baselines3 model or policy, got {type(model).__name__}."
        )
    space = policy.action_space
    if not isinstance(space, spaces.Discrete) or space.n != mdp.n_actions:
        raise ValueError(
            f"the model's action space is {space}, the MDP has Discrete({mdp.n_actions}) "
            f"actions; train the model on this MDP's environment."
        )
    if observation is None:
        observation = _infer_observation(policy.observation_space, mdp)
    obs = state_observations(mdp, observation)
    if hasattr(policy, "q_net"):
        greedy = np.argmax(_policy_outputs(policy, obs, "q"), axis=1)
        eps = getattr(model, "exploration_rate", 0.0) if exploration_rate == "current" \
            else exploration_rate
        if eps is None or eps == 0:
            return Deterministic(greedy)
        if not 0.0 <= float(eps) <= 1.0:
            raise ValueError(f"exploration_rate should be in [0, 1] or 'current', got {eps!r}.")
        table = np.full((mdp.n_states, mdp.n_actions), float(eps) / mdp.n_actions)
        table[np.arange(mdp.n_states), greedy] += 1.0 - float(eps)
        return Stochastic(table)
    if exploration_rate is not None:
        raise ValueError("exploration_rate applies to DQN models only; PPO/A2C act stochastically.")
    if not hasattr(policy, "get_distribution"):
        raise TypeError(
            f"{type(policy).__name__} has neither q_net (DQN) nor get_distribution (PPO, A2C)."
        )
    probs = _policy_outputs(policy, obs, "probs")
    if deterministic:
        return Deterministic(np.argmax(probs, axis=1))
    return Stochastic(probs / probs.sum(axis=1, keepdims=True))


class SB3Policy:
    """An nsrl policy seen by Stable-Baselines3 as a model with ``predict``.

    ``predict`` follows SB3's ``PolicyPredictor`` protocol. The recurrent ``state`` is the
    tuple ``(phase,)``: one int per env, the time step since the episode began, which a
    non-stationary policy needs (PSDP's sigma_k, the loops of NSPI(m)); ``episode_start``
    resets it to 0. Stationary policies ignore it.

    ``deterministic`` is accepted and ignored: the wrapper acts as the nsrl policy does (a
    mixture draws a component each step with this wrapper's Generator), because what
    ``evaluate_policy`` should then measure is that policy's value.

    Args:
        policy: any nsrl policy (``act(obs, phase, rng)``).
        mdp: the finite model; needed for the ``"onehot"`` and ``"features"`` observations.
        observation: what the env emits: ``"index"``, ``"onehot"`` or ``"features"`` (decoded
            to state indices for the policy), or ``"raw"`` (handed to ``policy.act`` as is,
            e.g. for classifier policies over features).
        seed: seed of the Generator that stochastic policies draw from.
    """

    def __init__(self, policy: AnyPolicy, mdp: FiniteMDP | None = None, observation: str = "index",
                 seed: int | None = None) -> None:
        if not hasattr(policy, "act"):
            raise TypeError(f"expected an nsrl policy with act(), got {type(policy).__name__}.")
        if observation not in OBSERVATIONS + ("raw",):
            raise ValueError(
                f"observation should be one of {OBSERVATIONS + ('raw',)}, got {observation!r}."
            )
        if observation in ("onehot", "features") and mdp is None:
            raise ValueError(f"observation={observation!r} needs mdp= to decode observations.")
        self.policy, self.mdp, self.observation = policy, mdp, observation
        self._table: np.ndarray | None = None if mdp is None or observation in ("index", "raw") \
            else state_observations(check_mdp(mdp), observation).astype(np.float64)
        self.rng = np.random.default_rng(seed)

    def __repr__(self) -> str:
        return f"SB3Policy({self.policy!r}, observation={self.observation!r})"

    def _decode(self, obs: np.ndarray) -> np.ndarray:
        """State indices of a batch of observations (nearest row for features)."""
        if self.observation == "raw":
            return obs
        if self.observation == "index":
            return obs.reshape(len(obs)).astype(np.int64)
        obs = obs.reshape(len(obs), -1).astype(np.float64)
        # Nearest row rather than equality: the env emits float32 copies of float64 rows.
        assert self._table is not None  # onehot and features observations have one
        d2 = ((obs[:, None, :] - self._table[None, :, :]) ** 2).sum(axis=-1)
        return np.argmin(d2, axis=1)

    def predict(self, observation: npt.ArrayLike, state: tuple[np.ndarray] | None = None,
                episode_start: np.ndarray | None = None,
                deterministic: bool = False) -> tuple[np.ndarray, tuple[np.ndarray]]:
        """Actions for a batch of observations, and the next phases as the recurrent state.

        Args:
            observation: one observation or a batch (first axis: envs).
            state: ``(phase,)`` returned by the previous call, or None at the start.
            episode_start: bool per env; True restarts that env's phase at 0.
            deterministic: ignored (see the class docstring).

        Returns:
            ``(actions, (phase + 1,))``.
        """
        obs = np.asarray(observation)
        single = obs.ndim == (0 if self.observation == "index" else 1) \
            and self.observation != "raw"
        if single:
            obs = obs[None]
        n = len(obs)
        phase = np.zeros(n, dtype=np.int64) if state is None else \
            np.asarray(state[0] if isinstance(state, tuple) else state, dtype=np.int64).reshape(n)
        if episode_start is not None:
            phase = np.where(np.asarray(episode_start, dtype=bool).reshape(n), 0, phase)
        if isinstance(self.policy, NonStationary):
            actions = np.asarray(self.policy.act(self._decode(obs), phase=phase, rng=self.rng))
        else:  # a stationary policy acts alike at every phase
            actions = np.asarray(self.policy.act(self._decode(obs), rng=self.rng))
        return (actions[0] if single else actions), (phase + 1,)


def to_sb3(policy: AnyPolicy, mdp: FiniteMDP | None = None, observation: str = "index",
           seed: int | None = None) -> SB3Policy:
    """Wrap an nsrl policy for SB3 (``evaluate_policy`` etc.); see :class:`SB3Policy`."""
    return SB3Policy(policy, mdp, observation, seed)
