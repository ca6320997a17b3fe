"""Capture the cost-sensitive fits of a rollouts + CSC shard: (states, Q, counts) of each call.

Runs ``bigger-powered``'s ``grid-rollout-1e4`` on MDP 0 (10^4-state grid world, 100 RBF
features, 10^5 transitions per call) with API and PSDP for ``--iterations`` iterations, as the
family's worker does (``nsrl.experiments.runner.compute_shard``), and records what each greedy
call hands its classifier: the distinct states drawn, their mean Q estimates and their draw
counts. The features are not stored: they are rows of the MDP's Phi, rebuilt from the
sweep's seed by benchmarks/bench_csc_fit.py. Writes
benchmarks/results/csc_problems_grid-rollout-1e4.npz (compressed, a few MB).

    python benchmarks/capture_csc_problems.py --iterations 5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import nsrl.greedy.rollout as rollout
from nsrl.experiments import load_experiment
from nsrl.experiments.presets import Shard
from nsrl.experiments.runner import compute_shard

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "csc_problems_grid-rollout-1e4.npz"
VARIANT, SCHEMES = "grid-rollout-1e4", ("API", "PSDP")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    sweep = load_experiment("bigger-powered").sweeps()[VARIANT]
    spec = {**sweep.to_dict(), "n_iterations": args.iterations, "schemes": list(SCHEMES)}
    shard = Shard(sweep.n_states[0], sweep.n_actions[0], sweep.branching[0], 0)
    saved: dict[str, np.ndarray] = {}
    state = {"uniq": None, "operator": -1, "call": 0}
    merge, fit, init = rollout.merge_states, rollout.RolloutCSC.fit, rollout.RolloutCSC.__init__

    def merge_states(states, q):
        out = merge(states, q)
        state["uniq"] = out[0]
        return out

    def new_init(self, *a, **k):
        state["operator"] += 1
        state["call"] = 0
        init(self, *a, **k)

    def new_fit(self, x, q, counts=None):
        key = f"{SCHEMES[state['operator']]}_{state['call']:03d}"
        saved[key + "_states"] = np.asarray(state["uniq"], dtype=np.int32)
        saved[key + "_q"], saved[key + "_counts"] = q.astype(np.float64), counts
        state["call"] += 1
        return fit(self, x, q, counts)

    rollout.merge_states, rollout.RolloutCSC.fit = merge_states, new_fit
    rollout.RolloutCSC.__init__ = new_init
    try:
        _, _, cpu = compute_shard(spec, shard)
    finally:
        rollout.merge_states, rollout.RolloutCSC.fit = merge, fit
        rollout.RolloutCSC.__init__ = init
    np.savez_compressed(args.out, variant=VARIANT, mdp=0, iterations=args.iterations, **saved)
    print(f"{len(saved) // 3} fits captured in {cpu:.0f} CPU s: {args.out} "
          f"({args.out.stat().st_size / 2**20:.1f} MB)")


if __name__ == "__main__":
    main()
