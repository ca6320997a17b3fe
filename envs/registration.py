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
IDS = tuple(_ENTRY_POINTS)


def register() -> None:
    """Register ``Garnet-v0`` and ``FiniteMDP-v0`` (single env and native vector env); idempotent.

    ``FiniteMDP-v0`` needs the model as a keyword: ``gym.make("FiniteMDP-v0", mdp=mdp)``, or
    the path of one saved by ``FiniteMDP.save`` (``mdp="model.npz"``: a JSON-serialisable spec).
    ``gym.make_vec`` passes ``autoreset_mode=`` (an ``AutoresetMode``) to the native vector
    env as a keyword; gymnasium refuses ``vector_kwargs`` for a vector entry point.
    Both truncate after 1000 steps (TimeLimit for ``make``, the vector env itself for
    ``make_vec``); neither ever terminates.
    """
    for env_id, (entry_point, vector_entry_point) in _ENTRY_POINTS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=entry_point,
                vector_entry_point=vector_entry_point,
                max_episode_steps=1000,
            )
