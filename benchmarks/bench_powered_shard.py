"""One shard of a ``bigger-powered`` variant, today's code beside an earlier revision's.

Runs ``nsrl.experiments.worker.compute_shard`` on MDP 0 of the variant, one scheme at a time
and ``--iterations`` iterations instead of the family's 100, each in a child process (BLAS on
one thread): with the package of revision ``--before`` (exported with git archive) and with
today's, interleaved scheme by scheme so that both see the same state of the machine. Prints
each scheme's CPU seconds before and today, and whether the final losses agree to 1e-12
relative (the change is meant to be the same arithmetic, reordered).

    python benchmarks/bench_powered_shard.py --variant grid-lstdq-1e5 --iterations 8 \\
        --before 9ac88d7 > benchmarks/results/bench_powered_shard_lstdq_1e5.txt
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
_CHILD = """
import json, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.experiments.worker import compute_shard
variant, iterations, scheme = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sweep = load_experiment("bigger-powered").sweeps()[variant]
spec = sweep.to_dict()
spec["n_iterations"], spec["schemes"] = iterations, (scheme,)
shard = Shard(sweep.n_states[0], sweep.n_actions[0], sweep.branching[0], 0)
with threadpool_limits(1, "blas"):
    start = time.process_time()
    _, cols, _, _ = compute_shard(spec, shard)
    cpu = time.process_time() - start
import nsrl
print(json.dumps({"cpu": cpu, "loss": float(np.asarray(cols["loss"], float)[-1]),
                  "package": nsrl.__file__}))
"""


def run(path: str, variant: str, iterations: int, scheme: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, variant, str(iterations), scheme],
                         env={**os.environ, "PYTHONPATH": path}, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    result = json.loads(out.stdout.splitlines()[-1])
    if not result["package"].startswith(path):  # PYTHONPATH must win over an installed nsrl
        raise RuntimeError(f"the child imported {result['package']}, not the one under {path}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="grid-lstdq-1e5")
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--before", metavar="REV", required=True)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from nsrl.experiments import load_experiment

    schemes = load_experiment("bigger-powered").sweeps()[args.variant].scheme_names
    print(f"# bigger-powered {args.variant}, MDP 0, {args.iterations} iterations per scheme, "
          f"one core; before = {args.before}, today = the working tree\n")
    print("| scheme | CPU s before | CPU s today | before / today | final loss | "
          "same loss (1e-12) |\n|---|---:|---:|---:|---:|---|")
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        old = export(args.before, tmp)
        for scheme in schemes:
            was = run(old, args.variant, args.iterations, scheme)
            now = run(str(ROOT), args.variant, args.iterations, scheme)
            totals[0] += was["cpu"]
            totals[1] += now["cpu"]
            same = abs(was["loss"] - now["loss"]) <= 1e-12 * max(1.0, abs(was["loss"]))
            print(f"| {scheme} | {was['cpu']:.1f} | {now['cpu']:.1f} | "
                  f"{was['cpu'] / now['cpu']:.2f} | {now['loss']:.6f} | {same} |", flush=True)
    print(f"| all | {totals[0]:.1f} | {totals[1]:.1f} | {totals[0] / totals[1]:.2f} | | |")


if __name__ == "__main__":
    main()
