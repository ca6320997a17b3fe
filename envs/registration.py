"""Gymnasium ids of nsrl, registered with entry-point strings (modules load on make)."""

from __future__ import annotations

import gymnasium as gym

# id -> (entry point, native vector entry point)
_ENTRY_POINTS = {
    "Garnet-v0": ("nsrl.envs.garnet:GarnetEnv", "nsrl.envs.vector:GarnetVectorEnv"),
    "FiniteMDP-v0": ("nsrl.envs.finite:FiniteMDPEnv", "nsrl.envs.vector:FiniteMDPVectorEnv"),
    "GridWorld-v0": ("nsrl.envs.gridworld:GridWorldEnv",
                     "nsrl.envs.gridworld:GridWorldVectorEnv"),
    "MountainCarGrid-v0": ("nsrl.envs.mountain_car:MountainCarGridEnv",
                           "nsrl.envs.mountain_car:MountainCarGridVectorEnv"),
}
# Envs without an exact model or a native vector env, with their own time limit.
_OTHER_ENTRY_POINTS = {
    # No time limit: a good controller plays for millions of placements (docs/tetris.md).
    "Tetris-v0": ("nsrl.envs.tetris:TetrisEnv", None),
}
IDS = tuple(_ENTRY_POINTS) + tuple(_OTHER_ENTRY_POINTS)


def register() -> None:
    """Register nsrl's Gymnasium ids; idempotent.

    ``Garnet-v0``, ``FiniteMDP-v0``, ``GridWorld-v0`` and ``MountainCarGrid-v0`` have a single
    env and a native vector env; ``Tetris-v0`` a single env, without a time limit.

    ``FiniteMDP-v0`` needs the model as a keyword: ``gym.make("FiniteMDP-v0", mdp=mdp)``, or
    the path of one saved by ``FiniteMDP.save`` (``mdp="model.npz"``: a JSON-serialisable spec).
    ``gym.make_vec`` passes ``autoreset_mode=`` (an ``AutoresetMode``) to the native vector
    env as a keyword; gymnasium refuses ``vector_kwargs`` for a vector entry point.
    Those four truncate after 1000 steps (TimeLimit for ``make``, the vector env itself for
    ``make_vec``); none ever terminates.
    """
    for env_id, (entry_point, vector_entry_point) in _ENTRY_POINTS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=vector_entry_point,
                max_episode_steps=1000,
            )
    for env_id, (entry_point, max_steps) in _OTHER_ENTRY_POINTS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=max_steps)
