"""Exact loss of pi_0 (action 0 everywhere) and of the uniform random policy on the MDPs of a
preset, the reference points that docs/sampled.md quotes; with --head-to-head, on the problems
of the SB3 head-to-head (docs/sb3.md). Seconds of CPU.

    python benchmarks/reference_policies.py --preset sampled \
        > benchmarks/results/reference_policies_sampled.txt
    python benchmarks/reference_policies.py --head-to-head \
        > benchmarks/results/reference_policies_sb3.txt
"""

import argparse

import numpy as np

import nsrl
from nsrl.experiments.loader import load_sweep


def head_to_head():
    """pi_0 and the uniform policy on the head-to-head's Garnets (seeds 0-4) and FrozenLake."""
    import gymnasium as gym

    def both(mdp, mu=None):
        table = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
        return (nsrl.loss(mdp, nsrl.Deterministic(np.zeros(mdp.n_states, dtype=int)), mu=mu),
                nsrl.loss(mdp, nsrl.Stochastic(table), mu=mu))

    garnets = np.array([both(nsrl.garnet(100, 4, 2, gamma=0.99, seed=s)) for s in range(5)])
    print("# exact loss mu(v* - v_pi), mu uniform unless said; Garnet(100, 4, 2), gamma 0.99, "
          "seeds 0-4 (mean and sd over the instances)")
    print(f"garnet pi_0 (action 0 everywhere): {garnets[:, 0].mean():.4f} "
          f"± {garnets[:, 0].std(ddof=1):.4f}")
    print(f"garnet uniform random policy: {garnets[:, 1].mean():.4f} "
          f"± {garnets[:, 1].std(ddof=1):.4f}")
    lake = nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.99)
    (pi0, uniform), (pi0_start, uniform_start) = both(lake), both(lake, mu=lake.start)
    print(f"frozenlake pi_0 (action 0 everywhere): {pi0:.4f}, from the start: {pi0_start:.4f}")
    print(f"frozenlake uniform random policy: {uniform:.4f}, from the start: "
          f"{uniform_start:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="sampled")
    parser.add_argument("--head-to-head", action="store_true",
                        help="the SB3 head-to-head's problems instead of a preset's MDPs")
    args = parser.parse_args()
    if args.head_to_head:
        head_to_head()
        return
    sweep = load_sweep(args.preset)
    pi0, uniform = [], []
    for shard in sweep.shards():
        mdp = sweep.model(shard)
        pi0.append(nsrl.loss(mdp, nsrl.Deterministic(np.zeros(mdp.n_states, dtype=int))))
        table = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
        uniform.append(nsrl.loss(mdp, nsrl.Stochastic(table)))
    print(f"# preset {args.preset}: {len(pi0)} MDPs (the preset's MDP seeds), exact loss "
          "mu(v* - v_pi), mean over the MDPs")
    print(f"pi_0 (action 0 everywhere): {np.mean(pi0):.4f}")
    print(f"uniform random policy: {np.mean(uniform):.4f}")


if __name__ == "__main__":
    main()
