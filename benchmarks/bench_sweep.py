"""Throughput of the sweep's fast path beside the reference path, and the projected wall time.

    python benchmarks/bench_sweep.py                  # n_S in {50, 100, 200}, n_A = 5, b = 2
    python benchmarks/bench_sweep.py --instances all  # the 27 instances (one MDP each)

For each measured instance, MDP 0 of the ``paper`` preset is drawn and every scheme runs
its 30 runs x 100 iterations with

* the fast path (``nsrl.experiments.fast.simulate``: batched runs, incremental values), and
* the straightforward baseline: ``nsrl.run(make_scheme(s), ProjectedGreedy(mdp), ...)``,
  one run at a time (``numpy.linalg.solve`` per evaluation), timed on ``--baseline-runs``
  runs and scaled to 30.

The full protocol is 30 MDPs per instance; with a subset of instances, the mean instance
cost per n_S stands for its 9 instances. The 2-core figure assumes the two workers scale
perfectly (shards are independent); on a shared machine it is a lower bound. Set
OPENBLAS_NUM_THREADS=1 for a per-core measure (loky workers do the same).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections import defaultdict

import numpy as np

import nsrl
from nsrl.experiments.fast import simulate
from nsrl.experiments.presets import PAPER, Shard
from nsrl.garnet import garnet
from nsrl.schemes import make_scheme


def instances(which: str) -> list[tuple[int, int, int]]:
    if which == "all":
        return [(s, a, b) for s in PAPER.n_states for a in PAPER.n_actions for b in PAPER.branching]
    return [(s, 5, 2) for s in PAPER.n_states]


def time_instance(inst, runs, iterations, baseline_runs, profiler):
    shard = Shard(*inst, mdp=0)
    mdp = garnet(*inst, gamma=PAPER.gamma, seed=np.random.Generator(
        np.random.PCG64(PAPER.mdp_seed(shard))))
    fast, base = {}, {}
    for scheme in PAPER.schemes:
        rngs = PAPER.run_rngs(shard, scheme)[:runs]
        profiler.enable()
        t = time.perf_counter()
        simulate(mdp, scheme, rngs, iterations)
        fast[scheme] = time.perf_counter() - t
        profiler.disable()
        t = time.perf_counter()
        for rng in PAPER.run_rngs(shard, scheme)[:baseline_runs]:
            nsrl.run(make_scheme(scheme), nsrl.ProjectedGreedy(mdp), iterations, rng=rng)
        base[scheme] = (time.perf_counter() - t) * runs / baseline_runs
    return fast, base


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", default="mid", choices=["mid", "all"])
    p.add_argument("--runs", type=int, default=PAPER.n_runs)
    p.add_argument("--iterations", type=int, default=PAPER.n_iterations)
    p.add_argument("--baseline-runs", type=int, default=2)
    args = p.parse_args()
    # Warm the numba caches so that compilation is not timed.
    simulate(nsrl.garnet(20, 2, 2, seed=0), "nspi(30)", [np.random.default_rng(0)], 2)
    simulate(nsrl.garnet(20, 2, 2, seed=0), "cpi+", [np.random.default_rng(0)], 2)
    profiler = cProfile.Profile()
    per_scheme_fast, per_scheme_base = defaultdict(float), defaultdict(float)
    per_ns_fast, per_ns_base = defaultdict(list), defaultdict(list)
    print(f"{'instance':>14} {'fast s':>8} {'baseline s':>11} {'speed-up':>9}")
    for inst in instances(args.instances):
        fast, base = time_instance(inst, args.runs, args.iterations, args.baseline_runs,
                                   profiler)
        for s in fast:
            per_scheme_fast[s] += fast[s]
            per_scheme_base[s] += base[s]
        per_ns_fast[inst[0]].append(sum(fast.values()))
        per_ns_base[inst[0]].append(sum(base.values()))
        print(f"{str(inst):>14} {sum(fast.values()):8.2f} {sum(base.values()):11.2f} "
              f"{sum(base.values()) / sum(fast.values()):8.1f}x")
    scale = PAPER.n_runs / args.runs * PAPER.n_iterations / args.iterations
    full_fast = sum(np.mean(v) * 9 * PAPER.n_mdps for v in per_ns_fast.values()) * scale
    full_base = sum(np.mean(v) * 9 * PAPER.n_mdps for v in per_ns_base.values()) * scale
    measured = sum(per_scheme_fast.values())
    n_it = len(instances(args.instances)) * len(PAPER.schemes) * args.runs * args.iterations
    print(f"\nscheme-iterations/s, one core: fast {n_it / measured:,.0f}   "
          f"baseline {n_it / sum(per_scheme_base.values()):,.0f}")
    print(f"projected full protocol ({PAPER.scheme_iterations:,} scheme-iterations):")
    print(f"  fast path : {full_fast / 60:7.1f} min on 1 core, {full_fast / 120:7.1f} min on 2")
    print(f"  baseline  : {full_base / 60:7.1f} min on 1 core, {full_base / 120:7.1f} min on 2")
    print("\nwhere the fast path's time goes, per scheme (share of the measured time):")
    for s, t in sorted(per_scheme_fast.items(), key=lambda x: -x[1]):
        share = 100 * t / measured
        print(f"  {s:9s} {t:7.2f} s  {share:5.1f}%   baseline {per_scheme_base[s]:7.2f} s")
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(8)
    print("\nby function (cProfile, tottime):")
    print("\n".join(line for line in out.getvalue().splitlines()[-12:] if line.strip()))


if __name__ == "__main__":
    main()
