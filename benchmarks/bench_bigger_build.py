"""Build time and v* time of the bigger domains (docs/bigger.md), one process per model.

    python benchmarks/bench_bigger_build.py --sides 316 [--no-vstar] >> \
        benchmarks/results/bench_bigger_build.txt

For each side n: ``nsrl.gridworld(n, seed=0)`` (obstacles 0.1: about 0.9 n^2 free cells) and
``nsrl.mountain_car(n, n)``; CPU and wall seconds of the build and of ``nsrl.optimal_value``
(certified policy iteration), one BLAS thread, in the same process.
"""

from __future__ import annotations

import argparse
import os
import time

from threadpoolctl import threadpool_limits

import nsrl


def clock(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", default="316", help="grid sides, comma-separated")
    parser.add_argument("--no-vstar", action="store_true", help="time the builds only")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cpus; load {os.getloadavg()[0]:.2f}")
    print("| model | states | build CPU s | build wall s | v* CPU s | v* wall s |")
    print("|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for side in (int(s) for s in args.sides.split(",")):
            for name, make in (("grid world", lambda s=side: nsrl.gridworld(s, seed=0)),
                               ("mountain car", lambda s=side: nsrl.mountain_car(s, s))):
                mdp, b_wall, b_cpu = clock(make)
                v = ("-", "-")
                if not args.no_vstar:
                    _, v_wall, v_cpu = clock(lambda m=mdp: nsrl.optimal_value(m))
                    v = (f"{v_cpu:.1f}", f"{v_wall:.1f}")
                print(f"| {name} {side} x {side} | {mdp.n_states} | {b_cpu:.1f} | {b_wall:.1f} "
                      f"| {v[0]} | {v[1]} |", flush=True)


if __name__ == "__main__":
    main()
