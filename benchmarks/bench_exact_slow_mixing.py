"""Certified evaluations on slow-mixing models: plain BiCGSTAB (before) and ILU(0) (after).

For each model (the ``bigger`` family's 10^5-state grid world, MDP 0, and the 316 x 316
mountain car; a Garnet(10^5, 4, 4) as the fast-mixing control), a sequence of policies as a
scheme meets them: pi_0 (action 0), then five policy-iteration steps (each greedy for the
previous value), then the API(0.1)-like mixture 0.9 pi_k + 0.1 greedy of the last one. For
each policy: its value (warm-started from the previous value, as the exact backend does) and
its occupancy d_(pi, nu), both certified to the backend's tolerances, by
``certified_solve(..., precondition=False)`` (before: the plain chain) and by the default
(after), side by side. CPU seconds (``time.process_time``), one thread. Per model, the
largest difference between the two results (values in max-norm, occupancies in 1-norm) and
whether they are the same bit for bit.

    python benchmarks/bench_exact_slow_mixing.py [--size 316] [--out NAME]

Writes benchmarks/results/NAME.txt (default bench_exact_slow_mixing.txt).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.exact.iterative import OCCUPANCY_TOL, VALUE_RTOL, certified_solve
from nsrl.exact.operators import policy_rows
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard

ROOT = Path(__file__).resolve().parents[1]


def policies(mdp, n_steps: int = 5):
    """pi_0, n_steps policy-iteration steps, then a 0.9 / 0.1 mixture (built once)."""
    pi = nsrl.Deterministic(np.zeros(mdp.n_states, dtype=np.int64))
    out = [("pi_0", pi)]
    for k in range(n_steps):
        greedy = nsrl.Deterministic(nsrl.greedy_actions(mdp, nsrl.evaluate(mdp, pi)))
        out.append((f"PI step {k + 1}", greedy))
        pi = greedy
    mix = nsrl.Mixture([(0.9, out[1][1]), (0.1, pi)])
    out.append(("mixture 0.9/0.1", mix))
    return out


def solve_all(mdp, sequence, precondition: bool):
    g, rows, warm = mdp.gamma, [], None
    value_tol = VALUE_RTOL * mdp.r_max / (1 - g)
    for _, pi in sequence:
        P, r = policy_rows(mdp, pi)
        P.data *= g
        start = time.process_time()
        v, bv = certified_solve(P, r, g, value_tol, x0=warm, precondition=precondition)
        t_v = time.process_time() - start
        warm = v
        P_T = P.T.tocsr()
        start = time.process_time()
        d, bd = certified_solve(P_T, (1 - g) * mdp.start, g, OCCUPANCY_TOL, order=1,
                                precondition=precondition)
        rows.append((t_v, bv, time.process_time() - start, bd, v, d))
    return rows


def measure(name, mdp, lines):
    sequence = policies(mdp)
    solve_all(mdp, sequence[:1], True)  # compile once, outside the timings
    before = solve_all(mdp, sequence, False)
    after = solve_all(mdp, sequence, True)
    value_tol = VALUE_RTOL * mdp.r_max / (1 - mdp.gamma)
    lines.append(f"\n{name}: {mdp.n_states} states (value tol {value_tol:.1e} max-norm, "
                 f"occupancy tol {OCCUPANCY_TOL:.0e} 1-norm)")
    lines.append(f"{'policy':<18}{'value before':>14}{'after':>9}{'occupancy before':>19}"
                 f"{'after':>9}   certified bounds (value, occupancy) before | after")
    for (label, _), b, a in zip(sequence, before, after, strict=True):
        lines.append(f"{label:<18}{b[0]:>12.2f} s{a[0]:>7.2f} s{b[2]:>17.2f} s{a[2]:>7.2f} s"
                     f"   {b[1]:.1e}, {b[3]:.1e} | {a[1]:.1e}, {a[3]:.1e}")
    tb, ta = sum(b[0] + b[2] for b in before), sum(a[0] + a[2] for a in after)
    lines.append(f"{'total':<18}{tb:>48.2f} s before, {ta:.2f} s after: {tb / ta:.1f}x")
    dv = max(float(np.abs(a[4] - b[4]).max()) for b, a in zip(before, after, strict=True))
    dd = max(float(np.abs(a[5] - b[5]).sum()) for b, a in zip(before, after, strict=True))
    same = all(np.array_equal(a[4], b[4]) and np.array_equal(a[5], b[5])
               for b, a in zip(before, after, strict=True))
    lines.append(f"largest difference after - before: values {dv:.1e} (max-norm), occupancies "
                 f"{dd:.1e} (1-norm); bit for bit the same: {'yes' if same else 'no'}")
    print("\n".join(lines[-len(sequence) - 4:]), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=316, help="grid side (S ~ size^2)")
    parser.add_argument("--out", default="bench_exact_slow_mixing")
    args = parser.parse_args()
    n = args.size
    lines = [f"python benchmarks/bench_exact_slow_mixing.py --size {n}  (CPU s, 1 thread)"]
    with threadpool_limits(1):
        measure("mountain car", nsrl.mountain_car(n, n), lines)
        sweep = load_experiment("bigger").sweeps()["grid-exact"]
        measure("grid world (the bigger sweep's MDP 0)",
                sweep.model(Shard(n * n, 4, 4, 0)), lines)
        measure("Garnet(S, 4, 4), fast-mixing control", nsrl.garnet(n * n, 4, 4, seed=0),
                lines)
    out = ROOT / "benchmarks" / "results" / f"{args.out}.txt"
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
