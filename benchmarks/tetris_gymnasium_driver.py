"""Placements per second of tetris-gymnasium 0.3.1 with its GroupedActionsObservations wrapper.

Run by benchmarks/bench_tetris.py with the Python of a separate venv that holds
tetris-gymnasium (``python3 -m venv /work/venv-tetris-gym &&
/work/venv-tetris-gym/bin/pip install tetris-gymnasium==0.3.1``); it imports only that package,
gymnasium and numpy, and prints one JSON line.

    /work/venv-tetris-gym/bin/python benchmarks/tetris_gymnasium_driver.py --width 10 \
        --height 20 --seconds 20

The policy: each placement's board comes from the wrapper (with its FeatureVectorObservation:
column heights, max height, holes, bumpiness); among the legal placements (the wrapper's
action mask) it takes the best of -0.51 x aggregate height - 0.36 x holes - 0.18 x bumpiness,
a well-known simple heuristic. Games restart when they end.
"""

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import tetris_gymnasium  # noqa: F401  (registers tetris_gymnasium/Tetris)
from tetris_gymnasium.wrappers.grouped import GroupedActionsObservations
from tetris_gymnasium.wrappers.observation import FeatureVectorObservation


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=10)
    parser.add_argument("--height", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    env = gym.make("tetris_gymnasium/Tetris", width=args.width, height=args.height)
    env = GroupedActionsObservations(env, observation_wrappers=[FeatureVectorObservation(env)])
    obs, info = env.reset(seed=0)
    placements = games = lines = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < args.seconds:
        heights, holes, bumpiness = obs[:, :args.width].sum(1), obs[:, -2], obs[:, -1]
        score = -0.51 * heights - 0.36 * holes - 0.18 * bumpiness
        score[np.asarray(info["action_mask"]) == 0] = -np.inf
        obs, reward, terminated, truncated, info = env.step(int(np.argmax(score)))
        placements += 1
        lines += int(info.get("lines_cleared", 0))
        if terminated or truncated:
            games += 1
            obs, info = env.reset()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"placements": placements, "games_ended": games, "lines": lines,
                      "wall_s": wall, "cpu_s": cpu, "width": args.width,
                      "height": args.height}))


if __name__ == "__main__":
    main()
