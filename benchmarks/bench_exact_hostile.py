"""Issue 47 item 4 at the real thresholds: easy models routed to elimination and float32.

Models of ``--states`` states (default 500,000, so that ``n_states x n_actions`` reaches
``mpi.ELIMINATE_MIN_PAIRS`` and ``n_states`` reaches ``mpi.LARGE_STATES``): every action
tied (two copies of a one-action Garnet's), a single action (elimination not routed), rewards
offset by 1e6 (1e6 + U(0, 1)), rewards scaled by 1e-40 and by 1e-50. Each is solved by
``nsrl.optimal_value(mdp, method="mpi")`` on its routed path, then by the float64 control
(thresholds raised so that neither elimination nor float32 runs), in one run, wall seconds;
the target is routed <= 3x control. Before the fix the routed path of the tied, offset and
1e-40 models ran to _MAX_GREEDY (10^4) greedy steps and refused (18-70 minutes for ties).

    python benchmarks/bench_exact_hostile.py [--states 500000] [--gamma 0.999]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import nsrl
import nsrl.exact.mpi as mpi
from nsrl import FiniteMDP


def models(n: int, gamma: float) -> dict[str, FiniteMDP]:
    """The hostile models of issue 47, built from Garnets of n states."""
    one = nsrl.garnet(n, 1, 2, seed=0, gamma=gamma)
    nxt, p = one.successors
    two = nsrl.garnet(n, 2, 2, seed=1, gamma=gamma)
    u = np.random.default_rng(2).random(two.R.shape)
    return {
        "tied": FiniteMDP._from_parts(np.repeat(nxt, 2, axis=1), np.repeat(p, 2, axis=1),
                                      np.repeat(one.R, 2, axis=1), gamma),
        "single": one,
        "offset-1e6": FiniteMDP._from_parts(*two.successors, 1e6 + u, gamma),
        "scale-1e-40": FiniteMDP._from_parts(*two.successors, two.R * 1e-40, gamma),
        "scale-1e-50": FiniteMDP._from_parts(*two.successors, two.R * 1e-50, gamma),
    }


def timed(mdp: FiniteMDP, control: bool) -> tuple[float, float, np.ndarray]:
    """(seconds, bound, v) of the mpi method on its routed path or the float64 control."""
    mdp = FiniteMDP._from_parts(*mdp.successors, mdp.R, mdp.gamma)  # no cached v*
    saved = mpi.ELIMINATE_MIN_PAIRS, mpi.LARGE_STATES
    if control:
        mpi.ELIMINATE_MIN_PAIRS = mpi.LARGE_STATES = 1 << 62
    try:
        t = time.perf_counter()
        v = nsrl.optimal_value(mdp, method="mpi")
        return time.perf_counter() - t, v.bound, np.asarray(v)
    finally:
        mpi.ELIMINATE_MIN_PAIRS, mpi.LARGE_STATES = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=500_000)
    ap.add_argument("--gamma", type=float, default=0.999)
    args = ap.parse_args()
    timed(nsrl.garnet(100, 2, 2, seed=0), False)  # compile the kernels before timing
    print(f"{args.states:,} states, gamma {args.gamma}; thresholds: elimination from "
          f"{mpi.ELIMINATE_MIN_PAIRS:,} pairs, float32 from {mpi.LARGE_STATES:,} states")
    print(f"{'model':<12} {'routed s':>9} {'control s':>10} {'ratio':>6} {'|v - v_ctl|':>12} "
          f"{'bounds':>10}")
    for name, mdp in models(args.states, args.gamma).items():
        t, b, v = timed(mdp, False)
        tc, bc, vc = timed(mdp, True)
        gap = float(np.abs(v - vc).max())
        assert gap <= b + bc, (name, gap, b, bc)
        print(f"{name:<12} {t:9.2f} {tc:10.2f} {t / tc:6.2f} {gap:12.3g} {b + bc:10.3g}")


if __name__ == "__main__":
    main()
