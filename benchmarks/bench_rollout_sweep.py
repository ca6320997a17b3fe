"""A rollouts + CSC sweep before and after SoftmaxCSC, timed alternately in one run.

``bigger-powered``'s ``grid-rollout-1e4`` on MDP 0 (10^4-state grid world, 100 RBF features,
10^5 transitions per greedy call) with API and PSDP for ``--iterations`` iterations, as the
family's worker runs it (``nsrl.experiments.runner.compute_shard``, one BLAS thread): the
package of revision ``--before`` (exported with git archive, on PYTHONPATH) and this
checkout's, each in a child process, alternately, ``--rounds`` times. Prints the CPU
seconds of each shard (the worker's own count) and each scheme's final loss, and writes
benchmarks/results/bench_rollout_sweep.txt.

    python benchmarks/bench_rollout_sweep.py --before main --iterations 10 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from revisions import export  # a sibling script: benchmarks/ is on the path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys
import numpy as np
import nsrl
from nsrl.experiments import load_experiment
from nsrl.experiments.presets import Shard
from nsrl.experiments.runner import compute_shard

sweep = load_experiment("bigger-powered").sweeps()["grid-rollout-1e4"]
spec = {**sweep.to_dict(), "n_iterations": int(sys.argv[1]), "schemes": ["API", "PSDP"]}
shard = Shard(sweep.n_states[0], sweep.n_actions[0], sweep.branching[0], 0)
_, columns, cpu = compute_shard(spec, shard)
last = columns["iteration"] == spec["n_iterations"]
losses = {str(s): float(l) for s, l in zip(columns["scheme"][last], columns["loss"][last])}
print(json.dumps({"cpu": cpu, "losses": losses, "package": nsrl.__file__}))
"""


def shard(path: str | None, iterations: int) -> dict:
    """One shard in a child process: with the package under ``path`` (None: the installed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if path is not None:
        env["PYTHONPATH"] = path
    run = subprocess.run([sys.executable, "-c", CHILD, str(iterations)], env=env, check=True,
                         capture_output=True, text=True, cwd=path or str(ROOT))
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="the revision of before")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default="bench_rollout_sweep.txt")
    args = parser.parse_args()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before],
                         check=True, capture_output=True, text=True).stdout.strip()
    here = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()
    lines = [f"# python benchmarks/bench_rollout_sweep.py --before {args.before} --iterations "
             f"{args.iterations} --rounds {args.rounds}",
             f"grid-rollout-1e4, MDP 0, API and PSDP, {args.iterations} iterations, one BLAS "
             f"thread; before = {rev}, after = {here} (this checkout"
             f"{', with changes' if _dirty() else ''})", "",
             "| round | before CPU s | after CPU s | before / after | final losses before "
             "(API, PSDP) | after |", "|---:|---:|---:|---:|---|---|"]
    print("\n".join(lines), flush=True)
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        old = export(rev, Path(tmp))
        for k in range(args.rounds):
            before, after = shard(old, args.iterations), shard(None, args.iterations)
            assert before["package"].startswith(old) and after["package"].startswith(str(ROOT))
            totals[0] += before["cpu"]
            totals[1] += after["cpu"]
            lines.append(f"| {k + 1} | {before['cpu']:.1f} | {after['cpu']:.1f} | "
                         f"{before['cpu'] / after['cpu']:.2f}x | "
                         f"{before['losses']['API']:.4f}, {before['losses']['PSDP']:.4f} | "
                         f"{after['losses']['API']:.4f}, {after['losses']['PSDP']:.4f} |")
            print(lines[-1], flush=True)
    lines.append(f"\nin all: before {totals[0]:.1f} CPU s, after {totals[1]:.1f}: "
                 f"{totals[0] / totals[1]:.2f}x less CPU")
    print(lines[-1])
    (ROOT / "benchmarks" / "results" / args.out).write_text("\n".join(lines) + "\n")


def _dirty() -> bool:
    return bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "nsrl"],
                               capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
