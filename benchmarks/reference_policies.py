"""Exact loss of pi_0 (action 0 everywhere) and of the uniform random policy on the MDPs of a
preset, the reference points that docs/sampled.md quotes. Seconds of CPU.

    python benchmarks/reference_policies.py --preset sampled \
        > benchmarks/results/reference_policies_sampled.txt
"""

import argparse

import numpy as np

import nsrl
from nsrl.experiments.domains import build_mdp
from nsrl.experiments.registry import load_sweep


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="sampled")
    args = parser.parse_args()
    sweep = load_sweep(args.preset)
    pi0, uniform = [], []
    for shard in sweep.shards():
        mdp = build_mdp(sweep, shard)
        pi0.append(nsrl.loss(mdp, nsrl.Deterministic(np.zeros(mdp.n_states, dtype=int))))
        table = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
        uniform.append(nsrl.loss(mdp, nsrl.Stochastic(table)))
    print(f"# preset {args.preset}: {len(pi0)} MDPs (the preset's MDP seeds), exact loss "
          "mu(v* - v_pi), mean over the MDPs")
    print(f"pi_0 (action 0 everywhere): {np.mean(pi0):.4f}")
    print(f"uniform random policy: {np.mean(uniform):.4f}")


if __name__ == "__main__":
    main()
