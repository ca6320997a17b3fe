"""Pieces per second: nsrl's batch engine, nsrl's Tetris-v0, and tetris-gymnasium 0.3.1.

    python benchmarks/bench_tetris.py [--seconds 20] [--gym-python /work/venv-tetris-gym/bin/python]

In one run, one process each, on the D-T policy with DT-10's weights (Scherrer et al., JMLR
2015) unless said:

- batch engine: ``nsrl.tetris`` plays 8 games at once in one compiled call, restarting
  games that end, for about ``--seconds`` per board (10 x 10 and 10 x 20); CPU and wall.
- Tetris-v0: ``gym.make("Tetris-v0")`` stepped from Python, the action chosen by the engine's
  evaluation of every placement (``env.unwrapped.game.choose``).
- tetris-gymnasium 0.3.1 with GroupedActionsObservations (its own venv, run as a subprocess by
  benchmarks/tetris_gymnasium_driver.py): a simple heuristic on its per-placement features
  among the legal placements (see that file).

Prints a table and writes benchmarks/results/bench_tetris.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import nsrl  # noqa: F401  (registers Tetris-v0)
from nsrl.tetris import SHIPPED, moves
from nsrl.tetris.engine import _setup

HERE = Path(__file__).resolve().parent
RESULT = HERE / "results" / "bench_tetris.txt"


def batch_engine(width: int, height: int, seconds: float) -> dict:
    """Pieces/s of the compiled loop: 8 games per call, ended games restarted."""
    controller = SHIPPED["dt-10"]
    weights, s = controller.vector(width), _setup(controller.names(width), width, height, "end")
    n = 8

    def fresh(first_game: int):
        ws = np.zeros((n, s.size), dtype=np.int64)
        rng = np.zeros((n, 4), dtype=np.uint64)
        piece, lines, pieces = (np.zeros(n, dtype=np.int64) for _ in range(3))
        moves.start(rng, piece, np.zeros(n, dtype=np.int64),
                    np.arange(first_game, first_game + n, dtype=np.int64))
        return ws, rng, piece, lines, pieces, np.zeros(n, dtype=np.bool_)

    moves.play(*fresh(0), 10, width, height, s.rule, s.need, s.index, weights, s.n_phi)
    total = games = 0
    wall, cpu = time.perf_counter(), time.process_time()
    batch = 1
    while time.perf_counter() - wall < seconds:
        state = fresh(n * batch)
        moves.play(*state, 200_000, width, height, s.rule, s.need, s.index, weights, s.n_phi)
        total += int(state[4].sum())
        games += int(state[5].sum())
        batch += 1
    return {"pieces": total, "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu, "games_ended": games}


def nsrl_env(width: int, height: int, seconds: float) -> dict:
    """Pieces/s of Tetris-v0 stepped from Python, the engine choosing each placement."""
    env = gym.make("Tetris-v0", width=width, height=height)
    controller = SHIPPED["dt-10"]
    env.reset(seed=0)
    env.step(env.unwrapped.game.choose(controller))  # compile and warm up
    total = games = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        _, _, terminated, _, _ = env.step(env.unwrapped.game.choose(controller))
        total += 1
        if terminated:
            games += 1
            env.reset()
    return {"pieces": total, "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu, "games_ended": games}


def tetris_gymnasium(python: str, width: int, height: int, seconds: float) -> dict | None:
    if not Path(python).exists():
        return None
    out = subprocess.run([python, str(HERE / "tetris_gymnasium_driver.py"), "--width",
                          str(width), "--height", str(height), "--seconds", str(seconds)],
                         check=True, capture_output=True, text=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return {"pieces": got["placements"], "wall_s": got["wall_s"], "cpu_s": got["cpu_s"],
            "games_ended": got["games_ended"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per measurement (20)")
    parser.add_argument("--gym-python", default="/work/venv-tetris-gym/bin/python",
                        help="the Python of a venv with tetris-gymnasium==0.3.1")
    args = parser.parse_args()
    header = (f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.processor() or platform.machine()}"
              f", {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f} at start; "
              f"{args.seconds:g} s per measurement, one process each")
    rows = []
    for width, height in ((10, 10), (10, 20)):
        for name, run in (("nsrl batch engine (D-T, DT-10)", batch_engine),
                          ("nsrl Tetris-v0 + engine's choice (D-T, DT-10)", nsrl_env)):
            rows.append((name, width, height, run(width, height, args.seconds)))
        rows.append(("tetris-gymnasium 0.3.1 grouped + heuristic", width, height,
                     tetris_gymnasium(args.gym_python, width, height, args.seconds)))
    lines = [header, "",
             "| simulator | board | pieces | pieces/s (CPU) | pieces/s (wall) | games ended |",
             "|---|---|---:|---:|---:|---:|"]
    for name, width, height, got in rows:
        if got is None:
            lines.append(f"| {name} | {width} x {height} | not installed | | | |")
            continue
        lines.append(f"| {name} | {width} x {height} | {got['pieces']:,} | "
                     f"{got['pieces'] / got['cpu_s']:,.0f} | {got['pieces'] / got['wall_s']:,.0f}"
                     f" | {got['games_ended']} |")
    lines.append(f"\nload {os.getloadavg()[0]:.2f} at the end")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULT.write_text(text)
    print(f"wrote {RESULT.relative_to(HERE.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
