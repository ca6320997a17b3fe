"""Nothing slower: today's nsrl beside an earlier revision's, in one run, interleaved.

    python benchmarks/bench_before_after.py                       # sweep, quick, walk
    python benchmarks/bench_before_after.py --parts suite         # the two test suites (~35 min)
    python benchmarks/bench_before_after.py --rev ec3e9e9 --parts sweep,quick,walk,suite

Both revisions are checked out with ``git worktree`` into a temporary folder (``--rev``,
default ec3e9e9: main before architecture round 3, the operators at full speed and
reliability round 5; ``--after``, default HEAD), and every measurement runs in child
processes that import one or the other package, the two alternating (before first in even
rounds, after first in odd ones), so that a drift of the machine's speed over minutes falls
on both. Times are the children's CPU seconds (every child is one thread: BLAS is pinned to
one thread as in a sweep's worker), best of ``--repeat``.

Parts:

* ``sweep``: ``bench_sweep``'s fast path on its mid instances (n_S in {50, 100, 200},
  n_A = 5, b = 2, MDP 0 of the ``paper`` preset): every scheme's 30 runs x 100 iterations
  with the batched engine and the projected operator, and the largest difference between the
  two revisions' losses (the same seeds give the same numbers, to round-off).
* ``quick``: ``nsrl reproduce --preset quick`` from a fresh process (imports, the 27 shards
  on one worker, the report and its analysis), and the largest difference between the two
  revisions' stored losses.
* ``walk``: the files of the package a run walks through, counted in the child
  (``sys.setprofile``): those whose code executes while one shard of the ``quick`` preset is
  computed (``compute_shard``, the worker's call), and, for one ``nsrl run`` from a fresh
  process, the modules imported and the files entered (module bodies included).
* ``suite``: each revision's own test suite as CI runs it (``python -m pytest -n 2``), cold
  (fresh worktrees: numba compiles its caches): its wall time, and the time of the tests the
  two suites share (by node id, from ``--durations=0``); then, warm and the other revision
  first, the files holding the shared tests, and the tests that moved most. A suite that
  fails leaves its log in ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
THREADS = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                            "NUMBA_NUM_THREADS")}

# The two layouts of the experiments package: sweep.py/worker.py since architecture round 3,
# presets.py/runner.py before.
_IMPORTS = """
import json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
try:
    from nsrl.experiments.worker import compute_shard
except ImportError:
    from nsrl.experiments.runner import compute_shard
"""

_SWEEP_CHILD = _IMPORTS + """
import nsrl
from nsrl.experiments.paper.sweep import SWEEP
from nsrl.model.garnet import garnet
shards = {s.name: s for s in SWEEP.shards()}
schemes = getattr(SWEEP, "scheme_names", SWEEP.schemes)  # (name, options) specs since round 3
for shape in [(20, 2, 1), (20, 2, 2), (160, 2, 2)]:  # numba compiled before timing
    for scheme in schemes:
        nsrl.run(scheme, "projected", 3, rng=[np.random.default_rng(0)], engine="batched",
                 mdp=garnet(*shape, seed=0))
out = {}
for n in SWEEP.n_states:
    shard = shards[f"s{n:03d}_a05_b02_m000"]
    mdp = garnet(n, 5, 2, gamma=SWEEP.gamma,
                 seed=np.random.Generator(np.random.PCG64(SWEEP.mdp_seed(shard))))
    cpu, losses = 0.0, []
    for scheme in schemes:
        rngs = SWEEP.run_rngs(shard, scheme)
        t = time.process_time()
        h = nsrl.run(scheme, "projected", SWEEP.n_iterations, rng=rngs, mdp=mdp,
                     engine="batched")
        cpu += time.process_time() - t
        losses.append(np.asarray(h.losses).tolist())
    out[n] = {"cpu": cpu, "losses": losses}
