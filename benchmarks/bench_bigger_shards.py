"""Time shards of the ``bigger`` family at one size, one after the other, in this process.

Each shard is what one worker computes (``nsrl.experiments.worker.compute_shard``: the seven
schemes, 10 iterations, on one MDP with one operator); its CPU seconds are the worker's
(``time.process_time``), the figure the family's projection is made of. Appends one line per
shard to benchmarks/results/NAME.txt as soon as it is done.

    python benchmarks/bench_bigger_shards.py --variants car-exact,grid-exact --n-states 100000
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.experiments.worker import compute_shard

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="car-exact,grid-exact")
    parser.add_argument("--n-states", type=int, default=100_000)
    parser.add_argument("--mdp", type=int, default=0)
    parser.add_argument("--out", default="bigger_shards_100000")
    args = parser.parse_args()
    sweeps = load_experiment("bigger").sweeps()
    out = ROOT / "benchmarks" / "results" / f"{args.out}.txt"
    for variant in args.variants.split(","):
        sweep = sweeps[variant]
        shard = Shard(args.n_states, sweep.n_actions[0], sweep.branching[0], args.mdp)
        wall = time.perf_counter()
        _, columns, cpu, _ = compute_shard(sweep.to_dict(), shard)
        wall = time.perf_counter() - wall
        last = columns["iteration"] == sweep.n_iterations
        finals = ", ".join(f"{s} {loss:.2f}" for s, loss in
                           zip(columns["scheme"][last], columns["loss"][last], strict=True))
        line = (f"{variant} n_states={args.n_states} mdp={args.mdp}: {cpu:.1f} CPU s "
                f"({wall:.0f} s wall); final losses: {finals}; mean "
                f"{np.mean(columns['loss'][last]):.2f}")
        print(line, flush=True)
        with out.open("a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
