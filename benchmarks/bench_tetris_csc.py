"""CBMPI's classification step on Tetris: CMA-ES (the papers') beside the softmax surrogate.

    python benchmarks/bench_tetris_csc.py [--budget 8e6] [--m 5] [--iterations 3]
                                          [--generations 50] [--games 200]

The rollouts are the ``tetris-small`` preset's: 10 x 10, D-T features, CBMPI's step (``cbmpi``
operator: B = 8 M rollout placements, m = 5, DU's height-mixed states, the linear critic),
API from nsrl's pi_0, the softmax fit driving the run. At each iteration, on the rollouts of
that call (``op.last_problem``), four fits:

* softmax, cold (from w = 0) and warm (from the previous iteration's weights): L-BFGS on the
  surrogate (``nsrl.tetris.learn.fit_softmax``);
* CMA-ES, cold and warm, population 15 x 9 = 135, ``--generations`` generations, sigma 0.5
  (``fit_cmaes``, the ``cma`` package).

Printed per iteration and fit: CPU seconds, the cost-sensitive loss L on its own rollouts and
on fresh ones (a second call of the operator on the same target: other states, other pieces),
and the mean lines of the fitted policy over ``--games`` games (the same games for every
fit), with its 95% interval. Writes benchmarks/results/bench_tetris_csc.txt.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import nsrl
from nsrl.greedy.tetris import TetrisRollouts, TetrisScore
from nsrl.greedy.tetris.policies import tetris_policy
from nsrl.tetris.learn import Fit, fit_cmaes, fit_softmax

RESULTS = Path(__file__).resolve().parent / "results"
WIDTH = HEIGHT = 10
FEATURES = "dellacherie-thiery"


def fits(problem, previous: np.ndarray, generations: int, seed: int) -> dict[str, Fit]:
    """The four fits of one problem (module doc)."""
    zero = np.zeros_like(previous)
    return {
        "softmax, cold": fit_softmax(problem, zero),
        "softmax, warm": fit_softmax(problem, previous),
        "CMA-ES, cold": fit_cmaes(problem, zero, iterations=generations, seed=seed),
        "CMA-ES, warm": fit_cmaes(problem, previous, iterations=generations, seed=seed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=8e6)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--generations", type=int, default=50)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_tetris_csc.txt")
    args = parser.parse_args()
    env = gym.make("Tetris-v0", width=WIDTH, height=HEIGHT)
    op = TetrisRollouts(env, budget=int(args.budget), m=args.m)
    score = TetrisScore(env, games=args.games, seed=10**6)
    rng = np.random.default_rng(0)
    head = (f"# python benchmarks/bench_tetris_csc.py --budget {args.budget:g} --m {args.m} "
            f"--iterations {args.iterations} --generations {args.generations} --games "
            f"{args.games}\n{time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()}, "
            f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f} at start")
    rows = [head, "", "| iteration | states | fit | fit CPU s | evaluations | "
            "L, its rollouts | L, fresh rollouts | lines per game (95%) |",
            "|---:|---:|---|---:|---:|---:|---:|---:|"]
    target: object = nsrl.Constant(0)
    previous = np.zeros(9)
    for k in range(1, args.iterations + 1):
        fresh = copy.deepcopy(op)  # the same critic and pool, other states and pieces
        g = op.greedy(target, nsrl.greedy.Nu(), rng)
        fresh.greedy(target, nsrl.greedy.Nu(), np.random.default_rng(10**3 + k))
        problem, other = op.last_problem, fresh.last_problem
        assert problem is not None and other is not None
        for name, fit in fits(problem, previous, args.generations, seed=k).items():
            pi = tetris_policy(FEATURES, fit.weights, width=WIDTH, height=HEIGHT)
            s = score(pi)
            rows.append(f"| {k} | {len(problem.phi):,} | {name} | {fit.seconds:.2f} | "
                        f"{fit.evaluations:,} | {fit.loss:.4f} | {other.loss(fit.weights):.4f} | "
                        f"{s.mean:,.0f} +- {s.ci:,.0f} |")
            print(rows[-1], flush=True)
        target, previous = g.policy, op.records[-1].fit.weights
    dt10 = score(tetris_policy(FEATURES, nsrl.tetris.SHIPPED["dt-10"].vector(WIDTH),
                               width=WIDTH, height=HEIGHT))
    rows += ["", f"DT-10 over the same {args.games} games: {dt10.mean:,.0f} +- {dt10.ci:,.0f} "
             f"lines (published 5,000 over 10,000 games)",
             f"load {os.getloadavg()[0]:.2f} at the end"]
    args.out.write_text("\n".join(rows) + "\n")
    print("\n".join(rows[-3:]))


if __name__ == "__main__":
    main()
