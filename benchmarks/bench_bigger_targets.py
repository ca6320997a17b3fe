"""Issue 21's targets on the bigger domains at about 10^5 states, measured directly.

For each family at n_states = 100 000 (grid world 316 x 316 of MDP 0 of the ``bigger`` sweep,
mountain car 316 x 316), with the sweep's Phi (10 x 10 Gaussian RBFs of the coordinates):

* pi_0's loss, the exact operator's first greedy step from pi_0, and the projected
  operator's first step (3 noise seeds): "not flat" means the first step removes >= 50% of
  pi_0's loss;
* sample-based schemes with LSTD-Q on Phi, 10 iterations of 10^5 transitions (10^6 in all):
  the target is a final exact loss <= 10% of pi_0's.

Writes benchmarks/results/bigger_targets.txt.

    python benchmarks/bench_bigger_targets.py --schemes "cpi+,cpi(0.1)"
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard

ROOT = Path(__file__).resolve().parents[1]


def measure(variant: str, schemes, n_states: int, lines: list) -> None:
    sweep = load_experiment("bigger").sweeps()[variant]
    shard = Shard(n_states, sweep.n_actions[0], sweep.branching[0], 0)
    start = time.perf_counter()
    mdp = sweep.model(shard)
    nsrl.optimal_value(mdp)
    pi0 = nsrl.constant()
    l0 = nsrl.loss(mdp, pi0)
    exact = nsrl.loss(mdp, nsrl.ExactGreedy(mdp).greedy(pi0, nsrl.Nu(), None).policy)
    op = nsrl.ProjectedGreedy(mdp, noise=sweep.noise)
    proj = [nsrl.loss(mdp, op.greedy(pi0, nsrl.Nu(), np.random.default_rng(i)).policy)
            for i in range(3)]
    lines.append(f"{variant.split('-')[0]} n_S={mdp.n_states}: loss(pi_0) {l0:.2f}; first step "
                 f"exact {exact:.2f} ({1 - exact / l0:.0%} of pi_0's loss removed), projected "
                 f"{np.mean(proj):.2f} ({1 - np.mean(proj) / l0:.0%}; seeds "
                 f"{', '.join(f'{x:.2f}' for x in proj)}) [{time.perf_counter() - start:.0f} s]")
    print(lines[-1], flush=True)
    for scheme in schemes:
        start = time.perf_counter()
        spec = nsrl.OperatorSpec("lstdq", budget=sweep.budget, features="phi")
        hist = nsrl.run(sweep.scheme(scheme), spec, sweep.n_iterations,
                        rng=np.random.default_rng(0), mdp=mdp, engine="reference")
        best = int(np.argmin(hist.losses))
        lines.append(f"  {scheme} + LSTD-Q: losses {np.round(hist.losses, 2).tolist()}; final "
                     f"{hist.losses[-1]:.2f} = {hist.losses[-1] / l0:.0%} of pi_0's, best "
                     f"{hist.losses[best]:.2f} at {int(hist.samples[best]):,} transitions "
                     f"[{time.perf_counter() - start:.0f} s]")
        print(lines[-1], flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemes", default="cpi+,cpi(0.1)")
    parser.add_argument("--n-states", type=int, default=100_000)
    parser.add_argument("--domains", default="grid,car")
    args = parser.parse_args()
    lines: list[str] = []
    with threadpool_limits(1, "blas"):
        for domain in args.domains.split(","):
            measure(f"{domain}-lstdq", args.schemes.split(","), args.n_states, lines)
    out = ROOT / "benchmarks" / "results" / f"bigger_targets_{args.n_states}.txt"
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
