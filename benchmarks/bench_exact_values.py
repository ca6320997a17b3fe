"""Exact values of a converging sequence of policies: MPI's sweeps against the Krylov solve.

What a scheme's exact loss costs at every iteration: ``ExactBackend.value`` of five
deterministic policies in a row, each differing from the optimal one in a shrinking share of
states (30%, 10%, 3%, 1%, 0.3%, a random action there; a fixed Generator), each warm-started
from the previous value as in a run. Two paths, one run, one core (BLAS and numba threads 1):

* before: the certified Krylov solve (:func:`nsrl.exact.iterative.certified_solve`: plain
  then ILU(0)-preconditioned BiCGSTAB), the only path until MPI's sweeps were shared;
* now: ``ExactBackend`` as users get it: MPI's sweeps (:func:`nsrl.exact.mpi.policy_value`)
  while they mix fast, handing over to the Krylov solve on the first slow-mixing policy.

Both are certified to the backend's ``value_tol``; the table gives the largest difference
between the two paths' values (at most the sum of their bounds). CPU seconds, best of
``--repeat``, the two paths interleaved.

    python benchmarks/bench_exact_values.py [--repeat 3] [--only garnet_1e5,car]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import nsrl  # noqa: E402
from nsrl.exact import ExactBackend  # noqa: E402
from nsrl.exact.operators import greedy_actions  # noqa: E402

MODELS = {
    "garnet_1e3": ("Garnet(10^3, 10, 2)", lambda: nsrl.garnet(1000, 10, 2, seed=0)),
    "garnet_1e4": ("Garnet(10^4, 10, 2)", lambda: nsrl.garnet(10**4, 10, 2, seed=0)),
    "garnet_1e5": ("Garnet(10^5, 10, 2)", lambda: nsrl.garnet(10**5, 10, 2, seed=0)),
    "grid": ("gridworld(316, seed=0)", lambda: nsrl.gridworld(316, seed=0)),
    "car": ("mountain_car(316, 316)", lambda: nsrl.mountain_car(316, 316)),
}
SHARES = (0.3, 0.1, 0.03, 0.01, 0.003)


def policies(mdp, v_star):
    best = greedy_actions(mdp, v_star)
    rng = np.random.default_rng(0)
    out = []
    for share in SHARES:
        a = best.copy()
        changed = rng.random(mdp.n_states) < share
        a[changed] = rng.integers(mdp.n_actions, size=int(changed.sum()))
        out.append(nsrl.Deterministic(a))
    return out


def run(mdp, pis, v_star, sweeps):
    b = ExactBackend(mdp)
    b._v_star, b._warm, b._sweeps_win = v_star, np.array(v_star), sweeps and b._sweeps_win
    t = time.process_time()
    values = [np.array(b.value(pi)) for pi in pis]
    return time.process_time() - t, values, b


def row(key, repeat):
    name, make = MODELS[key]
    mdp = make()
    v_star = ExactBackend(mdp).optimal_value()
    pis = policies(mdp, v_star)
    small = nsrl.garnet(400, 3, 2, seed=0)
    small_v = ExactBackend(small).optimal_value()
    run(small, policies(small, small_v), small_v, True)  # compiled before timing
    befores, nows = [], []
    for _ in range(repeat):  # interleaved: this machine's speed drifts over minutes
        befores.append(run(mdp, pis, v_star, False))
        nows.append(run(mdp, pis, v_star, True))
    before, now = min(r[0] for r in befores), min(r[0] for r in nows)
    old_values, (_, new_values, b) = befores[-1][1], nows[-1]
    diff = max(float(np.abs(x - y).max()) for x, y in zip(old_values, new_values, strict=True))
    path = "sweeps" if b._sweeps_win else "Krylov (handed over)"
    return (f"{name:24s} {mdp.n_states:>9d}  {before:8.3f}  {now:8.3f}  {before / now:6.1f}x  "
            f"{diff:9.1e}  {b.value_tol:8.1e}  {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(MODELS))
    args = ap.parse_args()
    print(f"values of {len(SHARES)} policies in a row, one core, cpu s, best of {args.repeat}; "
          f"load average at start {os.getloadavg()[0]:.1f}")
    print("model | states | before (Krylov) | now | speed-up | max diff | value_tol | path")
    for key in args.only.split(","):
        print(row(key, args.repeat), flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
