"""An SB3 ``VecEnv`` over a finite MDP's batched kernel, so SB3 agents train at native speed.

SB3 does not consume ``gymnasium.vector.VectorEnv``; it wants its own ``VecEnv`` protocol:
``reset() -> obs``, ``step(actions) -> (obs, rewards, dones, infos)`` with *same-step*
autoreset (a finished env is reset inside ``step``; the observation that ended the episode is
kept in ``infos[i]["terminal_observation"]``) and ``infos[i]["TimeLimit.truncated"]`` set when
the episode was cut by the time limit, so that PPO/A2C bootstrap through it. The gymnasium
native vector env autoresets on the *next* step instead, so this class drives the same
compiled kernel (:mod:`nsrl.model.kernels`) directly with one Generator for the whole batch.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from nsrl.envs import observations
from nsrl.exact import check_mdp
from nsrl.model.kernels import check_indices, resolve_backend, start_states, step_unchecked
from nsrl.model.mdp import FiniteMDP


class SB3VecEnv(VecEnv):
    """``num_envs`` copies of a finite MDP as one SB3 ``VecEnv`` (continuing task).

    Rewards are R[s, a] of the state left (r(s) for a Garnet). Episodes never terminate by
    themselves; they are truncated after ``max_episode_steps`` (``TimeLimit.truncated``), so
    SB3 bootstraps and the discounted objective is the MDP's. With ``geometric=True`` each
    step instead *terminates* the episode with probability 1 - gamma after its reward:
    the undiscounted return of an episode is then an unbiased sample of v_pi(s_0), which is
    what ``evaluate_policy`` averages, so its mean estimates nu v_pi.

    Args:
        mdp: the finite model (``nsrl.FiniteMDP``).
        num_envs: number of parallel copies N.
        observation: ``"index"`` (Discrete), ``"onehot"`` or ``"features"`` (Box, float32).
        max_episode_steps: truncation horizon, or None (never truncated).
        geometric: terminate each step with probability 1 - gamma (for evaluation).
        seed: seed of the batch's Generator; ``seed(n)`` before a ``reset`` reseeds it.
        backend: kernel backend, "numba", "numpy" or None (see :mod:`nsrl.model.kernels`).

    Observation spaces and encodings are those of Garnet-v0 (:mod:`nsrl.envs.observations`).

    Examples:
        >>> import nsrl
        >>> venv = SB3VecEnv(nsrl.garnet(10, 2, 2, seed=0), 4, max_episode_steps=5, seed=0)
        >>> obs = venv.reset()
        >>> obs.shape, venv.step(np.zeros(4, dtype=int))[1].dtype
        ((4,), dtype('float32'))
    """

    def __init__(self, mdp: FiniteMDP, num_envs: int, observation: str = "index",
                 max_episode_steps: int | None = None, geometric: bool = False,
                 seed: int | None = None,
                 backend: str | None = None) -> None:
        self.mdp = check_mdp(mdp)
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) \
                or num_envs < 1:
            raise ValueError(f"num_envs should be a positive int, got {num_envs!r}.")
        if max_episode_steps is not None and int(max_episode_steps) < 1:
            raise ValueError(f"max_episode_steps should be >= 1 or None, got {max_episode_steps}.")
        self.observation = observations.check_mode(observation, mdp)
        self.backend = None if backend is None else resolve_backend(backend)
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self.geometric = bool(geometric)
        self.render_mode = None
        obs_space = observations.single_space(mdp, observation)
        super().__init__(int(num_envs), obs_space, spaces.Discrete(mdp.n_actions))
        self._phi = observations.feature_table(mdp) if observation == "features" else None
        self._rng = np.random.default_rng(seed)
        self._states = np.zeros(self.num_envs, dtype=np.int64)
        self._t = np.zeros(self.num_envs, dtype=np.int64)
        self._actions = np.zeros(self.num_envs, dtype=np.int64)
        self._next = np.empty(self.num_envs, dtype=np.int64)
        self._rewards = np.empty(self.num_envs, dtype=np.float64)

    @classmethod
    def from_env(cls, env: Any, *, geometric: bool = False, seed: int | None = None) -> SB3VecEnv:
        """The SB3 view of a native vector env (``nsrl.envs.FiniteMDPVectorEnv``, Garnet's).

        Reads its model, size, observation mode, time limit and kernel backend; the new env
        has its own Generator (``seed``).
        """
        mdp = getattr(env, "mdp", None) or getattr(getattr(env, "unwrapped", None), "mdp", None)
        if mdp is None:
            raise TypeError(f"expected an nsrl vector env with .mdp, got {type(env).__name__}.")
        return cls(mdp, env.num_envs, getattr(env, "observation", "index"),
                   getattr(env, "max_episode_steps", None), geometric, seed,
                   getattr(env, "backend", None))

    def observe(self, states: np.ndarray) -> np.ndarray:
        """Observations of a batch of states in this env's observation mode."""
        return observations.encode(states, self.mdp, self.observation, self._phi)

    def _start(self, n: int) -> np.ndarray:
        return start_states(self.mdp, n, self._rng)

    def reset(self) -> VecEnvObs:
        """Reset every env (start states from nu, or ``set_options({"state": s})``)."""
        if self._seeds[0] is not None:
            self._rng = np.random.default_rng(self._seeds[0])
        self._states = self._start(self.num_envs)
        for i, options in enumerate(self._options):
            if options and "state" in options:
                self._states[i] = check_indices("options['state']", options["state"],
                                                self.mdp.n_states, size=1)[0]
        self._t[:] = 0
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self.observe(self._states)

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions of the next step (one int per env)."""
        self._actions = check_indices("actions", np.asarray(actions).reshape(-1),
                                      self.mdp.n_actions, size=self.num_envs)

    def step_wait(self) -> VecEnvStepReturn:
        """One transition per env; finished envs are reset in the same call."""
        step_unchecked(self.mdp, self._states, self._actions, self._rng,
                       self._next, self._rewards, backend=self.backend)
        self._t += 1
        truncated = np.zeros(self.num_envs, dtype=bool) if self.max_episode_steps is None \
            else self._t >= self.max_episode_steps
        terminated = np.zeros(self.num_envs, dtype=bool)
        if self.geometric:
            terminated = self._rng.random(self.num_envs) >= self.mdp.gamma
        dones = terminated | truncated
        self._states = self._next.copy()
        obs = self.observe(self._states)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        done_idx = np.flatnonzero(dones)
        if done_idx.size:
            for i in done_idx:
                infos[i]["terminal_observation"] = obs[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            self._states[done_idx] = self._start(done_idx.size)
            self._t[done_idx] = 0
            obs[done_idx] = self.observe(self._states[done_idx])
        return obs, self._rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Nothing to release."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of this env, once per index (the copies share one object)."""
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute (the copies share one object, so it applies to all of them)."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Call a method of this env once per index."""
        method = getattr(self, method_name)
        return [method(*method_args, **method_kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: VecEnvIndices = None) -> list[bool]:
        """No gymnasium wrappers are involved: False for every env."""
        return [False for _ in self._get_indices(indices)]
