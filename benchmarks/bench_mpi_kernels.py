"""The kernels of modified policy iteration at 10^6 states, one against another.

Behind the choices of ``nsrl.exact.mpi`` for large models (``LARGE_STATES``,
``ELIMINATE_MIN_PAIRS``), on Garnet(n, 10, 2) (default n = 10^6), one core, milliseconds
per call, the variants of each pair interleaved ``--repeat`` times (this machine's memory
speed drifts over minutes) and the median printed:

* a greedy step on every action, float64, the policy's rows copied in the loop (fused) or
  in a pass of their own (apart, then ``policy_rows``);
* the same step on float32 copies of the successor lists (int32 next states);
* a greedy step on the rows left after MacQueen's elimination (one action per state here,
  as at the end of a solve), fused or apart;
* a Jacobi sweep ``T_pi v`` in float64 and in float32 (the correction sweeps);

then the solver's own counts (deterministic): ``optimal_mpi`` on the Garnet (greedy steps,
those on the rows left by MacQueen's elimination, sweeps, pairs eliminated), and on the
grid world and mountain car of ``bench_exact_peers.py`` with early evaluations capped at 20
sweeps (the cap before) and at ``mpi.CAP``.

    python benchmarks/bench_mpi_kernels.py [--n 1000000] [--repeat 7]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import nsrl  # noqa: E402
from nsrl.exact import mpi  # noqa: E402
from nsrl.exact.sweeps import (  # noqa: E402
    count_rows,
    greedy_rows,
    greedy_step,
    keep_rows,
    policy_rows,
    policy_rows_of,
    policy_step,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    mdp = nsrl.garnet(args.n, 10, 2, seed=0)
    (nxt, probs), R, g = mdp.successors, mdp.R, mdp.gamma
    n = mdp.n_states
    v = np.random.default_rng(0).random(n)
    u, actions = np.empty(n), np.zeros(n, dtype=np.int64)
    rows = mpi._Rows(n, nxt.shape[2])
    none = np.empty(0, dtype=np.float32)
    gaps = np.empty(R.size, dtype=np.float32)
    greedy_step(R, nxt, probs, g, v, u, actions, rows.r, rows.nxt, rows.p, 0.0, gaps, True,
                True, False)
    every = mpi._every_action(mdp)
    left = count_rows(every.ptr, gaps, 0.0)  # the best action of each state
    best = mpi._ActionRows(*keep_rows(*every, gaps, 0.0, left))
    low = mpi._Low(nxt.astype(np.int32), probs.astype(np.float32), v.astype(np.float32))
    v32, u32 = v.astype(np.float32), np.empty(n, dtype=np.float32)
    step = (rows.r, rows.nxt, rows.p)

    # the rows of the greedy policy (the first greedy_step above), in float32 too
    step32 = (rows.r.astype(np.float32), rows.nxt.copy(), rows.p.astype(np.float32))

    def full(apart, m=None):
        nx, pr, vv = (nxt, probs, v) if m is None else (m.nxt, m.probs, m.v)
        greedy_step(R, nx, pr, g, vv, u, actions, *step, 0.0, none, False, True, apart)
        if apart:
            policy_rows(R, nxt, probs, actions, *step)

    def left_rows(apart):
        greedy_rows(*best, g, v, u, actions, *step, 0.0, none, False, apart)
        if apart:
            policy_rows_of(*best, actions, *step)

    pairs = {
        "greedy step, every action, float64": {"fused": lambda: full(False),
                                               "apart": lambda: full(True)},
        "greedy step, every action, apart": {"float64": lambda: full(True),
                                             "float32": lambda: full(True, low)},
        "greedy step, the rows left (1 per state)": {"fused": lambda: left_rows(False),
                                                     "apart": lambda: left_rows(True)},
        "Jacobi sweep": {"float64": lambda: policy_step(*step, g, v, u),
                         "float32": lambda: policy_step(*step32, g, v32, u32)},
    }
    for fns in pairs.values():  # compiled before timing
        for fn in fns.values():
            fn()
    print(f"Garnet({n}, 10, 2): ms per call, median of {args.repeat} interleaved; "
          f"load average at start {os.getloadavg()[0]:.1f}")
    for name, fns in pairs.items():
        times: dict[str, list[float]] = {k: [] for k in fns}
        for i in range(args.repeat):
            for key in (list(fns) if i % 2 == 0 else list(fns)[::-1]):
                t = time.perf_counter()
                fns[key]()
                times[key].append(1e3 * (time.perf_counter() - t))
        cells = "  ".join(f"{k} {np.median(x):7.1f}" for k, x in times.items())
        print(f"{name:42s}  {cells}", flush=True)
    counts(mdp)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


def counts(garnet) -> None:
    """The solver's counts (see the module doc)."""
    reduced = []
    rows_step = mpi.greedy_rows

    def counted(*args):
        reduced.append(1)
        return rows_step(*args)

    mpi.greedy_rows = counted
    try:
        _, _, stats = mpi.optimal_mpi(garnet, 1e-8)
    finally:
        mpi.greedy_rows = rows_step
    print(f"optimal_mpi on Garnet({garnet.n_states}, 10, 2), tol 1e-8: {stats}, greedy steps "
          f"on the rows left {len(reduced)}, pairs eliminated "
          f"{stats['eliminated'] / garnet.R.size:.0%}")
    cap = mpi.CAP
    for name, mdp in (("gridworld(316, seed=0)", nsrl.gridworld(316, seed=0)),
                      ("mountain_car(316, 316)", nsrl.mountain_car(316, 316))):
        for mpi.CAP in (20, cap):
            _, _, stats = mpi.optimal_mpi(mdp, 1e-8)
            print(f"optimal_mpi on {name}, cap {mpi.CAP}: greedy {stats['greedy']}, "
                  f"sweeps {stats['sweeps']}, krylov {stats['krylov']}")
        mpi.CAP = cap


if __name__ == "__main__":
    main()
