"""Why the projected operator's first step on the mountain car is bimodal: the noise.

On the ``bigger`` sweep's mountain car (Phi = the 10 x 10 RBF grid), the first greedy step
of the paper's projected operator from pi_0 ("push left"), without noise and with 10 noise
seeds of each noise model (amplitude 0.1). The issue's criterion: the step removes >= 50% of
pi_0's loss. Appends to benchmarks/results/study_car_projected_noise.txt.

    python benchmarks/study_car_projected_noise.py --n-states 10000
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-states", type=int, default=10_000)
    args = parser.parse_args()
    start = time.process_time()
    sweep = load_experiment("bigger").sweeps()["car-projected"]
    mdp = sweep.model(Shard(args.n_states, 3, 3, 0))
    pi0 = nsrl.constant()
    l0 = nsrl.loss(mdp, pi0)
    v0 = nsrl.evaluate(mdp, pi0)
    lines = [f"car n_S={mdp.n_states}: loss(pi_0) {l0:.2f}; v_pi0 = -100 (never reaches the "
             f"goal) on {np.mean(v0 <= -100 + 1e-6):.0%} of the states"]
    with threadpool_limits(1, "blas"):
        for noise, model in ((0.0, "relative"), (0.1, "relative"), (0.1, "absolute")):
            op = nsrl.ProjectedGreedy(mdp, noise=noise, noise_model=model)
            losses = [nsrl.loss(mdp, op.greedy(pi0, nsrl.Nu(), np.random.default_rng(i)).policy)
                      for i in range(1 if noise == 0 else 10)]
            label = "no noise" if noise == 0 else f"{model} noise {noise}, seeds 0-9"
            lines.append(f"  {label}: first-step losses {np.round(losses, 2).tolist()}; mean "
                         f"{np.mean(losses):.2f} ({1 - np.mean(losses) / l0:.0%} removed); "
                         f">= 50% removed in {sum(x <= l0 / 2 for x in losses)}/{len(losses)}")
            print(lines[-1], flush=True)
    lines.append(f"  [{time.process_time() - start:.0f} CPU s]")
    with (ROOT / "benchmarks" / "results" / "study_car_projected_noise.txt").open("a") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
