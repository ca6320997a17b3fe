"""Measured loss against the Table 1 bounds on every run of the `quick` sweep (issue 7).

For every MDP of the `quick` preset (the same instances and run seeds as `nsrl reproduce`),
every scheme and every run, the reference path `nsrl.run(..., measure_errors=True)` records
the greedy errors; `nsrl.run_bounds` evaluates each Table 1 row with them; a violation is an
iteration whose loss exceeds the best row by more than 1e-9. Prints a table per scheme and the
total count of violations (0 expected), and exits 1 if there is any.

    python benchmarks/check_bounds_quick.py [--runs R] [--mdps M]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import nsrl
from nsrl.experiments.quick.sweep import SWEEP as QUICK


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=QUICK.n_runs, help="runs per MDP and scheme")
    ap.add_argument("--mdps", type=int, default=QUICK.n_mdps, help="MDPs per instance")
    args = ap.parse_args()
    start = time.perf_counter()
    worst: dict[str, float] = {}
    violations, runs = 0, 0
    for shard in QUICK.shards():
        if shard.mdp >= args.mdps:
            continue
        rng = np.random.Generator(np.random.PCG64(QUICK.mdp_seed(shard)))
        mdp = nsrl.garnet(
            shard.n_states,
            shard.n_actions,
            shard.branching,
            QUICK.n_features,
            QUICK.gamma,
            seed=rng,
        )
        conc = {
            m: nsrl.concentrability(mdp, m=(m,), min_terms=QUICK.n_iterations + m + 1)
            for m in {getattr(nsrl.make_scheme(s), "m", 1) for s in QUICK.scheme_names}
        }
        for name in QUICK.scheme_names:
            scheme = nsrl.make_scheme(name)
            op = nsrl.ProjectedGreedy(mdp, **QUICK.operator_options())
            for run_rng in QUICK.run_rngs(shard, name)[: args.runs]:
                h = nsrl.run(
                    scheme,
                    op,
                    QUICK.n_iterations,
                    rng=run_rng,
                    measure_errors=True,
                    keep_outputs=name.startswith("cpi"),
                )
                best = nsrl.run_bounds(scheme, h, mdp, conc=conc[getattr(scheme, "m", 1)])["best"]
                violations += int(np.sum(h.losses > best + 1e-9))
                worst[scheme.name] = max(
                    worst.get(scheme.name, 0.0), float(np.max(h.losses / best))
                )
                runs += 1
        print(f"{shard.name}: {runs} runs checked, {violations} violations so far", flush=True)
    print(f"\n{'scheme':10s} max over runs and iterations of loss / best bound")
    for name, ratio in worst.items():
        print(f"{name:10s} {ratio:.4f}")
    print(
        f"\n{runs} runs x {QUICK.n_iterations} iterations, {violations} violations, "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