print(json.dumps(out))
"""

_WALK_CHILD = _IMPORTS + """
import os
from nsrl.experiments import load_experiment
package = os.path.dirname(__import__("nsrl").__file__)
sweeps = load_experiment("quick").sweeps()  # a dict by name, in both layouts
sweep = next(iter(sweeps.values())) if isinstance(sweeps, dict) else sweeps[0]
shard = sweep.shards()[0]
spec = sweep.to_dict()
before = {m for m in sys.modules if m.startswith("nsrl")}
executed = set()
def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.startswith(package):
        executed.add(frame.f_code.co_filename)
sys.setprofile(profile)
compute_shard(spec, shard)
sys.setprofile(None)
imported = {m for m in sys.modules if m.startswith("nsrl")}
print(json.dumps({"modules": len(imported), "during": len(imported - before),
                  "executed": len(executed), "shard": shard.name,
                  "files": sorted(os.path.relpath(f, package) for f in executed)}))
"""

_RUN_CHILD = """
import io, json, os, sys, contextlib
executed = set()
def profile(frame, event, arg):
    if event == "call" and "/nsrl/" in frame.f_code.co_filename:
        executed.add(frame.f_code.co_filename)
sys.setprofile(profile)  # from before the first import: module bodies count as entered
from nsrl.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(["run", "--scheme", "api", "--garnet", "20,2,2", "--operator", "lstdq",
          "--iterations", "3"])
sys.setprofile(None)
imported = {m for m in sys.modules if m.startswith("nsrl")}
package = os.path.dirname(sys.modules["nsrl"].__file__)
print(json.dumps({"modules": len(imported), "executed": len(executed),
                  "files": sorted(os.path.relpath(f, package) for f in executed)}))
