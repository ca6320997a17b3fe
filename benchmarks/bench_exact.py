"""Exact backend speed at n_states = 200, n_actions = 10 (issue 2).

Prints, in one run: one exact evaluation (ours) beside a plain per-call baseline
(dense P_pi by einsum + numpy.linalg.solve), a batch of 30 evaluations, and one full
iteration of each scheme with the paper's noisy projected greedy operator (mean over
iterations 1..K of a K-iteration run, the loss of the output included).

    python benchmarks/bench_exact.py [--branching 2] [--iterations 50]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import nsrl
from nsrl.exact import ExactBackend, evaluate_tables
from nsrl.schemes import PAPER_SCHEMES


def best_time(fn, repeat=20):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def baseline_evaluate(mdp, table):
    P_pi = np.einsum("sat,sa->st", mdp.P, table)
    r_pi = (table * mdp.R).sum(axis=1)
    return np.linalg.solve(np.eye(mdp.n_states) - mdp.gamma * P_pi, r_pi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--branching", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=50)
    args = ap.parse_args()
    mdp = nsrl.garnet(200, 10, args.branching, seed=0)
    rng = np.random.default_rng(0)
    pi = nsrl.Deterministic(rng.integers(10, size=200))
    table = pi.table(mdp)
    base = best_time(lambda: baseline_evaluate(mdp, table))
    ours = best_time(lambda: ExactBackend(mdp).value(pi))
    np.testing.assert_allclose(ExactBackend(mdp).value(pi), baseline_evaluate(mdp, table))
    tables = np.stack(
        [nsrl.Deterministic(rng.integers(10, size=200)).table(mdp) for _ in range(30)]
    )
    base30 = best_time(lambda: [baseline_evaluate(mdp, t) for t in tables], 5)
    ours30 = best_time(lambda: evaluate_tables(mdp, tables), 5)
    print(f"Garnet(200, 10, {args.branching}), gamma = 0.99")
    print(f"{'what':34s} {'nsrl':>10s} {'baseline':>10s} {'speed-up':>9s}")
    print(
        f"{'one evaluation (deterministic)':34s} {ours * 1e3:8.3f}ms {base * 1e3:8.3f}ms "
        f"{base / ours:8.1f}x"
    )
    print(
        f"{'30 evaluations (batched solve)':34s} {ours30 * 1e3:8.3f}ms {base30 * 1e3:8.3f}ms "
        f"{base30 / ours30:8.1f}x"
    )
    print(
        f"\none full iteration of each scheme (projected greedy, mean over "
        f"{args.iterations} iterations), in units of the baseline solve ({base * 1e3:.3f} ms):"
    )
    for name in PAPER_SCHEMES + ("cpi",):
        op = nsrl.ProjectedGreedy(mdp)
        t = time.perf_counter()
        nsrl.run(nsrl.make_scheme(name), op, args.iterations, rng=np.random.default_rng(1))
        per = (time.perf_counter() - t) / args.iterations
        print(f"  {name:10s} {per * 1e3:8.3f} ms/iteration  = {per / base:6.1f} baseline solves")


if __name__ == "__main__":
    main()
