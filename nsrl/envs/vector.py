"""Native vector envs over a FiniteMDP: all N states in one array, one Generator, one kernel."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nsrl.model import kernels
from nsrl.model.mdp import FiniteMDP

from . import observations
from .garnet import cached_garnet
from .model import ModelAccess, read_options


class FiniteMDPVectorEnv(ModelAccess, VectorEnv):
    """N independent copies of a finite MDP, stepped together by :mod:`nsrl.model.kernels`.

    Continuing task: never terminated; each copy is truncated after ``max_episode_steps``
    steps (if given) and, as in Gymnasium's ``AutoresetMode.NEXT_STEP``, reset on the
    following ``step`` call, which returns its new start observation with reward 0.

    Args:
        mdp: the model (``.mdp`` afterwards).
        num_envs: number of copies N >= 1.
        observation: "index" (MultiDiscrete of N state indices), "onehot" or "features".
        max_episode_steps: truncation horizon, None for never.
        backend: kernel backend, "numba", "numpy" or None (the default of nsrl.model.kernels).

    ``reset(options={"state": s})`` starts every copy in state ``s`` (an int) or copy i in
    ``s[i]`` (an int array of shape (N,)); otherwise start states are drawn from ``mdp.start``.

    Examples:
        >>> import nsrl
        >>> env = FiniteMDPVectorEnv(nsrl.garnet(20, 2, 3, seed=0), num_envs=8)
        >>> obs, info = env.reset(seed=0, options={"state": 3})
        >>> obs.tolist() == [3] * 8
        True
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        mdp: FiniteMDP,
        num_envs: int = 1,
        observation: str = "index",
        max_episode_steps: int | None = None,
        backend: str | None = None,
        render_mode: None = None,
    ):
        self._init_model(mdp, observation, backend)
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise ValueError(f"num_envs should be an int >= 1, got {num_envs!r}.")
        if max_episode_steps is not None and (
            not isinstance(max_episode_steps, int | np.integer) or max_episode_steps < 1
        ):
            raise ValueError(
                f"max_episode_steps should be None or an int >= 1, got {max_episode_steps!r}."
            )
        if render_mode is not None:
            raise ValueError(f"render_mode should be None (no rendering), got {render_mode!r}.")
        self.num_envs = int(num_envs)
        self.max_episode_steps = max_episode_steps
        self.render_mode = None
        self.single_observation_space = observations.single_space(mdp, observation)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(mdp.n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.states = np.zeros(self.num_envs, dtype=np.int64)
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self.prev_done = np.zeros(self.num_envs, dtype=np.bool_)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset every copy: to ``options["state"]`` if given, else states drawn from nu."""
        super().reset(seed=seed)
        states = read_options(options, self.mdp.n_states, self.num_envs)
        if states is None:
            states = kernels.start_states(self.mdp, self.num_envs, self.np_random)
        self.states = states.copy()
        self.elapsed[:] = 0
        self.prev_done[:] = False
        return self._observe(), {"state": self.states.copy()}

    def step(self, actions):
        """Step every copy with ``actions`` (int array of shape (N,))."""
        actions = kernels.check_indices("actions", actions, self.mdp.n_actions, self.num_envs)
        states, rewards = kernels.step_unchecked(
            self.mdp, self.states, actions, self.np_random, backend=self.backend
        )
        self.elapsed += 1
        done = self.prev_done
        if done.any():  # NEXT_STEP autoreset: the copies truncated last step start afresh.
            states[done] = kernels.start_states(self.mdp, int(done.sum()), self.np_random)
            rewards[done] = 0.0
            self.elapsed[done] = 0
        self.states = states
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        if self.max_episode_steps is not None:
            truncated = self.elapsed >= self.max_episode_steps
        self.prev_done = truncated
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        return self._observe(), rewards, terminated, truncated.copy(), {"state": states.copy()}

    def _observe(self) -> np.ndarray:
        return observations.encode(self.states, self.mdp, self.observation, self._phi)


class GarnetVectorEnv(FiniteMDPVectorEnv):
    """N copies of one Garnet G(n_states, n_actions, branching, n_features), natively batched.

    ``.mdp`` is ``nsrl.garnet(n_states, n_actions, branching, n_features, gamma, seed=seed)``;
    ``seed`` fixes the instance, ``reset(seed=...)`` the randomness of the runs. See
    :class:`FiniteMDPVectorEnv` for the API and :class:`nsrl.envs.GarnetEnv` for the model.

    Examples:
        >>> import gymnasium as gym, nsrl
        >>> envs = gym.make_vec("Garnet-v0", num_envs=4)
        >>> type(envs).__name__, envs.unwrapped.mdp == nsrl.garnet(100, 4, 5, seed=0)
        ('GarnetVectorEnv', True)
    """

    def __init__(
        self,
        num_envs: int = 1,
        n_states: int = 100,
        n_actions: int = 4,
        branching: int = 5,
        n_features: int | None = None,
        gamma: float = 0.99,
        seed: int = 0,
        observation: str = "index",
        max_episode_steps: int | None = None,
        backend: str | None = None,
        render_mode: None = None,
    ):
        mdp = cached_garnet(n_states, n_actions, branching, n_features, gamma, seed)
        super().__init__(mdp, num_envs, observation, max_episode_steps, backend, render_mode)
