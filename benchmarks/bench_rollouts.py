"""One rollout greedy step at Garnet(100, 5, 2): batched generative model vs per-step Gymnasium.

The work: 100 states from nu x 5 actions x 20 rollouts x horizon 460 = 4.6 M transitions,
then a LogisticRegression fit (weighted all-pairs labels) on the Garnet features.

* fast path: ``RolloutCSC`` on the native ``FiniteMDPVectorEnv``: all 10 000 rollouts
  advance together, one ``env.sample`` per time step (numba kernel; numpy fallback too);
* per-step path: the same operator on ``gym.make("Garnet-v0", ...)``, one rollout at a time
  through ``reset(options={"state": s})`` and ``step``. Doing all 4.6 M transitions that way
  takes minutes, so it runs a 2-state x 2-rollout slice (9 200 transitions) and the full
  time is extrapolated linearly in the number of transitions (rollouts are independent).

BLAS runs single-threaded here (threadpoolctl): the classifier fit is tiny, and on a shared
2-core machine OpenBLAS threads that spin for a busy core made it 3-5x slower.

Run: ``python benchmarks/bench_rollouts.py`` (target for the fast path: <= 0.2 s).
"""

import time

import gymnasium as gym
import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import RolloutCSC

S, A, B, K, H = 100, 5, 2, 20, 460


def timed(op, target, repeats):
    times = []
    for i in range(repeats):
        rng = np.random.default_rng(i)
        t0 = time.perf_counter()
        g = op.greedy(target, nsrl.Nu(), rng)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), g.samples


def main():
    mdp = nsrl.garnet(S, A, B, seed=0)
    target = nsrl.Deterministic(np.random.default_rng(0).integers(0, A, S))
    clf = LogisticRegression(max_iter=1000)
    rows = []
    for backend in ("numba", "numpy"):
        env = FiniteMDPVectorEnv(mdp, num_envs=1, backend=backend)
        op = RolloutCSC(env, clf, n_states=S, n_rollouts=K, horizon=H)
        timed(op, target, 1)  # warm-up: numba compilation, sklearn import
        t, n = timed(op, target, 5)
        rows.append((f"fast path, batched env.sample ({backend})", t, n, False))
    env = gym.make("Garnet-v0", n_states=S, n_actions=A, branching=B, seed=0)
    small = RolloutCSC(env, clf, n_states=2, n_rollouts=2, horizon=H)
    t, n = timed(small, target, 3)
    rows.append(("per-step Gymnasium reset/step (gym.make)", t * S * K * A * H / n, n, True))

    print(f"One rollout greedy step, Garnet({S}, {A}, {B}): {S} states x {A} actions x {K} "
          f"rollouts x horizon {H} = {S * A * K * H / 1e6:.1f} M transitions")
    print(f"{'path':48s} {'time (s)':>10s} {'M trans/s':>10s}")
    for name, t, n, extrapolated in rows:
        full = S * A * K * H
        note = f"  (extrapolated from {n} transitions)" if extrapolated else ""
        print(f"{name:48s} {t:10.3f} {full / t / 1e6:10.2f}{note}")
    print(f"speed-up of the fast path over per-step Gymnasium: {rows[-1][1] / rows[0][1]:.0f}x;"
          f" target <= 0.2 s: {'met' if rows[0][1] <= 0.2 else 'NOT met'}")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
