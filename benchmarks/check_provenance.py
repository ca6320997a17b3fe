"""Rerun one shard of a committed ``bigger-powered`` variant at the commit its provenance names.

``docs/bigger/powered_run/provenance.toml`` names the commit of nsrl that computed each
variant. This script checks the claim on one unit: it exports that commit's package (git
archive, as ``bench_lstdq_call.py --before`` does), recomputes the unit's shard with it in a
child process (``nsrl.experiments.runner.compute_shard`` on the sweep of the variant's
``manifest.json``, every thread pool on one thread as in a worker of the family's run), and
compares the value columns (loss, memory, step; samples and error for a learner) with the
committed shard's:

* **bitwise**: every value column byte for byte;
* otherwise **round-off**: the median absolute difference of the losses at most
  ``--median-tolerance`` (default 1e-12) and the largest at most ``--tolerance`` (default
  1e-8, the exact backend's certified accuracy on these domains). The losses depend on the
  machine's kernels: on one machine OpenBLAS's kernel alone (``OPENBLAS_CORETYPE``) moves
  them by up to ~1e-11. Where the kernels differ from the run's, the same code gives the
  same losses to a few ulps on most rows, and up to ~1e-10 where an iterative solve
  amplifies the round-off; another commit of the exact backend (another v*, solves stopped
  elsewhere) moves every row by the solver's own error, ~1e-11 on the car, which the median
  sees;
* else **differs** (exit status 1).

    python benchmarks/check_provenance.py car-exact-1e4            # unit 0, the named commit
    python benchmarks/check_provenance.py car-exact-1e4 --rev f6ce581 --unit 1
    python benchmarks/check_provenance.py grid-exact-1e4 car-exact-1e4 car-projected-1e4

``--rev`` runs another commit than the one named (to find which one computed a variant).
``--schemes`` recomputes some schemes only and compares their rows: cheaper, but not bitwise
comparable (the schemes of a shard share its model's exact backend, whose memo of values
and warm starts move the round-off of a scheme with the ones run before it). One table row
per check is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from revisions import export  # a sibling script: benchmarks/ is on the path

ROOT = Path(__file__).resolve().parents[1]
POWERED = ROOT / "docs" / "bigger" / "powered_run"
VALUES = ("loss", "memory", "step", "samples", "error")  # what storage.checksum hashes
KEYS = ("scheme", "run", "iteration")
# one thread for every pool, as in a loky worker of the runner (joblib sets these to
# cores // jobs: 1 on the 2-core machine that ran the family with --jobs 2)
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS", "NUMEXPR_NUM_THREADS")

# The child runs the exported package, whichever layout it has: the worker and the sweep
# in modules of their own since issue 45, in runner.py and presets.py before (the family's
# commits); the manifest's flat spec is read by both.
_CHILD = """
import json, sys, warnings
import numpy as np
try:
    from nsrl.experiments.sweep import Sweep
    from nsrl.experiments.worker import compute_shard
except ImportError:
    from nsrl.experiments.presets import Sweep
    from nsrl.experiments.runner import compute_shard
spec, name, out = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # a later release reads the flat spec
    shard = next(s for s in Sweep.from_dict(spec).shards() if s.name == name)
    result = compute_shard(spec, shard)
np.savez(out, **{k: np.asarray(v) for k, v in result[1].items()})
import nsrl
print(json.dumps({"cpu": result[2], "package": nsrl.__file__}))
"""


def commit_of(variant: str) -> str:
    """The commit provenance.toml names for ``variant``."""
    prov = tomllib.loads((POWERED / "provenance.toml").read_text())
    if variant not in prov:
        raise SystemExit(f"provenance.toml names no commit for {variant!r}; it has "
                         f"{', '.join(prov)}")
    return prov[variant]


def committed(variant: str, unit: int) -> tuple[dict, str, dict]:
    """(the sweep's spec, the shard's name, its columns) as committed."""
    folder = POWERED / variant
    spec = json.loads((folder / "manifest.json").read_text())["sweep"]
    hits = sorted((folder / "shards").glob(f"*_m{unit:03d}.parquet"))
    if len(hits) != 1:
        raise SystemExit(f"{folder}/shards: expected one shard of unit {unit}, found {len(hits)}")
    table = pq.read_table(hits[0])
    columns = {name: table.column(name).to_numpy(zero_copy_only=False)
               for name in table.column_names}
    return spec, hits[0].stem, columns


def recompute(package: str, spec: dict, name: str, tmp: str) -> tuple[dict, float]:
    """The shard's columns computed by the package under ``package``, and its CPU seconds."""
    out = Path(tmp) / "columns.npz"
    env = {**os.environ, "PYTHONPATH": package, **dict.fromkeys(THREAD_VARS, "1")}
    run = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec), name, str(out)],
                         env=env, check=True, capture_output=True, text=True, cwd=tmp)
    result = json.loads(run.stdout.splitlines()[-1])
    if not result["package"].startswith(package):  # PYTHONPATH must win over the installed nsrl
        raise RuntimeError(f"the child imported {result['package']}, not the one under {package}")
    with np.load(out, allow_pickle=True) as data:
        return {k: data[k] for k in data.files}, float(result["cpu"])


