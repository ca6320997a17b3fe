"""The sampled family on a Dask cluster: measured on a LocalCluster, projected to N workers.

Runs a slice of the ``sampled`` family (every variant, the 9 instances of n_S = 50, the first
MDP of each, the family's runs) on a LocalCluster of 1 worker and on one of 2 workers (one
thread each), and checks that both give the losses of the complete run of the family
(``--full DIR``, the folder of ``nsrl reproduce --preset sampled --out DIR``, computed with
loky) bit for bit. From the measured parallel efficiency and the per-shard CPU seconds of
the complete run it projects the family's wall time on N workers as
``max(total CPU / (N x efficiency), longest shard)``.

    python benchmarks/bench_sampled_dask.py --full results/sampled
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.runner import run_sweep
from nsrl.experiments.sampled import EXPERIMENT as SAMPLED
from nsrl.experiments.storage import open_results, read_shard


def run_slice(out: Path, backend: str, scheduler: str) -> float:
    start = time.perf_counter()
    for name, sweep in SAMPLED.sweeps().items():
        small = dataclasses.replace(sweep, n_states=(50,), n_mdps=1)
        run_sweep(small, out / name, jobs=1, backend=backend, scheduler=scheduler,
                  progress=False)
    return time.perf_counter() - start


def losses(out: Path, names: list[str] | None = None) -> np.ndarray:
    """Every loss of the slice's shards in ``out`` (the slice's names from a larger folder)."""
    parts = []
    for variant in SAMPLED.variants:
        sweep, paths = open_results(out / variant)
        if names is not None:
            paths = [p for p in paths if p.stem in names]
        table = pd.concat(_intact(p, sweep).to_pandas() for p in paths)
        parts.append(table.sort_values(["n_states", "n_actions", "branching", "mdp", "scheme",
                                        "run", "iteration"])["loss"])
    return pd.concat(parts).to_numpy()


def _intact(path: Path, sweep):
    """The shard at ``path``, verified against its sweep (checksum, key, rows)."""
    table, why = read_shard(path, sweep)
    if table is None:
        raise SystemExit(f"{path}: {why}")
    return table


def shard_cpu(folder: Path) -> list[float]:
    cpu = []
    for variant in SAMPLED.variants:
        log = folder / variant / "sessions.jsonl"
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if record.get("event") == "shard":
                cpu.append(record["cpu_seconds"])
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", type=Path, help="folder of a complete sampled-family run")
    args = parser.parse_args()
    from dask.distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wall = {}
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster):
                wall[workers] = run_slice(tmp / f"dask{workers}", "dask",
                                          cluster.scheduler_address)
        names = [p.stem for p in (tmp / "dask1" / "projected" / "shards").glob("*.parquet")]
        same = np.array_equal(losses(tmp / "dask1"), losses(tmp / "dask2"))
        if args.full is not None:
            same = same and np.array_equal(losses(tmp / "dask1"), losses(args.full, names))
    print(f"slice of the sampled family: every variant, {len(names)} shards of n_S = 50 "
          f"per variant")
    for workers, seconds in wall.items():
        print(f"  LocalCluster of {workers} worker(s): {seconds:7.1f} s")
    efficiency = wall[1] / (2 * wall[2])
    print(f"  speed-up of 2 workers over 1: {wall[1] / wall[2]:.2f}x (efficiency "
          f"{efficiency:.2f})")
    against = "1 and 2 workers" + (" and the loky run" if args.full is not None else "")
    print(f"  identical losses ({against}): {same}")
    if args.full is not None:
        cpu = shard_cpu(args.full)
        total, longest = sum(cpu), max(cpu)
        print(f"full family ({args.full}): {len(cpu)} shards, {total:.0f} CPU s, longest "
              f"shard {longest:.1f} s")
        for n in (2, 4, 8, 16, 32, 64):
            projected = max(total / (n * efficiency), longest)
            print(f"  projected on {n:>2} workers: {projected / 60:6.1f} min")


if __name__ == "__main__":
    main()
