"""CMA-ES's loss evaluation on Tetris: the population loop today beside the previous one.

    python benchmarks/bench_tetris_losses.py [--budget 8e6] [--m 5] [--population 135]
                                             [--repeats 5]

CMA-ES's fit (``nsrl.tetris.learn.fit_cmaes``) spends its time in ``CSCProblem.losses``: the
cost-sensitive loss of every candidate of a generation, over every state and placement. The
problem is the ``tetris-small`` preset's first call (10 x 10, D-T features, CBMPI's step,
API from nsrl's pi_0), then a second call from the first call's policy, so that the costs are
those of a learning iteration. Timed on one generation of random candidates around DT-10's
weights, alternately (old, new, old, new, ...) in one process; the two must agree bit for
bit. The previous kernel is kept here as the baseline: per state and candidate, the engine's
rule over the placements (candidates outer, features innermost).
Writes benchmarks/results/bench_tetris_losses.txt.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import gymnasium as gym
import numba
import numpy as np

import nsrl
from nsrl.greedy.base import Nu
from nsrl.greedy.tetris import TetrisRollouts
from nsrl.tetris.controllers import SHIPPED
from nsrl.tetris.learn import _best  # the engine's rule for one candidate

RESULTS = Path(__file__).resolve().parent / "results"


@numba.njit(cache=True)
def previous_losses(phi, legal, ends, costs, w, out):  # pragma: no cover - compiled
    totals = np.zeros(w.shape[0])
    for i in range(phi.shape[0]):
        for j in range(w.shape[0]):
            totals[j] += costs[i, _best(phi, legal, ends, w[j], i)]
    for j in range(w.shape[0]):
        out[j] = totals[j] / max(phi.shape[0], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=8e6)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--population", type=int, default=135)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    lines = [f"# python benchmarks/bench_tetris_losses.py --budget {args.budget:g} --m {args.m} "
             f"--population {args.population} --repeats {args.repeats}",
             f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()}, {os.cpu_count()} cpus, "
             f"load {os.getloadavg()[0]:.2f} at start; numba threads "
             f"{numba.get_num_threads()} (the kernels are serial)"]
    env = gym.make("Tetris-v0", width=10, height=10)
    op = TetrisRollouts(env, budget=int(args.budget), m=args.m)
    rng = np.random.default_rng(2013)
    first = op.greedy(nsrl.Constant(0), Nu(), rng)
    op.greedy(first.policy, Nu(), rng)
    problem = op.last_problem
    assert problem is not None
    n, a, d = problem.phi.shape
    lines.append(f"problem: {n:,} states x {a} placement slots x {d} features "
                 f"({int(problem.legal.sum()):,} legal placements), the second call's")

    population = SHIPPED["dt-10"].vector(10) + 0.5 * np.random.default_rng(0).normal(
        size=(args.population, d)) * np.abs(SHIPPED["dt-10"].vector(10)).mean()
    costs = problem.costs
    old, new = np.zeros(len(population)), np.zeros(len(population))
    previous_losses(problem.phi, problem.legal, problem.ends, costs, population[:2], old[:2])
    problem.losses(population[:2])  # compile both first
    times: dict[str, list[float]] = {"previous": [], "today": []}
    for _ in range(args.repeats):
        t = time.process_time()
        previous_losses(problem.phi, problem.legal, problem.ends, costs, population, old)
        times["previous"].append(time.process_time() - t)
        t = time.process_time()
        new = problem.losses(population)
        times["today"].append(time.process_time() - t)
    assert old.tolist() == new.tolist(), "the two kernels disagree"
    lines.append("")
    lines.append("| kernel | CPU s per generation (median of repeats) | per candidate, ms |")
    lines.append("|---|---:|---:|")
    for name, ts in times.items():
        med = float(np.median(ts))
        lines.append(f"| {name} | {med:.3f} | {1000 * med / len(population):.2f} |")
    ratio = np.median(times["previous"]) / np.median(times["today"])
    lines.append("")
    lines.append(f"today's kernel is {ratio:.1f}x faster, with the same losses bit for bit "
                 f"({len(population)} candidates)")
    lines.append(f"load {os.getloadavg()[0]:.2f} at the end")
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_tetris_losses.txt").write_text(text + "\n")


if __name__ == "__main__":
    main()
