"""MountainCarGridEnv: the discretised mountain car (nsrl.model.mountain_car) as an env."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode

from nsrl.model.mdp import FiniteMDP
from nsrl.model.mountain_car import mountain_car, nearest_state

from .finite import FiniteMDPEnv
from .structured import cached_model, observation_mode
from .vector import FiniteMDPVectorEnv


def _model(n_positions: int, n_velocities: int, interpolation: str, gamma: float) -> FiniteMDP:
    return cached_model(mountain_car, n_positions=n_positions, n_velocities=n_velocities,
                        interpolation=interpolation, gamma=gamma)


class MountainCarGridEnv(FiniteMDPEnv):
    """Gymnasium's mountain car on a position x velocity grid, with its exact model.

    ## Description

    One step of ``MountainCar-v0``'s equations from a grid point, mapped back onto the grid
    by barycentric interpolation (or to the nearest point): :func:`nsrl.mountain_car`.
    ``env.unwrapped.mdp`` is that model, so every policy has an exact value.

    ## Action Space

    ``Discrete(3)``: push left, no push, push right.

    ## Observation Space

    - ``"index"`` (default): ``Discrete(n_positions * n_velocities)``.
    - ``"coordinates"`` (or ``"features"``): ``Box([-1.2, -0.07], [0.6, 0.07], (2,),
      float32)``, the (position, velocity) of the grid point.
    - ``"onehot"``: ``Box(0, 1, (n_states,), float32)``.

    ## Rewards

    -1 per step until the goal (position >= 0.5 with velocity >= 0), 0 there.

    ## Starting State

    Uniform over the grid points of position in [-0.6, -0.4] at the velocity closest to 0,
    or ``reset(options={"state": s})``.

    ## Episode End

    Never terminated (the goal is absorbing, at reward 0); ``gym.make`` truncates after
    1000 steps.

    ## Arguments

    ``n_positions`` (100), ``n_velocities`` (100), ``interpolation`` ("barycentric" or
    "nearest"), ``gamma`` (0.99): as for :func:`nsrl.mountain_car`; ``observation``;
    ``backend`` (see :class:`FiniteMDPEnv`).

    ## Version History

    - v0: initial version.

    Examples:
        >>> import gymnasium as gym
        >>> env = gym.make("MountainCarGrid-v0", n_positions=30, n_velocities=31)
        >>> obs, info = env.reset(seed=0)
        >>> env.unwrapped.mdp.n_states, float(env.unwrapped.mdp.features[int(obs), 1])
        (930, 0.0)
    """

    def __init__(self, n_positions: int = 100, n_velocities: int = 100,
                 interpolation: str = "barycentric", gamma: float = 0.99,
                 observation: str = "index", backend: str | None = None,
                 render_mode: None = None) -> None:
        mdp = _model(n_positions, n_velocities, interpolation, gamma)
        super().__init__(mdp, observation_mode(observation), backend, render_mode)


class MountainCarGridVectorEnv(FiniteMDPVectorEnv):
    """N copies of the discretised mountain car, natively batched.

    Examples:
        >>> import gymnasium as gym
        >>> envs = gym.make_vec("MountainCarGrid-v0", num_envs=2, n_positions=10)
        >>> envs.unwrapped.mdp.n_states
        1000
    """

    def __init__(self, num_envs: int = 1, n_positions: int = 100, n_velocities: int = 100,
                 interpolation: str = "barycentric", gamma: float = 0.99,
                 observation: str = "index", max_episode_steps: int | None = None,
                 backend: str | None = None, render_mode: None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        mdp = _model(n_positions, n_velocities, interpolation, gamma)
        super().__init__(mdp, num_envs, observation_mode(observation), max_episode_steps,
                         backend, render_mode, autoreset_mode)


def gymnasium_returns(actions: npt.ArrayLike, n_positions: int, n_velocities: int,
                      n_episodes: int = 100, seed: int = 0) -> np.ndarray:
    """Returns of a policy of the grid run in Gymnasium's own continuous ``MountainCar-v0``.

    Each continuous observation (position, velocity) is mapped to its grid point
    (:func:`nsrl.model.mountain_car.nearest_state`) and the policy's action there is taken;
    episodes start from Gymnasium's start distribution (``reset(seed=seed + i)``) and end at
    the goal or after 200 steps (its TimeLimit).

    Args:
        actions: the action of every state of ``nsrl.mountain_car(n_positions, n_velocities)``
            (an int array of shape (n_positions * n_velocities,)).
        n_positions: the grid's positions.
        n_velocities: the grid's velocities.
        n_episodes: episodes to run.
        seed: the seed of the first episode's reset.

    Returns:
        The undiscounted return of each episode (-1 per step), shape (n_episodes,).

    Examples:
        >>> import nsrl
        >>> mdp = nsrl.mountain_car(60, 60)
        >>> pi = nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp))
        >>> returns = gymnasium_returns(pi, 60, 60, n_episodes=3)
        >>> returns.shape, bool((returns > -200).all())  # each episode reached the goal
        ((3,), True)
    """
    import gymnasium as gym

    actions = np.asarray(actions)
    if actions.shape != (n_positions * n_velocities,):
        raise ValueError(f"actions should give one action per grid point, shape "
                         f"({n_positions * n_velocities},), got {actions.shape}.")
    env = gym.make("MountainCar-v0")
    out = np.empty(n_episodes)
    for i in range(n_episodes):
        obs, _ = env.reset(seed=seed + i)
        total, done = 0.0, False
        while not done:
            action = int(actions[nearest_state(obs[0], obs[1], n_positions, n_velocities)])
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        out[i] = total
    env.close()
    return out
