"""SB3 DQN and PPO on the powered family's units, at the learners' transitions (issue 31, item 2).

The powered family's learners (LSTD-Q, rollouts + CSC) use 10^5 transitions per greedy call,
so a scheme's loss at iteration k is its loss after k x 10^5 transitions. This study trains
SB3's DQN and PPO (the configurations of ``nsrl.sb3.learners``, those of docs/sb3.md) for
``--budget`` transitions (default 10^6, the learners' first 10 iterations) on the same
units: on the grid world the powered family's MDPs 0..units-1 (the same instance seeds as
every ``grid-*`` variant of that size, so comparisons with the schemes are paired on MDPs);
on the mountain car (one model) the agents' seeds 0..units-1. The agents see the states'
coordinates (observation "features" of the base model: (row, col) or (position, velocity))
through SB3VecEnv, episodes from the env's reset truncated after 1000 steps (no
reset-to-state); the exact loss of the tabulated greedy policy is taken at log-spaced
checkpoints.

``n_states`` in the results is the family's size; ``states`` the model's (a grid's obstacles
are not states). Resumable: one row per checkpoint in
benchmarks/results/powered_sb3_<size>.csv, rewritten after every (domain, algorithm, unit)
run; a run already there is not repeated.

    python benchmarks/study_powered_sb3.py --n-states 10000 --units 5
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import nsrl
from nsrl.domains import side
from nsrl.experiments import load_experiment
from nsrl.experiments.bigger.powered import size_label
from nsrl.experiments.shards import Shard
from nsrl.model.gridworld import gridworld
from nsrl.model.mountain_car import mountain_car
from nsrl.sb3.learners import learn

ROOT = Path(__file__).resolve().parents[1]
KEY = ["domain", "n_states", "algo", "unit"]


SWEEPS = load_experiment("bigger-powered").sweeps()


def base_model(domain: str, n_states: int, unit: int) -> nsrl.FiniteMDP:
    """The powered family's model of ``unit`` (grid: its MDP; car: the one model), with the
    states' coordinates as features (the builder's base model, before the RBF map)."""
    sweep = SWEEPS[f"{domain}-lstdq-{size_label(n_states)}"]
    n = side(n_states)
    if domain == "car":
        return mountain_car(n, n, gamma=sweep.gamma)
    seed = sweep.mdp_seed(Shard(n_states, 4, 4, unit))
    return gridworld(n, gamma=sweep.gamma, seed=np.random.Generator(np.random.PCG64(seed)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-states", type=int, default=10_000, choices=[10_000, 100_000])
    parser.add_argument("--units", type=int, default=5)
    parser.add_argument("--budget", type=float, default=1e6)
    parser.add_argument("--algos", default="ppo,dqn")
    parser.add_argument("--domains", default="grid,car")
    args = parser.parse_args()
    out = ROOT / "benchmarks" / "results" / f"powered_sb3_{size_label(args.n_states)}.csv"
    old = pd.read_csv(out) if out.exists() else pd.DataFrame(columns=KEY)
    done = set(map(tuple, old[KEY].itertuples(index=False)))
    rows = old.to_dict("records")
    for domain in args.domains.split(","):
        for unit in range(args.units):
            mdp = base_model(domain, args.n_states, unit)
            l0 = None
            for algo in args.algos.split(","):
                if (domain, args.n_states, algo, unit) in done:
                    continue
                l0 = nsrl.loss(mdp, nsrl.constant()) if l0 is None else l0
                start = time.process_time()
                snaps = learn(algo, mdp, int(args.budget), seed=unit, observation="features")
                cpu = time.process_time() - start
                rows += [{"domain": domain, "n_states": args.n_states, "algo": algo, "unit": unit,
                          "states": mdp.n_states,
                          "samples": samples, "loss": nsrl.loss(mdp, policy), "loss_pi0": l0,
                          "cpu_s": round(cpu, 1)} for samples, policy in snaps]
                print(rows[-1], flush=True)
                tmp = out.with_suffix(".tmp")
                pd.DataFrame(rows).to_csv(tmp, index=False)
                os.replace(tmp, out)  # a run is on disk whole or not at all


if __name__ == "__main__":
    main()
