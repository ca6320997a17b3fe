"""Native vector envs over a FiniteMDP: all N states in one array, one Generator, one kernel."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from nsrl.model import kernels
from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory

from . import observations, render
from .garnet import cached_garnet
from .model import ModelAccess, read_vector_options


def check_autoreset_mode(mode) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode`` (the enum or its value, "SameStep"), else ValueError."""
    try:
        return mode if isinstance(mode, AutoresetMode) else AutoresetMode(mode)
    except ValueError:
        names = ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in AutoresetMode)
        raise ValueError(f"autoreset_mode should be one of {names}, got {mode!r}.") from None


# Per copy: states, clocks, masks and the step's temporaries (~8 int64/float64 arrays), and
# per observation entry the batched space's low and high and one batch of observations.
_COPY_BYTES = 96
_OBSERVATION_ENTRY_BYTES = 12


def vector_nbytes(mdp: FiniteMDP, num_envs: int, observation: str) -> float:
    """Estimated memory (bytes) of a vector env of ``num_envs`` copies, before any is made."""
    width = {"index": 1, "onehot": mdp.n_states}.get(observation, mdp.n_features or 1)
    return float(num_envs) * (_COPY_BYTES + _OBSERVATION_ENTRY_BYTES * width)


class FiniteMDPVectorEnv(ModelAccess, VectorEnv):
    """N independent copies of a finite MDP, stepped together by :mod:`nsrl.model.kernels`.

    Continuing task: never terminated; each copy is truncated after ``max_episode_steps``
    steps (if given). What follows a truncation is Gymnasium's ``autoreset_mode`` (read from
    ``metadata["autoreset_mode"]`` or ``.autoreset_mode``), with the semantics of
    ``gymnasium.vector.SyncVectorEnv``:

    - ``NEXT_STEP`` (default): the copy is reset on the following ``step`` call, which
      returns its new start observation with reward 0 and ignores its action.
    - ``SAME_STEP``: the copy is reset inside the step that truncates it; ``step`` returns the
      new start observation, and the observation and info that ended the episode are in
      ``info["final_obs"]`` (object array, None elsewhere) and ``info["final_info"]``,
      masked by ``info["_final_obs"]`` and ``info["_final_info"]``.
    - ``DISABLED``: never reset by ``step``; the caller resets the truncated copies with
      ``reset(options={"reset_mask": mask})`` before stepping again (else ValueError).

    ``info["state"]`` holds the state indices and ``info["_state"]`` which copies report one
    (all of them after a step, the masked ones after a masked reset, where the others' entries
    are 0). The all-True ``info["_state"]`` is one shared read-only array.

    Args:
        mdp: the model, or the path (str) of one saved by ``FiniteMDP.save`` (``.mdp``).
        num_envs: number of copies N >= 1.
        observation: "index" (MultiDiscrete of N state indices), "onehot" or "features".
        max_episode_steps: truncation horizon, None for never.
        backend: kernel backend, "numba", "numpy" or None (the default of nsrl.model.kernels).
        render_mode: None, "ansi" or "rgb_array": ``render()`` returns a tuple of N frames, as
            ``SyncVectorEnv`` does (see :class:`nsrl.envs.FiniteMDPEnv`).
        autoreset_mode: an ``AutoresetMode`` or its value ("NextStep", "SameStep", "Disabled").

    ``reset(options={"state": s})`` starts every copy in state ``s`` (an int) or copy i in
    ``s[i]`` (an int array of shape (N,)); otherwise start states are drawn from ``mdp.start``.
    ``options={"reset_mask": mask}`` (a bool array of shape (N,)) resets only the masked
    copies, as in ``SyncVectorEnv``; it combines with ``"state"``.

    Examples:
        >>> import nsrl
        >>> env = FiniteMDPVectorEnv(nsrl.garnet(20, 2, 3, seed=0), num_envs=8)
        >>> obs, info = env.reset(seed=0, options={"state": 3})
        >>> obs.tolist() == [3] * 8, bool(info["_state"].all())
        (True, True)
    """

    metadata = {"render_modes": list(render.RENDER_MODES), "render_fps": render.RENDER_FPS,
                "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        mdp: FiniteMDP | str,
        num_envs: int = 1,
        observation: str = "index",
        max_episode_steps: int | None = None,
        backend: str | None = None,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
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
        check_memory(vector_nbytes(self.mdp, int(num_envs), observation),
                     f"{int(num_envs):,} copies with observation={observation!r} (their states, "
                     f"clocks, spaces and one batch of observations)", "use fewer num_envs")
        self.render_mode = render.check_render_mode(render_mode)
        self._autoreset_mode = mode = check_autoreset_mode(autoreset_mode)
        # Flags, not enum comparisons, in step: an enum attribute costs ~0.2 us per look-up.
        self._same_step = mode is AutoresetMode.SAME_STEP
        self._disabled = mode is AutoresetMode.DISABLED
        # Per instance, so that the class default stays NEXT_STEP.
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.num_envs = int(num_envs)
        self.max_episode_steps = max_episode_steps
        self._needs_reset = True  # stepping before reset is Gymnasium's ResetNeeded
        self._last_actions, self._last_rewards = None, None
        self._background = None
        self.single_observation_space = observations.single_space(self.mdp, observation)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space = spaces.Discrete(self.mdp.n_actions)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.states = np.zeros(self.num_envs, dtype=np.int64)
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)
        # info["_state"] after a step: every copy reports its state. One read-only array,
        # shared by all steps, since a fresh one costs ~3% of a step at N = 4096.
        self._every_copy = np.ones(self.num_envs, dtype=np.bool_)
        self._every_copy.flags.writeable = False
        # prev_done when no copy was truncated: identity tells step there is nothing to reset.
        self._no_copy = np.zeros(self.num_envs, dtype=np.bool_)
        self._no_copy.flags.writeable = False
        self.prev_done = self._no_copy

    @property
    def autoreset_mode(self) -> AutoresetMode:
        """What follows a truncation; fixed at construction, as in ``SyncVectorEnv``."""
        return self._autoreset_mode

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset every copy, or the copies in ``options["reset_mask"]``.

        They start in ``options["state"]`` if given, else in states drawn from nu.
        """
        super().reset(seed=seed)
        mask, states = read_vector_options(options, self.mdp.n_states, self.num_envs)
        if mask is not None and self._needs_reset:
            raise ResetNeeded('Cannot reset some copies (options["reset_mask"]) before '
                              "resetting them all: call reset() first.")
        self._needs_reset = False
        self._last_actions = None
        if mask is None:
            if states is None:
                states = kernels.start_states(self.mdp, self.num_envs, self.np_random)
            self.states = states.copy()
            self.elapsed[:] = 0
            self.prev_done = self._no_copy
            return self._observe(), {"state": self.states.copy(), "_state": self._every_copy}
        n = int(mask.sum())
        self.states[mask] = (
            kernels.start_states(self.mdp, n, self.np_random) if states is None else states[mask]
        )
        self.elapsed[mask] = 0
        if self.prev_done is not self._no_copy:
            self.prev_done = self.prev_done & ~mask
            if not self.prev_done.any():
                self.prev_done = self._no_copy
        return self._observe(), {"state": np.where(mask, self.states, 0), "_state": mask.copy()}

    def step(self, actions):
        """Step every copy with ``actions`` (int array of shape (N,))."""
        if self._needs_reset:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        actions = kernels.check_indices("actions", actions, self.mdp.n_actions, self.num_envs)
        done = self.prev_done  # only ever set under NEXT_STEP and DISABLED
        any_done = done is not self._no_copy
        if any_done and self._disabled:
            raise ValueError(
                f"copies {np.flatnonzero(done).tolist()} were truncated at the last step and "
                "autoreset_mode is DISABLED: reset them first with "
                'reset(options={"reset_mask": mask}).'
            )
        states, rewards, truncated, n_truncated = kernels.step_clocked(
            self.mdp, self.states, actions, self.np_random, self.elapsed,
            self.max_episode_steps, backend=self.backend,
        )
        if any_done:  # NEXT_STEP: the copies truncated last step start afresh, reward 0.
            states[done] = kernels.start_states(self.mdp, int(done.sum()), self.np_random)
            rewards[done] = 0.0
            self.elapsed[done] = 0
            truncated[done] = False
            n_truncated = int(np.count_nonzero(truncated))
        if self._same_step and n_truncated:
            final = self._reset_finished(states, truncated)
            self.prev_done = self._no_copy
        else:
            final = None
            self.prev_done = truncated if n_truncated else self._no_copy
        self.states = states
        if self.render_mode == "ansi":
            self._last_actions, self._last_rewards = actions.copy(), rewards.copy()
        info = {"state": states.copy(), "_state": self._every_copy}
        if final is not None:
            info.update(final)
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        return self._observe(), rewards, terminated, truncated.copy(), info

    def _reset_finished(self, states: np.ndarray, done: np.ndarray) -> dict:
        """SAME_STEP: keep the final observations and infos of ``done``, then reset them."""
        idx = np.flatnonzero(done)
        final = observations.encode(states[idx], self.mdp, self.observation, self._phi)
        # An object array, None where no episode ended, as SyncVectorEnv gives it.
        final_obs = np.full(self.num_envs, None, dtype=object)
        for k, i in enumerate(idx):
            final_obs[i] = final[k]
        info = {
            "final_obs": final_obs,
            "_final_obs": done.copy(),
            "final_info": {"state": np.where(done, states, 0), "_state": done.copy()},
            "_final_info": done.copy(),
        }
        states[idx] = kernels.start_states(self.mdp, idx.size, self.np_random)
        self.elapsed[idx] = 0
        return info

    def _observe(self) -> np.ndarray:
        return observations.encode(self.states, self.mdp, self.observation, self._phi)

    def render(self) -> tuple | None:
        """One frame per copy (a tuple, as ``SyncVectorEnv`` gives), or None without a mode."""
        if self.render_mode == "ansi":
            last = self._last_actions
            return tuple(render.text(self.mdp.n_states, s, None if last is None else last[i],
                                     None if last is None else self._last_rewards[i])
                         for i, s in enumerate(self.states))
        if self.render_mode == "rgb_array":
            if self._background is None:
                self._background = render.background(self.mdp)
            return tuple(render.frame(self._background, self.mdp.n_states, s)
                         for s in self.states)
        return None


class GarnetVectorEnv(FiniteMDPVectorEnv):
    """N copies of one Garnet G(n_states, n_actions, branching, n_features), natively batched.

    ``.mdp`` is ``nsrl.garnet(n_states, n_actions, branching, n_features, gamma, seed=seed)``;
    ``seed`` fixes the instance, ``reset(seed=...)`` the randomness of the runs. See
    :class:`FiniteMDPVectorEnv` for the API (``autoreset_mode`` included) and
    :class:`nsrl.envs.GarnetEnv` for the model.

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
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    ):
        mdp = cached_garnet(n_states, n_actions, branching, n_features, gamma, seed)
        super().__init__(
            mdp, num_envs, observation, max_episode_steps, backend, render_mode, autoreset_mode
        )
