"""SB3 DQN and PPO on the bigger domains at equal transitions (issue 21, item 4).

The same MDPs as the ``bigger`` sweep at about 10^4 states (grid world MDP 0, 100 x 100;
mountain car 100 x 100), the agents seeing the states' coordinates (observation
"coordinates": (row, col), or (position, velocity)) through SB3VecEnv (episodes from the
env's reset, truncated after 1000 steps, no reset-to-state), SB3's configurations of
``nsrl.sb3.learners`` (the ones of docs/sb3.md), 10^6 transitions, exact loss of the
tabulated policy at log-spaced checkpoints, beside pi_0's loss.

Writes benchmarks/results/bigger_sb3.csv.

    python benchmarks/bench_bigger_sb3.py --budget 1000000 --seeds 1
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

import nsrl
from nsrl.domains import side
from nsrl.experiments import load_experiment
from nsrl.model.gridworld import gridworld
from nsrl.model.mountain_car import mountain_car
from nsrl.sb3.learners import learn

ROOT = Path(__file__).resolve().parents[1]


def base_model(domain: str, n_states: int):
    """The family's model of the bigger sweep's MDP 0 with its coordinates as features."""
    sweep = load_experiment("bigger").sweeps()[f"{domain}-lstdq"]
    n = side(n_states)
    if domain == "car":
        return mountain_car(n, n, gamma=sweep.gamma)
    import numpy as np

    from nsrl.experiments.shards import Shard

    seed = np.random.Generator(np.random.PCG64(sweep.mdp_seed(Shard(n_states, 4, 4, 0))))
    return gridworld(n, gamma=sweep.gamma, seed=seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1e6)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--n-states", type=int, default=10_000)
    parser.add_argument("--algos", default="ppo,dqn")
    args = parser.parse_args()
    rows = []
    for domain in ("grid", "car"):
        mdp = base_model(domain, args.n_states)
        l0 = nsrl.loss(mdp, nsrl.constant())
        for algo in args.algos.split(","):
            for seed in range(args.seeds):
                start = time.process_time()
                snaps = learn(algo, mdp, int(args.budget), seed, observation="features")
                cpu = time.process_time() - start
                for samples, policy in snaps:
                    rows.append({"domain": domain, "n_states": mdp.n_states, "algo": algo,
                                 "seed": seed, "samples": samples,
                                 "loss": nsrl.loss(mdp, policy), "loss_pi0": l0,
                                 "cpu_s": round(cpu, 1)})
                print(rows[-1], flush=True)
                pd.DataFrame(rows).to_csv(ROOT / "benchmarks" / "results" / "bigger_sb3.csv",
                                          index=False)


if __name__ == "__main__":
    main()
