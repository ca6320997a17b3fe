"""Gymnasium ids of nsrl, registered with entry-point strings (modules load on make)."""

from __future__ import annotations

import gymnasium as gym

IDS = ("Garnet-v0", "FiniteMDP-v0")


def register() -> None:
    """Register ``Garnet-v0`` and ``FiniteMDP-v0`` (single env and native vector env); idempotent.

    ``FiniteMDP-v0`` needs the model as a keyword: ``gym.make("FiniteMDP-v0", mdp=mdp)``.
    Both truncate after 1000 steps (TimeLimit for ``make``, the vector env itself for
    ``make_vec``); neither ever terminates.
    """
    if "Garnet-v0" not in gym.registry:
        gym.register(
            id="Garnet-v0",
            entry_point="nsrl.envs.garnet:GarnetEnv",
            vector_entry_point="nsrl.envs.vector:GarnetVectorEnv",
            max_episode_steps=1000,
        )
    if "FiniteMDP-v0" not in gym.registry:
        gym.register(
            id="FiniteMDP-v0",
            entry_point="nsrl.envs.finite:FiniteMDPEnv",
            vector_entry_point="nsrl.envs.vector:FiniteMDPVectorEnv",
            max_episode_steps=1000,
        )
