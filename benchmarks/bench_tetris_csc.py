"""DPI's classification step on Tetris: CMA-ES (the papers') beside the softmax surrogate.

    python benchmarks/bench_tetris_csc.py [--states 2000] [--m 10] [--iterations 3]
                                          [--generations 30] [--games 100]

On the small board (10 x 10), D-T features: rollout states from DT-10's games (up to 100
pieces in), Q(s, a) of every legal placement by playing it and then the current policy for m
pieces (gamma = 1, common pieces per state). DPI from Dellacherie's controller: each iteration
fits the next policy on the current one's rollouts, by CMA-ES (population 15 x 9 = 135, the
better half recombined, ``--generations`` generations, warm-started from the previous weights)
and by L-BFGS on the softmax surrogate (warm-started alike), each on the same rollouts. Printed
per iteration and fitter: CPU seconds of the fit, the cost-sensitive loss L reached on these
rollouts and on fresh ones (other states and pieces), and the mean lines of the fitted policy
over ``--games`` games (with its 95% interval). Writes benchmarks/results/bench_tetris_csc.txt.

The papers' budgets are far larger (CBMPI: B = 8 M samples per iteration on 10 x 10, 100
runs); this measures the two fits against each other at one small budget, nothing more.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from nsrl.tetris import SHIPPED, Controller, feature_names, play_games
from nsrl.tetris.learn import fit_cmaes, fit_softmax, rollout_problem, rollout_states

RESULTS = Path(__file__).resolve().parent / "results"
WIDTH = HEIGHT = 10
FEATURES = "dellacherie-thiery"


def lines(controller: Controller, games: int) -> str:
    g = play_games(controller, games, width=WIDTH, height=HEIGHT, seed=10**6)
    mean = g.lines.mean()
    half = 1.96 * g.lines.std(ddof=1) / np.sqrt(games)
    return f"{mean:,.0f} +- {half:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=2000)
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--generations", type=int, default=30)
    parser.add_argument("--games", type=int, default=100)
    args = parser.parse_args()
    names = feature_names(FEATURES, WIDTH)
    load = os.getloadavg()[0]
    rows = [f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()}, "
            f"{os.cpu_count()} cpus, load {load:.2f} at start; {args.states} states, m = "
            f"{args.m}, CMA-ES {args.generations} generations of {15 * len(names)}, "
            f"{args.games} games per policy", "",
            "| iteration | fitter | fit CPU s | L on its rollouts | L on fresh rollouts | "
            "lines per game (95%) |", "|---:|---|---:|---:|---:|---|"]
    print("\n".join(rows))
    current = {"cma-es": SHIPPED["dellacherie"], "softmax": SHIPPED["dellacherie"]}
    weights = {k: np.zeros(len(names)) for k in current}
    for k in range(1, args.iterations + 1):
        for fitter in ("cma-es", "softmax"):
            states = rollout_states(SHIPPED["dt-10"], args.states, width=WIDTH, height=HEIGHT,
                                    max_pieces=100, seed=2 * k)
            fresh = rollout_states(SHIPPED["dt-10"], args.states, width=WIDTH, height=HEIGHT,
                                   max_pieces=100, seed=2 * k + 1)
            problem = rollout_problem(states, current[fitter], features=FEATURES, m=args.m,
                                      seed=k)
            held = rollout_problem(fresh, current[fitter], features=FEATURES, m=args.m,
                                   seed=10**3 + k)
            if fitter == "cma-es":
                fit = fit_cmaes(problem, weights[fitter], iterations=args.generations, seed=k)
            else:
                fit = fit_softmax(problem, weights[fitter])
            weights[fitter] = fit.weights
            current[fitter] = Controller(FEATURES, dict(zip(names, fit.weights, strict=True)))
            row = (f"| {k} | {fitter} | {fit.seconds:.2f} | {fit.loss:.3f} | "
                   f"{held.loss(fit.weights):.3f} | {lines(current[fitter], args.games)} |")
            rows.append(row)
            print(row, flush=True)
    rows.append(f"\nDT-10 (published 5,000 on 10,000 games): {lines(SHIPPED['dt-10'], args.games)}"
                f" lines per game over the same {args.games} games")
    print(rows[-1])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_tetris_csc.txt").write_text(
        "# python benchmarks/bench_tetris_csc.py " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()) + "\n"
        + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
