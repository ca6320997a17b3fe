"""Throughput of the sweep's fast path beside the reference path, and the projected wall time.

    python benchmarks/bench_sweep.py                  # fast path on all 27 instances
    python benchmarks/bench_sweep.py --instances mid  # n_S in {50, 100, 200}, n_A = 5, b = 2
    python benchmarks/bench_sweep.py --profile        # and where the time goes, by function

For each measured instance, MDP 0 of the ``paper`` preset is drawn and every scheme runs
its 30 runs x 100 iterations with the fast path (``nsrl.run(..., engine="batched")``). The
straightforward baseline, ``nsrl.run(make_scheme(s), ProjectedGreedy(mdp), ...)`` one run at
a time (``numpy.linalg.solve`` per evaluation), is timed in the same run on the mid instances
(n_A = 5, b = 2) with ``--baseline-runs`` runs scaled to 30 (it takes ~40 s per instance).

The full protocol is 30 MDPs per instance: each measured instance stands for its 30 MDPs;
the baseline's mid instance of each n_S stands for the 9 instances of that n_S. The 2-core
figure assumes the two workers scale perfectly (shards are independent); on a shared
machine it is a lower bound. BLAS runs single-threaded (threadpoolctl), as in the sweep's
workers (nsrl.experiments.worker.compute_shard), for the fast path and the baseline alike.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections import defaultdict

import numpy as np
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments.paper.sweep import SWEEP as PAPER
from nsrl.experiments.shards import Shard
from nsrl.model.garnet import garnet
from nsrl.schemes import make_scheme


def instances(which: str) -> list[tuple[int, int, int]]:
    if which == "all":
        return [(s, a, b) for s in PAPER.n_states for a in PAPER.n_actions for b in PAPER.branching]
    return [(s, 5, 2) for s in PAPER.n_states]


def paper_mdp(inst):
    shard = Shard(*inst, 0)  # MDP 0
    mdp = garnet(*inst, gamma=PAPER.gamma, seed=np.random.Generator(
        np.random.PCG64(PAPER.mdp_seed(shard))))
    return shard, mdp


def time_fast(inst, runs, iterations, profiler):
    shard, mdp = paper_mdp(inst)
    fast = {}
    for scheme in PAPER.scheme_names:
        rngs = PAPER.run_rngs(shard, scheme)[:runs]
        if profiler:
            profiler.enable()
        t = time.perf_counter()
        nsrl.run(scheme, "projected", iterations, rng=rngs, mdp=mdp, engine="batched")
        fast[scheme] = time.perf_counter() - t
        if profiler:
            profiler.disable()
    return fast


def time_baseline(inst, runs, iterations, baseline_runs):
    shard, mdp = paper_mdp(inst)
    base = {}
    for scheme in PAPER.scheme_names:
        t = time.perf_counter()
        for rng in PAPER.run_rngs(shard, scheme)[:baseline_runs]:
            nsrl.run(make_scheme(scheme), nsrl.ProjectedGreedy(mdp), iterations, rng=rng,
                     engine="reference")
        base[scheme] = (time.perf_counter() - t) * runs / baseline_runs
    return base


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--instances", default="all", choices=["mid", "all"])
    p.add_argument("--runs", type=int, default=PAPER.n_runs)
    p.add_argument("--iterations", type=int, default=PAPER.n_iterations)
    p.add_argument("--baseline-runs", type=int, default=2)
    p.add_argument("--profile", action="store_true",
                   help="also profile the fast path by function (cProfile slows it down)")
    args = p.parse_args()
    # Warm the numba caches so that compilation is not timed.
    for shape in [(20, 2, 1), (20, 2, 2), (160, 2, 2)]:
        for scheme in PAPER.scheme_names:
            nsrl.run(scheme, "projected", 3, rng=[np.random.default_rng(0)], engine="batched",
                     mdp=nsrl.garnet(*shape, seed=0))
    profiler = cProfile.Profile() if args.profile else None
    scale = PAPER.n_runs / args.runs * PAPER.n_iterations / args.iterations
    per_scheme, per_ns = defaultdict(float), defaultdict(float)
    print(f"{'instance':>14} " + " ".join(f"{s:>8}" for s in PAPER.scheme_names)
          + f" {'total s':>8}")
    for inst in instances(args.instances):
        fast = time_fast(inst, args.runs, args.iterations, profiler)
        for s, t in fast.items():
            per_scheme[s] += t
        per_ns[inst[0]] += sum(fast.values())
        print(f"{str(inst):>14} " + " ".join(f"{fast[s]:8.2f}" for s in PAPER.scheme_names)
              + f" {sum(fast.values()):8.2f}", flush=True)
    n_inst = len(instances(args.instances))
    measured = sum(per_scheme.values())
    full_fast = measured * scale * PAPER.n_mdps * 27 / n_inst
    print("\nbaseline (one run at a time, numpy.linalg.solve), mid instances:")
    base_total = 0.0
    for inst in instances("mid"):
        base = sum(time_baseline(inst, args.runs, args.iterations, args.baseline_runs).values())
        base_total += base
        print(f"{str(inst):>14} {base:8.2f} s")
    full_base = base_total * 9 * PAPER.n_mdps * scale
    n_it_fast = n_inst * len(PAPER.scheme_names) * args.runs * args.iterations
    n_it_base = 3 * len(PAPER.scheme_names) * args.runs * args.iterations
    print(f"\nscheme-iterations/s, one core: fast {n_it_fast / measured:,.0f} (all measured "
          f"instances)   baseline {n_it_base / base_total:,.0f} (mid instances)")
    print(f"projected full protocol ({PAPER.scheme_iterations:,} scheme-iterations):")
    print(f"  fast path : {full_fast / 60:7.1f} min on 1 core, {full_fast / 120:7.1f} min on 2")
    print(f"  baseline  : {full_base / 60:7.1f} min on 1 core, {full_base / 120:7.1f} min on 2")
    print("\nfast path by n_S (share of the measured time):")
    for n, t in sorted(per_ns.items()):
        print(f"  n_S = {n:3d}: {t:7.2f} s  {100 * t / measured:5.1f}%")
    print("where the fast path's time goes, per scheme:")
    for s, t in sorted(per_scheme.items(), key=lambda x: -x[1]):
        print(f"  {s:9s} {t:7.2f} s  {100 * t / measured:5.1f}%")
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
        print("\nby function (cProfile, tottime; the timings above include its overhead):")
        print("\n".join(line for line in out.getvalue().splitlines()[-14:] if line.strip()))


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
