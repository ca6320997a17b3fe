"""CPI+ on the reference path: the cost of iteration k, now and with the flat mixtures of before.

`nsrl run --scheme 'cpi+' --garnet 100,5,2` used to slow down with k: every line-search
candidate rebuilt its mixture's table from all k components (100 iterations took 7.9 s, 30
took 0.74 s). Mixtures are now folded in O(1) (``Mixture.fold``: the table of
(1 - a) pi + a pi' from pi's cached table). Both run here, in one process, on the same
seeds: the baseline builds every candidate as a flat ``Mixture`` of all its components, as
before. Same decisions, so the same losses (checked).

    python benchmarks/bench_cpi_plus_per_k.py [--iterations 100] [--states 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import nsrl
from nsrl.policies import Mixture
from nsrl.schemes import api, cpi


def flat_fold_in(pi, new, alpha):
    """The old construction: a flat mixture of every component, its table built from all."""
    return new if alpha == 1.0 else Mixture([(1.0 - alpha, pi), (alpha, new)])


def timed_run(mdp, iterations, fold):
    old_api, old_cpi = api.fold_in, cpi.fold_in
    api.fold_in = cpi.fold_in = fold
    try:
        scheme, op, times, scored = nsrl.CPIPlus(), nsrl.ProjectedGreedy(mdp), [], []
        original, value = scheme.step, op.value

        def step(operator, rng):
            t, n = time.perf_counter(), len(calls)
            out = original(operator, rng)
            times.append(time.perf_counter() - t)
            scored.append(len(calls) - n)
            return out

        calls = []
        op.value = lambda policy, rng=None: calls.append(1) or value(policy, rng)
        scheme.step = step
        h = nsrl.run(scheme, op, iterations, rng=np.random.default_rng(0))
    finally:
        api.fold_in, cpi.fold_in = old_api, old_cpi
    return np.array(times), np.array(scored), h


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--states", type=int, default=100)
    args = ap.parse_args()
    mdp = nsrl.garnet(args.states, 5, 2, seed=0)
    nsrl.optimal_value(mdp)
    new, scored, h_new = timed_run(mdp, args.iterations, api.fold_in)
    old, _, h_old = timed_run(mdp, args.iterations, flat_fold_in)
    np.testing.assert_allclose(h_new.losses, h_old.losses, rtol=0, atol=1e-9)
    print(f"CPI+ reference path, Garnet({args.states}, 5, 2), ProjectedGreedy, "
          f"{args.iterations} iterations")
    print(f"{'iterations':>12s} {'candidates':>11s} {'folded (now)':>14s} "
          f"{'flat (before)':>14s}   ms per candidate scored")
    k = args.iterations
    for lo, hi in ((1, 10), (k // 2 - 4, k // 2 + 5), (k - 9, k)):
        n = scored[lo - 1:hi].sum()
        print(f"{lo:5d} - {hi:4d} {n / (hi - lo + 1):11.1f} {1e3 * new[lo - 1:hi].sum() / n:14.2f} "
              f"{1e3 * old[lo - 1:hi].sum() / n:14.2f}")
    print(f"{'whole run':>12s} {new.sum():13.2f}s {old.sum():13.2f}s")


if __name__ == "__main__":
    main()
