"""Where the time of a ``bigger`` shard goes: cProfile of one shard at a reduced iteration count.

Runs ``nsrl.experiments.worker.compute_shard`` (the family's schemes on one MDP with one
operator, as the family's workers do) with ``--iterations`` instead of the sweep's count, at
the variant's first size unless ``--n-states`` says otherwise, under cProfile, and writes to
benchmarks/results/profile_bigger_<variant>_<n>.txt: the CPU seconds of the shard, the
cumulative seconds of the parts of a greedy call and of an iteration (drawing transitions,
the LSTD statistics, the LSTD solve, the greedy policy's table, rollouts, the classifier's
fits, the exact loss and greedy error of each iteration), each as a share of the profiled
total, and the 30 most expensive functions by own time. The categories are cumulative times
of named functions, so they may overlap (a solve inside a value estimate counts in both).

    python benchmarks/profile_bigger_shard.py --variant grid-lstdq --n-states 100000 --iterations 2

benchmarks/results/profile_bigger_grid-lstdq_100000_before.txt is the same command's output
at commit 9b02076's parent (before the dense X_pi change and the store system's reuse).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from pathlib import Path

from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.experiments.worker import compute_shard

ROOT = Path(__file__).resolve().parents[1]

# (label, (file suffix, function name)): cumulative time of every function matching one pair
PARTS = [
    ("greedy calls (all of the operator's work)", [("greedy/lstdq.py", "greedy"),
                                                   ("greedy/rollout.py", "greedy"),
                                                   ("greedy/model_based.py", "greedy")]),
    ("  drawing transitions (sampler)", [("sampling/model.py", "transitions"),
                                         ("sampling/env.py", "transitions")]),
    ("  LSTD statistics: counts into the store", [("greedy/transitions.py", "add")]),
    ("  LSTD statistics: G, b, X_pi (IndexSystem / DenseSystem)",
     [("greedy/lstdq.py", "_system")]),
    ("  LSTD solve (solve_target, X_pi products included)", [("lstd_system.py",
                                                              "solve_target")]),
    ("  greedy policy table and advantage", [("greedy/lstdq.py", "_table_policy"),
                                             ("greedy/lstdq.py", "_advantage")]),
    ("  rollouts (sampler.from_start, the compiled rollouts)", [("", "from_start"),
                                                                 ("sampling/rollouts.py", "run")]),
    ("  the classifier's fits (rollouts + CSC)", [("greedy/rollout.py", "fit")]),
    ("value estimates (CPI+'s line search)", [("greedy/lstdq.py", "value")]),
    ("exact loss of each iteration (nsrl.loss / evaluate)", [("", "loss"),
                                                             ("", "_exact_loss")]),
    ("greedy error of each iteration (measure_errors)", [("", "_greedy_error"),
                                                         ("", "greedy_error")]),
    ("building the MDP", [("experiments/domains.py", "build_mdp"),
                          ("experiments/runner.py", "build_mdp")]),
]


def cumulative(stats: pstats.Stats, keys: list[tuple[str, str]]) -> float:
    """Sum of the cumulative times of the top-level calls to the matching functions."""
    total = 0.0
    for (path, _, name), (_, _, _, cum, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if any(name == n and path.endswith(p) for p, n in keys if p) or \
                any(name == n for p, n in keys if not p):
            # only time not already inside another match (recursion, nested calls)
            inner = sum(c[3] for (cp, _, cn), c in callers.items()
                        if any(cn == n and (not p or cp.endswith(p)) for p, n in keys))
            total += cum - inner
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="bigger",
                        help="the family whose variant is profiled (e.g. bigger-powered)")
    parser.add_argument("--variant", default="grid-lstdq",
                        help="a variant of that family (bigger-powered: grid-lstdq-1e5 ...)")
    parser.add_argument("--n-states", type=int, default=None,
                        help="the shard's number of states (default: the variant's first)")
    parser.add_argument("--mdp", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--out", default=None,
                        help="results file name (default profile_bigger_<variant>_<n>.txt)")
    args = parser.parse_args()
    sweep = load_experiment(args.experiment).sweeps()[args.variant]
    spec = sweep.to_dict()
    full = spec["n_iterations"]
    spec["n_iterations"] = args.iterations
    if args.n_states is None:
        args.n_states = sweep.n_states[0]
    shard = Shard(args.n_states, sweep.n_actions[0], sweep.branching[0], args.mdp)
    profile = cProfile.Profile()
    wall = time.perf_counter()
    profile.enable()
    _, _, cpu, _ = compute_shard(spec, shard)
    profile.disable()
    wall = time.perf_counter() - wall
    stats = pstats.Stats(profile)
    total = stats.total_tt  # type: ignore[attr-defined]
    lines = [f"# Profile of the {args.experiment} shard {args.variant}, n_states={args.n_states}, "
             f"mdp={args.mdp}: {args.iterations} iterations (the sweep runs {full}), "
             f"{len(sweep.schemes)} schemes",
             f"# python benchmarks/profile_bigger_shard.py --experiment {args.experiment} "
             f"--variant {args.variant} "
             f"--n-states {args.n_states} --iterations {args.iterations}",
             f"shard: {cpu:.1f} CPU s ({wall:.0f} s wall); profiled total {total:.1f} s", "",
             "| part (cumulative, may overlap) | seconds | share |", "|---|---:|---:|"]
    for label, keys in PARTS:
        sec = cumulative(stats, keys)
        lines.append(f"| {label} | {sec:.1f} | {sec / total:.0%} |")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(30)
    lines += ["", "## 30 functions by own time", "", "```",
              *[s for s in out.getvalue().splitlines() if s.strip()][4:], "```"]
    text = "\n".join(lines) + "\n"
    print(text)
    name = args.out or f"profile_bigger_{args.variant}_{args.n_states}.txt"
    (ROOT / "benchmarks" / "results" / name).write_text(text)


if __name__ == "__main__":
    main()
