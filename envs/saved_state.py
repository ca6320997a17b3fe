"""SavedState: any Gymnasium env that keeps its state in an attribute, put back into a state.

nsrl's sample-based operators start rollouts from saved states: a state is whatever an env
hands out in ``info["state"]`` and takes back in ``reset(options={"state": s})``. Gymnasium's
classic-control envs keep their whole state in ``env.unwrapped.state`` (``MountainCar-v0``:
position and velocity; ``CartPole-v1``: four numbers) and ignore ``options``; this wrapper adds
both sides of the convention::

    env = SavedState(gym.make("MountainCar-v0"))
    obs, info = env.reset(seed=0)
    s = info["state"]                      # a tuple of floats, e.g. (-0.52, 0.0)
    env.step(2)
    obs, info = env.reset(options={"state": s})   # back in s, the time limit restarted

A state is a tuple of Python floats (hashable, compared exactly). The observation after a
reset to a state is ``observe(state)``: the state as float32 for the classic-control envs,
whose observation is their state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np


def _as_observation(state: tuple[float, ...]) -> np.ndarray:
    return np.asarray(state, dtype=np.float32)


class SavedState(gym.Wrapper):
    """Adds ``info["state"]`` and ``reset(options={"state": s})`` to an env (module doc).

    Args:
        env: the env; its unwrapped env keeps its state in the attribute ``attribute``.
        attribute: where the state lives (default ``"state"``, as classic control).
        observe: the observation of a state (default: the state as a float32 array).

    Raises:
        TypeError: after a reset, the unwrapped env has no such attribute (classic control
            sets ``state`` in its first reset, so it is not looked for earlier).
    """

    def __init__(self, env: gym.Env, attribute: str = "state",
                 observe: Callable[[tuple[float, ...]], Any] = _as_observation) -> None:
        super().__init__(env)
        self.attribute, self.observe = attribute, observe

    def _state(self) -> tuple[float, ...]:
        if getattr(self.env.unwrapped, self.attribute, None) is None:
            raise TypeError(f"{type(self.env.unwrapped).__name__} keeps no state in "
                            f".{self.attribute} after a reset; pass attribute= the name of the "
                            f"one it keeps.")
        return tuple(float(x) for x in np.ravel(getattr(self.env.unwrapped, self.attribute)))

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset; with ``options={"state": s}``, start in ``s`` (the time limit restarted)."""
        options = dict(options or {})
        state = options.pop("state", None)
        obs, info = self.env.reset(seed=seed, options=options or None)
        self._state()  # the attribute exists (TypeError naming it otherwise)
        if state is not None:
            current = getattr(self.env.unwrapped, self.attribute)
            values = np.asarray(state, dtype=np.float64)
            if values.shape != np.shape(current):
                raise ValueError(f"reset state should have the shape {np.shape(current)} of "
                                 f".{self.attribute}, got {values.shape}.")
            setattr(self.env.unwrapped, self.attribute, values.astype(
                np.asarray(current).dtype))
            obs = self.observe(self._state())
        return obs, {**info, "state": self._state()}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """A step of the env; ``info["state"]`` is the state reached."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {**info, "state": self._state()}
