"""Gymnasium ids of nsrl, registered with entry-point strings (modules load on make)."""

from __future__ import annotations

import gymnasium as gym

IDS = ("Garnet-v0",)


def register() -> None:
    """Register ``Garnet-v0`` (single env and native vector env); idempotent."""
    if "Garnet-v0" in gym.registry:
        return
    gym.register(
        id="Garnet-v0",
        entry_point="nsrl.envs.garnet:GarnetEnv",
        vector_entry_point="nsrl.envs.vector:GarnetVectorEnv",
        max_episode_steps=1000,
    )
