"""One rollout greedy step at Garnet(100, 5, 2): the fused CRN kernel vs its baselines.

The work: 100 states from nu x 5 actions x 20 rollouts x horizon 460 = 4.6 M transitions,
then a LogisticRegression fit (weighted all-pairs labels) on the Garnet features.

* fast path, as shipped: ``RolloutCSC`` on the native ``FiniteMDPVectorEnv`` with common
  random numbers across actions and the default critic on (m = 460: every rollout ends
  with ``gamma^460 V_hat(s_460)``, V_hat the LSTD value of the target from the previous
  call's transitions), stratified states. Timed on calls 2.. (the first call has no
  critic data yet). Whole rollouts run in the fused numba kernel of
  ``nsrl.greedy.sampling.rollouts`` (numpy fallback too);
* previous fast path (before CRN and the critic, copied below): independent rollouts, all
  10 000 of them advancing together, one ``env.sample`` per time step;
* per-step path: the operator on ``gym.make("Garnet-v0", ...)``, one rollout at a time
  through ``reset(seed=..., options={"state": s})`` and ``step``. Doing all 4.6 M
  transitions that way takes minutes, so it runs a 2-state x 2-rollout slice (9 200
  transitions) and the full time is extrapolated linearly in the number of transitions.

BLAS runs single-threaded here (threadpoolctl): the classifier fit is tiny, and on a shared
2-core machine OpenBLAS threads that spin for a busy core made it 3-5x slower.

Run: ``python benchmarks/bench_rollouts.py`` (target for the fast path: <= 0.2 s).
"""

import time

import gymnasium as gym
import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import RolloutCSC
from nsrl.greedy.sampling.common import Plan

S, A, B, K, H = 100, 5, 2, 20, 460


def previous_greedy(env, clf, target, rng):
    """The greedy step before CRN and the critic: i.i.d. states, independent rollouts."""
    mdp = env.mdp
    states = nsrl.model.kernels.start_states(mdp, S, rng)
    s = np.repeat(states, A * K)
    first = np.tile(np.repeat(np.arange(A), K), S)
    plan, returns, disc = Plan(target, mdp.state_reward), np.zeros(len(s)), 1.0
    for t in range(H):  # fixed horizon: every rollout is alive at every step
        a = first if t == 0 else plan.tables(t - 1, mdp)[0][s]
        s, r = env.sample(s, a, rng)
        returns += disc * r
        disc *= mdp.gamma
    q = returns.reshape(S, A, K).mean(axis=2)
    w = np.clip(q[:, :, None] - q[:, None, :], 0.0, None).sum(axis=2)
    rows, labels = np.nonzero(w > 0)
    x = env.observe(states) if env.observation != "index" else mdp.features[states]
    return clone(clf).fit(x[rows], labels, sample_weight=w[rows, labels] / w.mean()), S * A * K * H


def timed(call, repeats):
    times, n = [], 0
    for i in range(repeats):
        rng = np.random.default_rng(i)
        t0 = time.perf_counter()
        n = call(rng)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), n


def main():
    mdp = nsrl.garnet(S, A, B, seed=0)
    target = nsrl.Deterministic(np.random.default_rng(0).integers(0, A, S))
    clf = LogisticRegression(max_iter=1000)
    rows = []
    for backend in ("numba", "numpy"):
        env = FiniteMDPVectorEnv(mdp, num_envs=1, backend=backend)
        op = RolloutCSC(env, clf, n_states=S, n_rollouts=K, horizon=H, m=H)  # LSTD critic
        op.greedy(target, nsrl.Nu(), np.random.default_rng(99))  # numba compile, critic data

        def shipped(rng, op=op):
            g = op.greedy(target, nsrl.Nu(), rng)
            assert op.critic.stats is not None and g.samples == S * A * K * H
            return g.samples

        t, n = timed(shipped, 5)
        rows.append((f"shipped: CRN + critic (m = {H}), fused kernel ({backend})", t, n, False))
    env = FiniteMDPVectorEnv(mdp, num_envs=1)
    previous_greedy(env, clf, target, np.random.default_rng(99))
    t, n = timed(lambda rng: previous_greedy(env, clf, target, rng)[1], 5)
    rows.append(("previous fast path: independent, env.sample per step", t, n, False))
    gym_env = gym.make("Garnet-v0", n_states=S, n_actions=A, branching=B, seed=0)
    small = RolloutCSC(gym_env, clf, n_states=2, n_rollouts=2, horizon=H, critic=None)
    t, n = timed(lambda rng: small.greedy(target, nsrl.Nu(), rng).samples, 3)
    rows.append(("per-step Gymnasium reset/step (gym.make)", t * S * K * A * H / n, n, True))

    full = S * A * K * H
    print(f"One rollout greedy step, Garnet({S}, {A}, {B}): {S} states x {A} actions x {K} "
          f"rollouts x horizon {H} = {full / 1e6:.1f} M transitions")
    print(f"{'path':62s} {'time (s)':>9s} {'M trans/s':>10s}")
    for name, t, n, extrapolated in rows:
        note = f"  (extrapolated from {n} transitions)" if extrapolated else ""
        print(f"{name:62s} {t:9.3f} {full / t / 1e6:10.2f}{note}")
    print(f"shipped (numba) vs previous fast path: {rows[2][1] / rows[0][1]:.1f}x; vs per-step "
          f"Gymnasium: {rows[-1][1] / rows[0][1]:.0f}x; target <= 0.2 s: "
          f"{'met' if rows[0][1] <= 0.2 else 'NOT met'}")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
