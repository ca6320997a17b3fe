"""GridWorldEnv: a seeded grid world (nsrl.model.gridworld) as a Gymnasium env."""

from __future__ import annotations

from gymnasium.vector import AutoresetMode

from nsrl.model.gridworld import Cells, gridworld
from nsrl.model.mdp import FiniteMDP

from .finite import FiniteMDPEnv
from .structured import cached_model, observation_mode
from .vector import FiniteMDPVectorEnv


def _model(size: int, slip: float, obstacles: float, reward: str, gamma: float, n_bumps: int,
           goals: Cells, pits: Cells, seed: int) -> FiniteMDP:
    return cached_model(gridworld, size=size, slip=slip, obstacles=obstacles, reward=reward,
                        gamma=gamma, n_bumps=n_bumps, goals=goals, pits=pits, seed=seed)


class GridWorldEnv(FiniteMDPEnv):
    """An n x n grid world with slipping moves, seeded obstacles and a seeded reward map.

    ## Description

    The states are the free cells of the largest connected region left by the obstacles,
    so every state reaches every other one (:func:`nsrl.gridworld`). ``env.unwrapped.mdp``
    equals ``nsrl.gridworld(...)`` with the same arguments.

    ## Action Space

    ``Discrete(4)``: up, right, down, left. With probability ``slip`` the move is replaced
    by one of the four drawn uniformly; a move into a wall or an obstacle stays put.

    ## Observation Space

    - ``"index"`` (default): ``Discrete(n_states)``, the state.
    - ``"coordinates"`` (or ``"features"``): ``Box(0, size - 1, (2,), float32)``, the
      (row, col) of the cell.
    - ``"onehot"``: ``Box(0, 1, (n_states,), float32)``.

    ## Rewards

    r(s) of the cell left: the smooth map in [0, 1], or +1 on goals and -1 on pits.

    ## Starting State

    Uniform over the free cells that are neither goals nor pits, or
    ``reset(options={"state": s})``.

    ## Episode End

    Never terminated (goals and pits are absorbing); ``gym.make`` truncates after 1000 steps.

    ## Arguments

    ``size`` (20), ``slip`` (0.1), ``obstacles`` (0.1), ``reward`` ("smooth" or "goals"),
    ``gamma`` (0.99), ``n_bumps`` (8), ``goals`` (1), ``pits`` (0): as for
    :func:`nsrl.gridworld`; ``seed``: the instance seed (0), separate from
    ``reset(seed=...)``; ``observation``; ``backend`` (see :class:`FiniteMDPEnv`).

    ## Version History

    - v0: initial version.

    Examples:
        >>> import gymnasium as gym, nsrl
        >>> env = gym.make("GridWorld-v0", size=8, seed=1, observation="coordinates")
        >>> obs, info = env.reset(seed=0, options={"state": 0})
        >>> obs.tolist(), env.unwrapped.mdp == nsrl.gridworld(8, seed=1)
        ([0.0, 0.0], True)
    """

    def __init__(self, size: int = 20, slip: float = 0.1, obstacles: float = 0.1,
                 reward: str = "smooth", gamma: float = 0.99, n_bumps: int = 8, goals: Cells = 1,
                 pits: Cells = 0, seed: int = 0, observation: str = "index",
                 backend: str | None = None, render_mode: None = None) -> None:
        mdp = _model(size, slip, obstacles, reward, gamma, n_bumps, goals, pits, seed)
        super().__init__(mdp, observation_mode(observation), backend, render_mode)


class GridWorldVectorEnv(FiniteMDPVectorEnv):
    """N copies of one grid world, natively batched (:class:`FiniteMDPVectorEnv`'s API).

    Examples:
        >>> import gymnasium as gym
        >>> envs = gym.make_vec("GridWorld-v0", num_envs=4, size=6)
        >>> type(envs).__name__, envs.unwrapped.mdp.n_actions
        ('GridWorldVectorEnv', 4)
    """

    def __init__(self, num_envs: int = 1, size: int = 20, slip: float = 0.1,
                 obstacles: float = 0.1, reward: str = "smooth", gamma: float = 0.99,
                 n_bumps: int = 8, goals: Cells = 1, pits: Cells = 0, seed: int = 0,
                 observation: str = "index",
                 max_episode_steps: int | None = None, backend: str | None = None,
                 render_mode: None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        mdp = _model(size, slip, obstacles, reward, gamma, n_bumps, goals, pits, seed)
        super().__init__(mdp, num_envs, observation_mode(observation), max_episode_steps,
                         backend, render_mode, autoreset_mode)
