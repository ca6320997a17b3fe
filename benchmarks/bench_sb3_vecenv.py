"""SB3VecEnv against SB3's DummyVecEnv of N single envs: raw steps/s and a PPO run, same Garnet.

Baseline: ``DummyVecEnv([FiniteMDPEnv + TimeLimit] * N)``, what SB3 users build by default.
CPU seconds of this process are reported beside wall seconds (the machine may be shared).

    python benchmarks/bench_sb3_vecenv.py [--envs 64] [--steps 2000] [--ppo 50000]

Output committed as benchmarks/results/bench_sb3_vecenv.txt (defaults), quoted by docs/sb3.md.
"""

from __future__ import annotations

import argparse
import os
import time

import gymnasium as gym
import numpy as np
import torch

import nsrl
from nsrl.envs import FiniteMDPEnv
from nsrl.sb3 import SB3VecEnv


def dummy(mdp, n: int):
    from stable_baselines3.common.vec_env import DummyVecEnv

    return DummyVecEnv([lambda: gym.wrappers.TimeLimit(FiniteMDPEnv(mdp), 1000)] * n)


def clock(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def raw_steps(venv, steps: int) -> tuple[float, float]:
    actions = np.random.default_rng(0).integers(0, venv.action_space.n, (steps, venv.num_envs))
    venv.reset()
    for a in actions[:10]:  # warm-up: a cold numba cache would otherwise be timed compiling
        venv.step(a)

    def go():
        for a in actions:
            venv.step(a)

    return clock(go)


def ppo(venv, steps: int) -> tuple[float, float]:
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=256, n_epochs=4, device="cpu", seed=0)
    return clock(lambda: model.learn(steps))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=2000, help="vector steps (raw stepping)")
    parser.add_argument("--ppo", type=int, default=50_000, help="PPO transitions")
    args = parser.parse_args()
    torch.set_num_threads(1)
    mdp = nsrl.garnet(100, 4, 2, seed=0)
    n = args.envs
    print(f"Garnet(100, 4, 2), N = {n} envs; {os.cpu_count()} cpus; load {os.getloadavg()[0]:.2f}")
    for what, run, total in (("raw step", raw_steps, args.steps * n), ("PPO learn", ppo, args.ppo)):
        size = args.steps if run is raw_steps else args.ppo
        for name, make in (("SB3VecEnv", lambda: SB3VecEnv(mdp, n, max_episode_steps=1000)),
                           ("DummyVecEnv", lambda: dummy(mdp, n))):
            wall, cpu = run(make(), size)
            print(f"  {what:9s} {name:11s} {total / wall:12,.0f} transitions/s wall   "
                  f"{total / cpu:12,.0f} per CPU second")


if __name__ == "__main__":
    main()
