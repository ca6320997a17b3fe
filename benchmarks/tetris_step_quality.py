"""One greedy step of CBMPI/DPI on Tetris from a fixed good policy: what does it return?

    python benchmarks/tetris_step_quality.py [--target dt-10] [--repeats 6] [--calls 3]
                                             [--games 200] [--jobs 2] [--variants a,b]
                                             [--out FILE]

A learning curve mixes two things: how good the greedy step's policy is given its target, and
how the targets drift. This isolates the first. The target is a fixed controller (DT-10 by
default, 5,000 lines on 10 x 10); an operator (the ``tetris-small`` preset's, and variants of
it) is called ``--calls`` times on that same target (so that CBMPI's critic is built over as
many calls as in a run's first iterations), and the policy of the last call plays
``--games`` games from the empty board (the same games for every variant and repeat). Each
repeat is an independent operator and Generator (seed = the repeat's index); a variant's row
is the mean over repeats of those scores with a 95% t-interval over the repeats, and the CPU
seconds per call. Beside them, the cost-sensitive loss L (mean over repeats) of the fitted
weights and of the target's own weights, on the last call's rollouts and on fresh ones (one
more call on the same target, from a copy of the operator: its pool and last critic, other
states and pieces): the
target is a point of the policy class, so the two say whether the fit misses a lower loss or
the loss does not tell the better player.

With gamma = 1 the critic's horizon grows by m placements per call (its targets are m-step
returns closed by the previous call's critic); ``--calls`` varies it, and the rows "critic
decay d" (``critic_decay``, not the papers') bound it near m / (1 - d) placements.

The greedy policy of DT-10's value should score at least DT-10's own lines if the step were
exact (policy improvement); how far below it the rows land is what the step loses to its
estimates and its fit. Writes ``--out`` (benchmarks/results/tetris_step_quality.txt).
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
from joblib import Parallel, delayed
from scipy import stats

import nsrl  # noqa: F401 - registers Tetris-v0
from nsrl.greedy.base import Nu
from nsrl.greedy.tetris import TetrisRollouts, TetrisScore, tetris_policy
from nsrl.tetris.controllers import SHIPPED

RESULTS = Path(__file__).resolve().parent / "results"
SIZE = 10
PRESET = {"budget": 8_000_000, "m": 5}
VARIANTS: dict[str, dict] = {
    "preset (softmax, warm, m = 5)": {},
    "CMA-ES, cold": {"fit": "cmaes", "warm_start": False},
    "softmax, m = 2": {"m": 2},
    "no critic (m = 5)": {"critic": "none"},
    "DPI (m = 10, no critic)": {"m": 10, "critic": "none"},
    "no height mix": {"height_mix": False},
    # not the papers': the critic's value at the cut discounted, its horizon near m / (1 - d)
    "critic decay 0.7": {"critic_decay": 0.7},
    "critic decay 0.85": {"critic_decay": 0.85},
}


def one(options: dict, target_name: str, calls: int, games: int, repeat: int) -> tuple:
    """One repeat: ``calls`` greedy steps on the target, then the last policy's games."""
    env = gym.make("Tetris-v0", width=SIZE, height=SIZE)
    target = SHIPPED[target_name]
    pi = tetris_policy(target.features, target.vector(SIZE), width=SIZE, height=SIZE)
    op = TetrisRollouts(env, **{**PRESET, **options})
    rng = np.random.default_rng(repeat)
    start = time.process_time()
    for _ in range(calls):
        g = op.greedy(pi, Nu(), rng)
    seconds = (time.process_time() - start) / calls
    score = TetrisScore(env, games=games, seed=424242)(g.policy)
    fitted, own = op.records[-1].fit.weights, target.vector(SIZE)
    problem = op.last_problem
    fresh = copy.deepcopy(op)  # its pool and last critic; other states, pieces
    fresh.greedy(pi, Nu(), np.random.default_rng(10**6 + repeat))
    other = fresh.last_problem
    assert problem is not None and other is not None
    return (score.mean, problem.loss(fitted), problem.loss(own), other.loss(fitted),
            other.loss(own), seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--target", default="dt-10")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--variants", default="", help="comma-separated prefixes (default all)")
    parser.add_argument("--out", type=Path, default=RESULTS / "tetris_step_quality.txt")
    args = parser.parse_args()
    chosen = {k: v for k, v in VARIANTS.items()
              if not args.variants or any(k.startswith(p) for p in args.variants.split(","))}
    env = gym.make("Tetris-v0", width=SIZE, height=SIZE)
    target = SHIPPED[args.target]
    own = TetrisScore(env, games=args.games, seed=424242)(
        tetris_policy(target.features, target.vector(SIZE), width=SIZE, height=SIZE))
    head = [f"# python benchmarks/tetris_step_quality.py --target {args.target} --repeats "
            f"{args.repeats} --calls {args.calls} --games {args.games} --jobs {args.jobs}"
            + (f" --variants '{args.variants}'" if args.variants else "")
            + (f" --out {args.out}" if args.out != RESULTS / "tetris_step_quality.txt" else ""),
            f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.machine()}, {os.cpu_count()} cpus, "
            f"load {os.getloadavg()[0]:.2f} at start; 10 x 10, B = 8 M, target "
            f"{args.target.upper()}: {own.mean:,.0f} +- {own.ci:,.0f} lines on the same games",
            "", "| operator | repeats | last call's policy: mean lines [95% over repeats] | "
            "per repeat | L: fit, its rollouts | L: target's weights, same | L: fit, fresh | "
            "L: target's weights, fresh | CPU s per call |",
            "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    print("\n".join(head), flush=True)
    rows = []
    for name, options in chosen.items():
        out = Parallel(n_jobs=args.jobs)(delayed(one)(options, args.target, args.calls,
                                                      args.games, r)
                                         for r in range(args.repeats))
        scores = np.array([o[0] for o in out])
        half = stats.t.ppf(0.975, len(scores) - 1) * scores.std(ddof=1) / np.sqrt(len(scores))
        each = ", ".join(f"{s:,.0f}" for s in scores)
        losses = " | ".join(f"{np.mean([o[j] for o in out]):.4f}" for j in range(1, 5))
        rows.append(f"| {name} | {len(scores)} | {scores.mean():,.0f} [{scores.mean() - half:,.0f}"
                    f", {scores.mean() + half:,.0f}] | {each} | {losses} | "
                    f"{np.mean([o[5] for o in out]):.1f} |")
        print(rows[-1], flush=True)
    text = "\n".join(head + rows + ["", f"load {os.getloadavg()[0]:.2f} at the end"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