def rows_of(columns: dict, schemes: list[str] | None) -> dict:
    """``columns`` restricted to the rows of ``schemes`` (all rows when None)."""
    if schemes is None:
        return columns
    keep = np.isin(columns["scheme"].astype(str), schemes)
    return {k: np.asarray(v)[keep] for k, v in columns.items()}


def compare(new: dict, old: dict) -> dict:
    """How far the recomputed columns ``new`` are from the committed ``old``.

    Returns:
        ``bitwise`` (every value column equal byte for byte), ``max`` and ``median`` (of the
        losses' absolute differences), ``others`` (the largest absolute difference of each
        other value column) and ``apart`` (the schemes with a row that differs at all).
    """
    for k in KEYS:
        if not np.array_equal(np.asarray(new[k]).astype(str), np.asarray(old[k]).astype(str)):
            raise SystemExit(f"the recomputed shard's {k} column differs from the committed "
                             f"one's: not the same sweep")
    bitwise, others = True, {}
    apart = np.zeros(len(old["scheme"]), dtype=bool)
    for k in VALUES:
        if k not in old:
            continue
        a, b = np.asarray(new[k]), np.asarray(old[k])
        bitwise &= a.dtype == b.dtype and a.tobytes() == b.tobytes()
        same = (a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b
        apart |= ~same
        if k != "loss":
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
            others[k] = float(np.max(np.where(same, 0.0, d), initial=0.0))
    loss = np.abs(np.asarray(new["loss"]) - np.asarray(old["loss"]))
    if not np.all(np.isfinite(loss)):
        loss = np.where(np.isfinite(loss), loss, np.inf)
    return {"bitwise": bool(bitwise), "max": float(loss.max()),
            "median": float(np.median(loss)), "others": others,
            "apart": sorted(set(np.asarray(old["scheme"]).astype(str)[apart]))}


def verdict(c: dict, tolerance: float, median_tolerance: float) -> str:
    """``bitwise``, ``round-off`` or ``differs`` (the module doc)."""
    if c["bitwise"]:
        return "bitwise"
    if c["max"] <= tolerance and c["median"] <= median_tolerance and \
            all(v <= tolerance for v in c["others"].values()):
        return "round-off"
    return "differs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", nargs="+", help="e.g. car-exact-1e4 (several: one by one)")
    parser.add_argument("--unit", type=int, default=0, help="the unit (shard) to rerun")
    parser.add_argument("--rev", default=None,
                        help="the commit to run (default: the one provenance.toml names)")
    parser.add_argument("--schemes", nargs="+", default=None,
                        help="recompute these schemes only (default: every scheme)")
    parser.add_argument("--tolerance", type=float, default=1e-8,
                        help="largest absolute difference of a loss accepted as round-off")
    parser.add_argument("--median-tolerance", type=float, default=1e-12,
                        help="largest median absolute difference of the losses accepted")
    parser.add_argument("--save", metavar="NPZ", default=None,
                        help="also write the recomputed columns there (one variant)")
    args = parser.parse_args()
    print(f"# provenance check: unit {args.unit} rerun at "
          f"{args.rev or 'the commit provenance.toml names'}; round-off = median |loss "
          f"difference| <= {args.median_tolerance:g} and max <= {args.tolerance:g}\n")
    print("| variant | commit | schemes | CPU s | max abs. loss difference | median | "
          "other columns | schemes apart | verdict |\n|---|---|---|---:|---:|---:|---|---|---|",
          flush=True)
    failed = 0
    for variant in args.variant:
        rev = args.rev or commit_of(variant)
        spec, name, old = committed(variant, args.unit)
        if args.schemes is not None:
            unknown = set(args.schemes) - set(spec["schemes"])
            if unknown:
                raise SystemExit(f"{variant} runs no {', '.join(sorted(unknown))}")
            spec = {**spec, "schemes": [s for s in spec["schemes"] if s in args.schemes]}
        with tempfile.TemporaryDirectory() as tmp:
            new, cpu = recompute(export(rev, tmp), spec, name, tmp)
        if args.save:
            np.savez(args.save, **new)
        c = compare(new, rows_of(old, args.schemes))
        said = verdict(c, args.tolerance, args.median_tolerance)
        failed += said == "differs"
        which = "all" if args.schemes is None else " ".join(args.schemes)
        other = ", ".join(f"{k} {v:.2g}" for k, v in c["others"].items())
        print(f"| {variant} | {rev} | {which} | {cpu:.1f} | {c['max']:.2g} | "
              f"{c['median']:.2g} | {other} | {len(c['apart'])} of "
              f"{len(set(spec['schemes']))} | {said} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
