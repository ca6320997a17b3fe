"""Memory a worker keeps between shards, today's code beside an earlier revision's.

A loky or Dask worker runs shard after shard in one process. This runs the first
``--shards`` shards of a ``bigger-powered`` variant in a row in one child process
(``--iterations`` instead of the family's 100), with the package of revision ``--before``
(exported with git archive) and with today's, and prints after each shard the models still
alive (``FiniteMDP`` objects found by the collector), the memory Python still traces
(tracemalloc: numpy's arrays included) and the process's peak resident memory.

    python benchmarks/bench_worker_memory.py --variant grid-exact-1e5 --iterations 10 \\
        --shards 3 --before 869ebd4 > benchmarks/results/bench_worker_memory_grid_exact_1e5.txt
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from revisions import export  # a sibling script: benchmarks/ is on the path

_CHILD = """
import gc, resource, sys, tracemalloc
from nsrl.experiments import load_experiment
from nsrl.experiments.sweep import Sweep
from nsrl.experiments.worker import compute_shard
from nsrl.model.mdp import FiniteMDP
import nsrl
variant, iterations, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sweep = load_experiment("bigger-powered").sweeps()[variant]
sweep = Sweep.from_dict({**sweep.to_dict(), "n_iterations": iterations})
tracemalloc.start()
for shard in sweep.shards()[:shards]:
    compute_shard(sweep.to_dict(), shard)
    gc.collect()
    live = sum(isinstance(o, FiniteMDP) for o in gc.get_objects())
    traced = tracemalloc.get_traced_memory()[0] / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    print(f"{shard.mdp} {live} {traced:.0f} {peak:.0f} {nsrl.__file__}", flush=True)
"""


def run(path: str, variant: str, iterations: int, shards: int) -> list[list[str]]:
    out = subprocess.run([sys.executable, "-c", _CHILD, variant, str(iterations), str(shards)],
                         env={**os.environ, "PYTHONPATH": path}, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    rows = [line.split() for line in out.stdout.splitlines() if line.strip()]
    if not all(r[-1].startswith(path) for r in rows):  # PYTHONPATH must win over an install
        raise RuntimeError(f"the child imported another nsrl than the one under {path}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="grid-exact-1e5")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--before", metavar="REV", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = export(args.before, tmp)
        today = str(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        results = {"before": run(old, args.variant, args.iterations, args.shards),
                   "today": run(today, args.variant, args.iterations, args.shards)}
    print(f"# {args.variant}: {args.shards} shards in a row in one process, "
          f"{args.iterations} iterations each; before = {args.before}, today = the working tree\n")
    print("| after shard | models alive, before | today | MB traced, before | today "
          "| peak RSS MB, before | today |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for b, t in zip(results["before"], results["today"], strict=True):
        print(f"| {b[0]} | {b[1]} | {t[1]} | {b[2]} | {t[2]} | {b[3]} | {t[3]} |")


if __name__ == "__main__":
    main()
