"""FiniteMDPEnv: a Gymnasium env over any nsrl.FiniteMDP."""

from __future__ import annotations

import numbers
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from nsrl.model import kernels
from nsrl.model.mdp import FiniteMDP

from . import observations, render
from .model import ModelAccess, read_options


class FiniteMDPEnv(ModelAccess, gym.Env):
    """A finite MDP (S, A, P, R, gamma) as a continuing Gymnasium task.

    ## Description

    Each step from state s with action a moves to s' ~ P(. | s, a) and pays R[s, a]. The
    exact model is ``env.unwrapped.mdp``, so any policy can be evaluated exactly
    (``nsrl.evaluate``) beside what is learnt from samples.

    ## Action Space

    ``Discrete(n_actions)``.

    ## Observation Space

    - ``"index"``: ``Discrete(n_states)``, the state itself.
    - ``"onehot"``: ``Box(0, 1, (n_states,), float32)``, the indicator of the state.
    - ``"features"``: ``Box(low, high, (p,), float32)``, the row Phi[s] of ``mdp.features``
      (bounds: the column minima and maxima of Phi).

    ## Rewards

    R[s, a] of the state left and the action taken (r(s) for a state reward).

    ## Starting State

    Drawn from ``mdp.start`` (nu), or ``reset(options={"state": s})`` for a chosen int s.

    ## Episode End

    Never terminated (discounting is left to the agent, gamma = ``mdp.gamma``); truncation
    comes from ``max_episode_steps`` when made through ``gym.make``.

    ## Arguments

    - ``mdp``: the ``nsrl.FiniteMDP``, or the path (str) of an ``.npz`` file written by
      ``FiniteMDP.save``; a path keeps the env spec serialisable
      (``gym.make("FiniteMDP-v0", mdp="model.npz").spec.to_json()``), as minari needs.
    - ``observation``: ``"index"`` (default), ``"onehot"`` or ``"features"``.
    - ``backend``: kernel backend of ``sample``, ``"numba"``, ``"numpy"`` or None (see
      nsrl.model.kernels); ``step`` applies the same rule to one uniform, identical for both.
    - ``render_mode``: None, ``"ansi"`` (a line: state, last action and reward) or
      ``"rgb_array"`` (a map of the states, the current one in red), so that SB3's
      ``PPO("MlpPolicy", "Garnet-v0")`` and Gymnasium's ``RecordVideo`` work.

    ## Version History

    - v0: initial version.

    Examples:
        >>> import nsrl
        >>> env = FiniteMDPEnv(nsrl.garnet(10, 2, 3, seed=0), observation="onehot")
        >>> obs, info = env.reset(seed=0, options={"state": 4})
        >>> int(obs.argmax()), info["state"]
        (4, 4)
    """

    metadata = {"render_modes": list(render.RENDER_MODES), "render_fps": render.RENDER_FPS}

    def __init__(
        self,
        mdp: FiniteMDP | str,
        observation: str = "index",
        backend: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        self._init_model(mdp, observation, backend)
        self.render_mode = render.check_render_mode(render_mode)
        self.observation_space = observations.single_space(self.mdp, observation)
        self.action_space = spaces.Discrete(self.mdp.n_actions)
        self.state = 0
        # the last action and reward, for "ansi"
        self._last: tuple[int | None, float | None] = (None, None)
        self._background: np.ndarray | None = None

    def reset(self, *, seed: int | None = None,
              options: dict | None = None) -> tuple[np.int64 | np.ndarray, dict[str, Any]]:
        """Start in ``options["state"]`` if given, else in a state drawn from nu."""
        super().reset(seed=seed)
        state = read_options(options, self.mdp.n_states)
        if state is None:
            state = kernels.start_states(self.mdp, 1, self.np_random)
        self.state = int(state[0])
        self._last = (None, None)
        return self._observe(), {"state": self.state}

    def step(self, action: object,
             ) -> tuple[np.int64 | np.ndarray, float, bool, bool, dict[str, Any]]:
        """Move to s' ~ P(. | s, action) and pay R[s, action]."""
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(())[()]
        if isinstance(action, bool) or not isinstance(action, numbers.Integral):
            raise ValueError(
                f"action should be an int in [0, {self.mdp.n_actions}), got {action!r}."
            )
        if not 0 <= int(action) < self.mdp.n_actions:
            raise ValueError(f"action should be in [0, {self.mdp.n_actions}), got {action}.")
        self.state, reward = kernels.step_one(self.mdp, self.state, int(action), self.np_random)
        self._last = (int(action), reward)
        return self._observe(), reward, False, False, {"state": self.state}

    def render(self) -> str | np.ndarray | None:
        """The current state, drawn as ``render_mode`` asks; None without a render mode.

        ``"ansi"``: a line of text; ``"rgb_array"``: a map of the states (nsrl.envs.render).
        """
        if self.render_mode == "ansi":
            return render.text(self.mdp.n_states, self.state, *self._last)
        if self.render_mode == "rgb_array":
            if self._background is None:
                self._background = render.background(self.mdp)
            return render.frame(self._background, self.mdp.n_states, self.state)
        return None

    def _observe(self) -> np.int64 | np.ndarray:
        if self.observation == "index":
            return np.int64(self.state)
        if self.observation == "onehot":
            obs = np.zeros(self.mdp.n_states, dtype=np.float32)
            obs[self.state] = 1.0
            return obs
        assert self._phi is not None  # observation == "features"
        return self._phi[self.state].copy()
