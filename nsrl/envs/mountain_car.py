"""MountainCarGridEnv: the discretised mountain car (nsrl.model.mountain_car) as an env."""

from __future__ import annotations

from gymnasium.vector import AutoresetMode

from nsrl.model.mountain_car import mountain_car

from .finite import FiniteMDPEnv
from .structured import cached_model, observation_mode
from .vector import FiniteMDPVectorEnv


def _model(n_positions, n_velocities, interpolation, gamma):
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
                 render_mode: None = None):
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
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP):
        mdp = _model(n_positions, n_velocities, interpolation, gamma)
        super().__init__(mdp, num_envs, observation_mode(observation), max_episode_steps,
                         backend, render_mode, autoreset_mode)
