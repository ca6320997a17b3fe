"""Transitions per second: native vector env (numba / numpy) vs SyncVectorEnv vs one gym.make env.

Garnet S=100, A=4, b=5, N=4096 copies by default. Targets on a 2-core machine: the native
path >= 50 M transitions/s and >= 150x SyncVectorEnv. Run: python benchmarks/bench_envs.py
"""

import argparse
import os
import time

import gymnasium as gym
import numpy as np

import nsrl
from nsrl.envs import GarnetVectorEnv
from nsrl.model import kernels

GARNET = dict(n_states=100, n_actions=4, branching=5)


def best_rate(fn, n_transitions, repeats):
    """(best, median) of ``repeats`` timings in transitions/s; best = least disturbed by load."""
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        rates.append(n_transitions / (time.perf_counter() - t0))
    return max(rates), float(np.median(rates))


def native(backend, n_envs, n_steps, repeats):
    envs = GarnetVectorEnv(n_envs, **GARNET, max_episode_steps=1000, backend=backend)
    envs.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, (n_steps, n_envs))
    envs.step(actions[0])  # compile / warm up

    def run():
        for a in actions:
            envs.step(a)

    return best_rate(run, n_envs * n_steps, repeats)


def kernel_only(backend, n_envs, n_steps, repeats):
    mdp = nsrl.garnet(**GARNET, seed=0)
    rng = np.random.default_rng(0)
    states = kernels.start_states(mdp, n_envs, rng)
    actions = np.random.default_rng(0).integers(0, 4, (n_steps, n_envs))
    kernels.step_unchecked(mdp, states, actions[0], rng, backend=backend)

    def run():
        s = states
        for a in actions:
            s, _ = kernels.step_unchecked(mdp, s, a, rng, backend=backend)

    return best_rate(run, n_envs * n_steps, repeats)


def sync(n_envs, n_steps, repeats):
    envs = gym.make_vec("Garnet-v0", num_envs=n_envs, vectorization_mode="sync", **GARNET)
    envs.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, (n_steps, n_envs))

    def run():
        for a in actions:
            envs.step(a)

    return best_rate(run, n_envs * n_steps, repeats)


def single(n_steps, repeats):
    env = gym.make("Garnet-v0", **GARNET)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 4, n_steps).tolist()

    def run():
        for a in actions:
            env.step(a)  # TimeLimit truncates after 1000 steps; the task goes on regardless

    return best_rate(run, n_steps, repeats)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num-envs", type=int, default=4096)
    p.add_argument("--steps", type=int, default=100, help="native vector steps per timing")
    p.add_argument("--sync-envs", type=int, default=4096)
    p.add_argument("--sync-steps", type=int, default=5)
    p.add_argument("--single-steps", type=int, default=5_000)
    p.add_argument("--repeats", type=int, default=10)
    a = p.parse_args()
    print(f"Garnet S=100 A=4 b=5; {os.cpu_count()} cpus; load {os.getloadavg()[0]:.2f}")
    n, steps, reps = a.num_envs, a.steps, a.repeats
    timings = {
        f"native vector env, numba, N={n}": native("numba", n, steps, reps),
        f"native vector env, numpy, N={n}": native("numpy", n, steps, reps),
        f"kernel alone, numba, N={n}": kernel_only("numba", n, steps, reps),
        f"kernel alone, numpy, N={n}": kernel_only("numpy", n, steps, reps),
        f"SyncVectorEnv, N={a.sync_envs}": sync(a.sync_envs, a.sync_steps, reps),
        "single env via gym.make": single(a.single_steps, reps),
    }
    print(f"{'M transitions/s':<38} {'best':>10} {'median':>10}")
    for name, (best, median) in timings.items():
        print(f"{name:<38} {best / 1e6:10.3f} {median / 1e6:10.3f}")
    rows = {name: best for name, (best, _) in timings.items()}
    base = rows[f"SyncVectorEnv, N={a.sync_envs}"]
    print("ratios of best timings:")
    for backend in ("numba", "numpy"):
        rate = rows[f"native vector env, {backend}, N={n}"]
        print(
            f"native {backend}: {rate / 1e6:.1f} M/s (target >= 50: "
            f"{'met' if rate >= 50e6 else 'NOT met'}), {rate / base:.0f}x SyncVectorEnv "
            f"(target >= 150: {'met' if rate >= 150 * base else 'NOT met'}), "
            f"{rate / rows['single env via gym.make']:.0f}x single env"
        )


if __name__ == "__main__":
    main()
