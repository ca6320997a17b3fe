"""The powered family's learner variants rerun on today's operators (issue 46, item 4).

The eight learner variants of ``bigger-powered`` (LSTD-Q and rollouts + CSC, both domains,
both sizes), run with the operators' defaults: rollouts + CSC with the soft-label fit
(``SoftmaxCSC``), LSTD-Q with the store's running sums. Until 216e9e0 the family pinned its
rollout variants to the logistic fit their first shards were computed with; this script, run
at 216e9e0 with the same override, recomputed seven of them (``provenance.toml`` says which),
and ``bigger-powered`` has named the default fit since (the fingerprints printed are the
family's own). The exact and projected variants are not rerun (their operators did not
change). Every shard of a variant comes from the one code version the script runs at:
``docs/bigger/powered_run/provenance.toml`` names it.

The run is an ordinary resumable experiment (the family's sweeps, names and fingerprints), so
an interrupted run goes on with the same command. Its variants share one pool of workers (the
next variant's shards start as workers free up); each variant's ``sessions.jsonl`` keeps its
shards' CPU seconds and their end times from the sitting's start, and the script prints the
wall of the whole run.

Run: ``python benchmarks/rerun_powered_fast.py --out results/powered-fast --jobs 2``
(``--only grid-rollout-1e4,...`` to run some variants, ``--list`` to print them and stop).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from nsrl.experiments.bigger import powered
from nsrl.experiments.execution import run_experiment
from nsrl.experiments.experiment import Experiment

LEARNERS = ("lstdq", "rollout")


def learner_family(only: tuple[str, ...] = ()) -> Experiment:
    """``bigger-powered``'s learner variants (all, or those named in ``only``)."""
    full = powered.EXPERIMENT
    variants = {name: change for name, change in full.variants.items()
                if name.split("-")[1] in LEARNERS and (not only or name in only)}
    unknown = set(only) - set(variants)
    if unknown:
        raise SystemExit(f"rerun_powered_fast: unknown learner variants {sorted(unknown)}; "
                         f"choose among {sorted(variants)}.")
    return Experiment(full.name, full.base, variants, full.question, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/powered-fast")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated variants")
    parser.add_argument("--list", action="store_true", help="print variants and fingerprints")
    args = parser.parse_args()
    only = tuple(v for v in args.only.split(",") if v)
    exp = learner_family(only)
    for name, sweep in exp.sweeps().items():
        print(f"{name:20s} {sweep.fingerprint()[:16]} operator {sweep.operator.name} "
              f"{dict(sweep.operator.options)}")
    if args.list:
        return
    start = time.perf_counter()

    def on_sweep(variant, folder, result):
        print(f"{variant}: done at {time.perf_counter() - start:.0f} s wall "
              f"({json.dumps({'computed': result['computed']})})", flush=True)

    run_experiment(exp, Path(args.out), jobs=args.jobs, resume=True, on_sweep=on_sweep)
    print(f"all variants: {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
