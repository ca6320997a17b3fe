"""Gymnasium's and Stable-Baselines3's env checkers on nsrl's envs, warnings as errors.

pip install torch==2.13.0 stable-baselines3   (or nsrl[sb3]; CPU torch first)
"""

import os
import tempfile
import warnings

import gymnasium as gym
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import nsrl

taxi = nsrl.FiniteMDP.from_gymnasium(gym.make("Taxi-v4"), gamma=0.99)
path = os.path.join(tempfile.mkdtemp(), "taxi.npz")
taxi.save(path)
envs = {f"Garnet-v0 {obs}": gym.make("Garnet-v0", observation=obs)
        for obs in ("index", "onehot", "features")}
envs["FiniteMDP-v0 Taxi, object"] = gym.make("FiniteMDP-v0", mdp=taxi)
envs["FiniteMDP-v0 Taxi, path"] = gym.make("FiniteMDP-v0", mdp=path)
with warnings.catch_warnings():
    warnings.simplefilter("error")  # a checker's warning fails the recipe
    for name, env in envs.items():
        check_env(env.unwrapped)  # gymnasium's checker wants the env without wrappers
        sb3_check_env(env)
        print(f"{name:<26} passes gymnasium's and SB3's check_env")
