"""Pieces per second: nsrl's batch engine (today's and an earlier revision's), nsrl's
Tetris-v0, and tetris-gymnasium 0.3.1.

    python benchmarks/bench_tetris.py [--seconds 10] [--repeats 3] [--old-rev d419fd3]
        [--gym-python /work/venv-tetris-gym/bin/python]

In one run, one process each, on the D-T policy with DT-10's weights (Scherrer et al., JMLR
2015) unless said:

- batch engine: ``nsrl.tetris`` plays 8 games at once in one compiled call, restarting
  games that end, for about ``--seconds`` per measurement and board (10 x 10 and 10 x 20);
  CPU and wall. ``--repeats`` measurements of today's engine alternate with as many of the
  engine at ``--old-rev`` (default d419fd3, the last revision before nsrl.tetris.dt): its
  ``nsrl`` package, taken from git (``git archive``) into a temporary directory, run in a
  child process by this script (``--child-engine``); the table gives their medians, the
  range beside them.
- Tetris-v0: ``gym.make("Tetris-v0")`` stepped from Python, the action chosen by the engine's
  evaluation of every placement (``env.unwrapped.game.choose``).
- tetris-gymnasium 0.3.1 with GroupedActionsObservations (its own venv, run as a subprocess by
  benchmarks/tetris_gymnasium_driver.py): a simple heuristic on its per-placement features
  among the legal placements (see that file).

Each measurement is CPU time of this process (time.process_time), so the other work on a
shared machine slows it less than the wall clock; the load average is printed at the start
and the end. Prints a table and writes benchmarks/results/bench_tetris.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULT = HERE / "results" / "bench_tetris.txt"
OLD_REV = "d419fd3"  # the last revision before nsrl.tetris.dt (the D-T kernel)


def batch_engine(width: int, height: int, seconds: float) -> dict:
    """Pieces/s of the compiled loop: 8 games per call, ended games restarted."""
    from nsrl.tetris import SHIPPED, moves
    from nsrl.tetris.engine import _setup

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


def old_engine(tree: Path, width: int, height: int, seconds: float) -> dict:
    """batch_engine in a child process importing the ``nsrl`` package under ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child-engine",
                          str(width), str(height), str(seconds)], check=True,
                         capture_output=True, text=True, env=env, cwd=str(tree))
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["nsrl"].startswith(str(tree)), f"the child imported {got['nsrl']}"
    return got


def extract(rev: str, into: Path) -> Path:
    """The ``nsrl`` package at git revision ``rev``, unpacked under ``into``."""
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", rev, "nsrl"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def nsrl_env(width: int, height: int, seconds: float) -> dict:
    """Pieces/s of Tetris-v0 stepped from Python, the engine choosing each placement."""
    import gymnasium as gym

    import nsrl  # noqa: F401  (registers Tetris-v0)
    from nsrl.tetris import SHIPPED

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


def _rate(got: dict, clock: str) -> float:
    return got["pieces"] / got[clock]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement (10)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="measurements of each batch engine per board (3)")
    parser.add_argument("--old-rev", default=OLD_REV,
                        help=f"the revision whose batch engine is measured too ({OLD_REV})")
    parser.add_argument("--gym-python", default="/work/venv-tetris-gym/bin/python",
                        help="the Python of a venv with tetris-gymnasium==0.3.1")
    parser.add_argument("--child-engine", nargs=3, metavar=("WIDTH", "HEIGHT", "SECONDS"),
                        help=argparse.SUPPRESS)  # run batch_engine only, print JSON
    args = parser.parse_args()
    if args.child_engine:
        width, height, seconds = args.child_engine
        got = batch_engine(int(width), int(height), float(seconds))
        import nsrl

        print(json.dumps(got | {"nsrl": nsrl.__file__}))
        return
    rev = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    header = (f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.processor() or platform.machine()}"
              f", {os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f} at start; "
              f"{args.seconds:g} s per measurement, one process each; batch engines: median "
              f"of {args.repeats} measurements each, alternating, [min, max] beside; "
              f"today's engine: {rev}, earlier one: {args.old_rev}")
    rows, ratios = [], []
    with tempfile.TemporaryDirectory(prefix="bench_tetris_old_") as tmp:
        tree = extract(args.old_rev, Path(tmp))
        for width, height in ((10, 10), (10, 20)):
            new, old = [], []
            old_engine(tree, width, height, 1.0)  # compile the old kernels (cached in tmp)
            for _ in range(args.repeats):
                new.append(batch_engine(width, height, args.seconds))
                old.append(old_engine(tree, width, height, args.seconds))
            for name, runs in ((f"nsrl batch engine (D-T, DT-10), {rev}", new),
                               (f"nsrl batch engine (D-T, DT-10), {args.old_rev}", old)):
                rows.append((name, width, height, runs))
            ratios.append((width, height,
                           statistics.median(_rate(g, "cpu_s") for g in new)
                           / statistics.median(_rate(g, "cpu_s") for g in old)))
            rows.append(("nsrl Tetris-v0 + engine's choice (D-T, DT-10)", width, height,
                         [nsrl_env(width, height, args.seconds)]))
            got = tetris_gymnasium(args.gym_python, width, height, args.seconds)
            rows.append(("tetris-gymnasium 0.3.1 grouped + heuristic", width, height,
                         [got] if got else None))
    lines = [header, "",
             "| simulator | board | pieces | pieces/s (CPU) | pieces/s (wall) | games ended |",
             "|---|---|---:|---:|---:|---:|"]
    for name, width, height, runs in rows:
        if runs is None:
            lines.append(f"| {name} | {width} x {height} | not installed | | | |")
            continue
        cpu = [_rate(g, "cpu_s") for g in runs]
        wall = [_rate(g, "wall_s") for g in runs]
        spread = f" [{min(cpu):,.0f}, {max(cpu):,.0f}]" if len(runs) > 1 else ""
        lines.append(f"| {name} | {width} x {height} | {sum(g['pieces'] for g in runs):,} | "
                     f"{statistics.median(cpu):,.0f}{spread} | {statistics.median(wall):,.0f}"
                     f" | {sum(g['games_ended'] for g in runs)} |")
    lines.append("")
    for width, height, ratio in ratios:
        lines.append(f"batch engine {width} x {height}: {rev} / {args.old_rev} = {ratio:.2f} "
                     f"(medians of pieces per CPU second)")
    lines.append(f"\nload {os.getloadavg()[0]:.2f} at the end")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULT.write_text(text)
    print(f"wrote {RESULT.relative_to(HERE.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main()