"""

_QUICK_CHILD = """
import sys
from nsrl.cli import main
raise SystemExit(main(["reproduce", "--preset", "quick", "--out", sys.argv[1]]))
"""


def checkout(rev: str, folder: Path) -> Path:
    """A worktree of ``rev`` with ``envs/`` reachable as ``nsrl.envs`` from its PYTHONPATH."""
    tree = folder / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), rev],
                   check=True, capture_output=True)
    (tree / "nsrl" / "envs").symlink_to(tree / "envs", target_is_directory=True)
    return tree


def child(tree: Path, code: str, *args: str, cwd: Path | None = None):
    """(stdout, the child's CPU seconds, wall seconds) of ``code`` run on ``tree``'s package."""
    env = {**os.environ, **THREADS, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    before = os.times()
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd or tree,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = os.times()
    if done.returncode:
        raise SystemExit(f"child failed on {tree.name}:\n{done.stderr[-3000:]}")
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return done.stdout, cpu, wall


def alternate(trees, measure, repeat: int):
    """Each tree's results, the trees taking turns (the first one first in even rounds)."""
    results = {name: [] for name in trees}
    names = list(trees)
    for r in range(repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            results[name].append(measure(trees[name]))
    return results


def part_sweep(trees, repeat):
    runs = alternate(trees, lambda tree: json.loads(child(tree, _SWEEP_CHILD)[0]), repeat)
    names = list(trees)
    print("\n### bench_sweep's fast path (mid instances, 8 schemes x 30 runs x 100 iterations)"
          f"\n\n| n_S | {names[0]} CPU s | {names[1]} CPU s | after / before | "
          "largest loss difference |\n|---:|---:|---:|---:|---:|")
    total = {name: 0.0 for name in names}
    import numpy as np
    for n in runs[names[0]][0]:
        best = {name: min(r[n]["cpu"] for r in runs[name]) for name in names}
        diff = max(float(np.nanmax(np.abs(np.array(a) - np.array(b))))
                   for a, b in zip(runs[names[0]][0][n]["losses"],
                                   runs[names[1]][0][n]["losses"], strict=True))
        for name in names:
            total[name] += best[name]
        print(f"| {n} | {best[names[0]]:.2f} | {best[names[1]]:.2f} | "
              f"{best[names[1]] / best[names[0]]:.2f} | {diff:.1e} |")
    print(f"| all | {total[names[0]]:.2f} | {total[names[1]]:.2f} | "
          f"{total[names[1]] / total[names[0]]:.2f} | |", flush=True)


def part_quick(trees, repeat, folder: Path):
    import numpy as np
    import pyarrow.parquet as pq

    count = iter(range(1000))

    def measure(tree):
        out = folder / f"quick-{tree.name}-{next(count)}"
        _, cpu, wall = child(tree, _QUICK_CHILD, str(out))
        tables = sorted(out.rglob("*.parquet"))
        losses = {p.relative_to(out).as_posix(): pq.read_table(p).to_pandas()
                  .sort_values(["scheme", "run", "iteration"])["loss"].to_numpy()
                  for p in tables}
        return cpu, wall, losses

    runs = alternate(trees, measure, repeat)
    names = list(trees)
    a, b = runs[names[0]][0][2], runs[names[1]][0][2]
    common = sorted(set(a) & set(b))
    diff = max((float(np.max(np.abs(a[k] - b[k]))) for k in common if len(a[k]) == len(b[k])),
               default=float("nan"))
    print("\n### nsrl reproduce --preset quick, from a fresh process (one worker)\n\n"
          "| revision | CPU s (best) | wall s (best) | shards |\n|---|---:|---:|---:|")
    for name in names:
        cpu = min(r[0] for r in runs[name])
        wall = min(r[1] for r in runs[name])
        print(f"| {name} | {cpu:.1f} | {wall:.1f} | {len(runs[name][0][2])} |")
    ratio = min(r[0] for r in runs[names[1]]) / min(r[0] for r in runs[names[0]])
    print(f"\nafter / before (CPU): {ratio:.2f}; the same shards by name: {len(common)}; "
          f"largest loss difference over them: {diff:.1e}", flush=True)


def part_walk(trees):
    print("\n### The files a run of one quick shard walks through\n\n"
          "| revision | shard | nsrl modules imported | imported by the run | files executed |"
          "\n|---|---|---:|---:|---:|")
    files = {}
    for name, tree in trees.items():
        got = json.loads(child(tree, _WALK_CHILD)[0])
        files[name] = set(got["files"])
        print(f"| {name} | {got['shard']} | {got['modules']} | {got['during']} | "
              f"{got['executed']} |")
    first, second = files
    print(f"executed only at {first}: {', '.join(sorted(files[first] - files[second]))}")
    print(f"executed only at {second}: {', '.join(sorted(files[second] - files[first]))}")
    print("\n`nsrl run --scheme api --garnet 20,2,2 --operator lstdq --iterations 3`, from a "
          "fresh process (imports included)\n\n| revision | nsrl modules imported | files "
          "entered |\n|---|---:|---:|")
    for name, tree in trees.items():
        got = json.loads(child(tree, _RUN_CHILD)[0])
        files[name] = set(got["files"])
        print(f"| {name} | {got['modules']} | {got['executed']} |")
    print(f"entered only at {first}: {', '.join(sorted(files[first] - files[second]))}")
    print(f"entered only at {second}: {', '.join(sorted(files[second] - files[first]))}")
    print("(modules imported: every nsrl module in sys.modules once the shard is computed; "
          "files executed: the package's files whose code ran during compute_shard)",
          flush=True)


_DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+)")


def run_suite(tree: Path, log: Path, paths: list[str] | None = None):
    """(wall s, {node id: s}, pytest's summary line, rc) of ``tree``'s suite with -n 2, or of
    its test files ``paths``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider",
            "--durations=0"]  # no -q: pyproject's addopts has it, twice hides the summary
    if paths is not None:
        args += paths
    t = time.perf_counter()
    with open(log, "w") as fh:
        rc = subprocess.run(args, cwd=tree, env=env, stdout=fh, stderr=subprocess.STDOUT
                            ).returncode
    wall = time.perf_counter() - t
    text = log.read_text()
    per_test: dict[str, float] = {}
    for line in text.splitlines():
        m = _DURATION.match(line)
        if m:
            per_test[m.group(3)] = per_test.get(m.group(3), 0.0) + float(m.group(1))
    summary = next((line for line in reversed(text.splitlines())
                    if " passed" in line or " failed" in line), "?")
    if rc:  # keep what failed: the log's temporary folder goes at the end
        kept = RESULTS / f"bench_before_after_suite-{tree.name}-failed.txt"
        tail = [line for line in text.splitlines() if not _DURATION.match(line)]
        kept.write_text("\n".join(tail[-400:]) + "\n")
        print(f"(the suite of {tree.name} ended with status {rc}: its log, durations left "
              f"out, is kept in {kept.relative_to(ROOT)})", flush=True)
    return wall, per_test, summary.strip("= "), rc


def part_suite(trees, folder: Path):
    """Round 1: each revision's whole suite, cold (numba compiles its caches in the fresh
    worktree, as on CI). Round 2, the other revision first: only the tests both suites share
    (by node id), warm. Per test: setup + call + teardown from ``--durations=0``."""
    names = list(trees)
    print("\n### Each revision's own test suite, python -m pytest -n 2\n\nRound 1, cold "
          f"(fresh worktrees, numba compiles its caches as on CI), {names[0]} first:\n")
    cold = {name: run_suite(tree, folder / f"suite-{name}.txt") for name, tree in trees.items()}
    common = sorted(set(cold[names[0]][1]) & set(cold[names[1]][1]))
    print("| revision | wall s | summary | tests timed | their summed time s | "
          "shared tests' summed time s |\n|---|---:|---|---:|---:|---:|")
    for name in names:
        wall, per_test, summary, rc = cold[name]
        shared = sum(per_test[k] for k in common)
        print(f"| {name} | {wall:.0f} | {summary} (rc {rc}) | {len(per_test)} | "
              f"{sum(per_test.values()):.0f} | {shared:.0f} |")
    print(f"\nshared tests (same node id in both suites): {len(common)}", flush=True)
    files = sorted({k.split("::")[0] for k in common})
    print(f"\nRound 2, warm, {names[1]} first: the shared tests' {len(files)} files, "
          "the shared tests' times summed\n\n| revision | wall s | summary | shared tests' "
          "summed time s |\n|---|---:|---|---:|")
    warm = {}
    for name in names[::-1]:
        warm[name] = run_suite(trees[name], folder / f"warm-{name}.txt", files)
    for name in names:
        wall, per_test, summary, rc = warm[name]
        print(f"| {name} | {wall:.0f} | {summary} (rc {rc}) | "
              f"{sum(per_test.get(k, 0.0) for k in common):.0f} |")
    before, after = (warm[n][1] for n in names)
    diffs = sorted(((after.get(k, 0.0) - before.get(k, 0.0), k) for k in common), reverse=True)
    print("\nThe shared tests that moved most (round 2, s):\n\n| test | "
          f"{names[0]} | {names[1]} |\n|---|---:|---:|")
    for _, k in diffs[:8] + diffs[-5:]:
        print(f"| {k} | {before.get(k, 0.0):.2f} | {after.get(k, 0.0):.2f} |")
    print(flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rev", default="ec3e9e9", help="the revision before (default ec3e9e9)")
    p.add_argument("--after", default="HEAD", help="the revision after (default HEAD)")
    p.add_argument("--parts", default="sweep,quick,walk",
                   help="comma-separated, of sweep, quick, walk, suite")
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    parts = args.parts.split(",")
    unknown = set(parts) - {"sweep", "quick", "walk", "suite"}
    if unknown:
        p.error(f"unknown parts {sorted(unknown)}; choose from sweep, quick, walk, suite")
    after = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.after],
                           check=True, capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()[0]
    print(f"# python benchmarks/bench_before_after.py --rev {args.rev} --after {after} "
          f"--parts {args.parts} --repeat {args.repeat} ({time.strftime('%Y-%m-%d %H:%M')}, "
          f"load average at start {load:.1f})")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = {args.rev: checkout(args.rev, folder), after: checkout(after, folder)}
        try:
            if "sweep" in parts:
                part_sweep(trees, args.repeat)
            if "quick" in parts:
                part_quick(trees, args.repeat, folder)
            if "walk" in parts:
                part_walk(trees)
            if "suite" in parts:
                part_suite(trees, folder)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tree)], capture_output=True)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
