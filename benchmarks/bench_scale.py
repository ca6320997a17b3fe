"""nsrl at scale: Garnet(n_S, 10, 2) from 10^3 to 10^6 states, beside mdptoolbox-hiive.

For each n_S in {10^3, 10^4, 10^5, 10^6} (n_A = 10, b = 2, seed 0), each task runs in a fresh
subprocess, which reports its seconds and its peak resident memory (ru_maxrss, the model's
construction included):

* ``build``: ``nsrl.garnet`` (the classic draw up to 10^4 states, the scalable one above);
* ``eval``: the exact value of a uniformly random deterministic policy (first call on this
  model; the compiled kernels warmed up on a small model, as in every timed task);
* ``vstar``: v* with its certified bound |v - v*| <= |T v - v| / (1 - gamma);
* ``loss``: a random policy's exact loss once v* is known;
* ``api10``: 10 iterations of API with the exact greedy operator (v* computed beforehand);
* ``vecenv``: ``gym.make_vec("Garnet-v0", num_envs=4096, ...)``, then 100 steps with a
  reset to chosen states every 20 steps (reset-to-state included): transitions per second;
* ``lstdq``: one LSTD-Q greedy call drawing 10^6 transitions, one-hot features.

mdptoolbox-hiive, side by side where it runs (``--baseline``): its policy evaluation
(``_evalPolicyMatrix``, one ``numpy.linalg.solve``), its policy iteration and its value
iteration (epsilon = 0.01, its own iteration bound), on per-action scipy.sparse matrices and,
up to 3 000 states, on the dense (A, S, S) array (whichever is faster is the baseline of the
targets). ``skip_check=True`` above 10^4 states (its stochasticity check is a Python loop).
A baseline task that exceeds ``--timeout`` seconds or fails is reported as such.

BLAS runs single-threaded (one core). Run: ``python benchmarks/bench_scale.py`` (all sizes,
~15 minutes) or ``--sizes 1000,3000`` for the side-by-side targets alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

N_ACTIONS, BRANCHING = 10, 2
_clock = time.perf_counter  # --cpu: the process's CPU time (single-threaded work)


def _rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _garnet(n):
    import nsrl

    return nsrl.garnet(n, N_ACTIONS, BRANCHING, seed=0)


def _random_policy(n):
    import nsrl

    return nsrl.Deterministic(np.random.default_rng(1).integers(0, N_ACTIONS, n))


def task_nsrl(name: str, n: int) -> dict:
    import nsrl
    from nsrl.exact import backend

    if name != "build":  # compile (or load) the kernels on a small model first, untimed
        small = nsrl.garnet(400, N_ACTIONS, BRANCHING, seed=1)
        nsrl.loss(small, _random_policy(400))
    t0 = _clock()
    mdp = _garnet(n)
    build = _clock() - t0
    out = {"build": build}
    if name == "eval":
        t = _clock()
        nsrl.evaluate(mdp, _random_policy(n))
        out["seconds"] = _clock() - t
    elif name == "vstar":
        t = _clock()
        nsrl.optimal_value(mdp)
        out["seconds"], out["bound"] = _clock() - t, backend(mdp).v_star_bound
    elif name == "loss":
        nsrl.optimal_value(mdp)
        t = _clock()
        out["loss"] = nsrl.loss(mdp, _random_policy(n))
        out["seconds"] = _clock() - t
    elif name == "api10":
        nsrl.optimal_value(mdp)
        t = _clock()
        hist = nsrl.run("api", nsrl.ExactGreedy(mdp), 10, rng=np.random.default_rng(0))
        out["seconds"], out["final loss"] = _clock() - t, float(hist.losses[-1])
    elif name == "lstdq":
        from nsrl.envs import FiniteMDPVectorEnv
        from nsrl.greedy import LSTDQ

        warm = nsrl.garnet(50, N_ACTIONS, BRANCHING, seed=0)  # numba compilation, untimed
        LSTDQ(FiniteMDPVectorEnv(warm, num_envs=1), budget=1000, features="onehot").greedy(
            _random_policy(50), nsrl.Nu(), np.random.default_rng(0))
        op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=10**6, features="onehot")
        t = _clock()
        op.greedy(_random_policy(n), nsrl.Nu(), np.random.default_rng(0))
        out["seconds"] = _clock() - t
    elif name == "build":
        out["seconds"] = build
    else:
        raise ValueError(name)
    return out


def task_vecenv(n: int) -> dict:
    import gymnasium as gym

    import nsrl  # noqa: F401  (registers Garnet-v0)

    warm = gym.make_vec("Garnet-v0", num_envs=8, n_states=50)  # numba compilation, untimed
    warm.reset(seed=0)
    warm.step(np.zeros(8, dtype=np.int64))
    t = _clock()
    envs = gym.make_vec("Garnet-v0", num_envs=4096, n_states=n, n_actions=N_ACTIONS,
                        branching=BRANCHING)
    made = _clock() - t
    rng = np.random.default_rng(0)
    actions = rng.integers(0, N_ACTIONS, (100, 4096))
    starts = rng.integers(0, n, (5, 4096))
    envs.reset(seed=0, options={"state": starts[0]})
    envs.step(actions[0])  # the packed transition table is built at the first step
    t = _clock()
    for k in range(100):
        if k % 20 == 0:
            envs.reset(options={"state": starts[k // 20]})
        envs.step(actions[k])
    steps = _clock() - t
    return {"seconds": made, "transitions/s": 100 * 4096 / steps}


def task_mdptoolbox(name: str, n: int, dense: bool) -> dict:
    import scipy.sparse as sp
    from hiive.mdptoolbox import mdp as tb

    garnet = _garnet(n)
    t = _clock()
    if dense:
        P = np.ascontiguousarray(garnet.P.transpose(1, 0, 2))
    else:
        csr = garnet.P_csr
        P = [sp.csr_matrix(csr[a::N_ACTIONS]) for a in range(N_ACTIONS)]
    R, skip = np.ascontiguousarray(garnet.R), n > 10**4
    if name == "eval":
        pi = tb.PolicyIteration(P, R, garnet.gamma, skip_check=skip)
        pi.policy = _random_policy(n).actions
        t = _clock()
        pi._evalPolicyMatrix()
    elif name == "pi":
        solver = tb.PolicyIteration(P, R, garnet.gamma, skip_check=skip)
        t = _clock()
        solver.run()
    elif name == "vi":
        solver = tb.ValueIteration(P, R, garnet.gamma, epsilon=0.01, skip_check=skip)
        t = _clock()
        solver.run()
    return {"seconds": _clock() - t}


def child(args) -> None:
    from threadpoolctl import threadpool_limits

    global _clock
    _clock = time.process_time if args.cpu else time.perf_counter
    with threadpool_limits(limits=1):
        if args.task == "vecenv":
            out = task_vecenv(args.n)
        elif args.task.startswith("mdptoolbox"):
            _, name, layout = args.task.split(":")
            out = task_mdptoolbox(name, args.n, layout == "dense")
        else:
            out = task_nsrl(args.task, args.n)
    out["peak GiB"] = _rss_gib()
    print(json.dumps(out))


CPU = False


def run_task(task: str, n: int, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--child", task, "--n", str(n)] + (["--cpu"] if CPU else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"failed": f"> {timeout:.0f} s"}
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return {"failed": last[:80]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fmt(r: dict, key: str = "seconds") -> str:
    if r.get("failed") == "not run":
        return "-"
    if "failed" in r:
        return f"failed ({r['failed']})"
    return f"{r[key]:.3g} s, {r['peak GiB']:.2f} GiB"


def _best(base: dict, what: str) -> float:
    """The faster of mdptoolbox's sparse and dense times for ``what`` (nan if neither ran)."""
    times = [base[what, x]["seconds"] for x in ("sparse", "dense") if "seconds" in base[what, x]]
    return min(times) if times else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--n", type=int)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--baseline", default="auto", choices=("auto", "yes", "no"))
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--tasks", default="build,eval,vstar,loss,api10,vecenv,lstdq",
                        help="which of the first table's tasks to run (others print '-')")
    parser.add_argument("--cpu", action="store_true",
                        help="report CPU seconds of the (single-threaded) work instead of wall "
                             "seconds: on a shared machine, what one idle core would take")
    args = parser.parse_args()
    global CPU
    CPU = args.cpu
    if args.child:
        args.task = args.child
        return child(args)
    sizes = [int(s) for s in args.sizes.split(",")]
    clock = "CPU seconds" if CPU else "seconds"
    print(f"## Garnet(n_S, {N_ACTIONS}, {BRANCHING}), one core; {clock}, peak RSS of the "
          f"process\n")
    print("| n_S | build | eval | v* (bound) | loss | 10 API iterations | vector env: make | "
          "steps/s (4096 envs) | LSTD-Q 10^6 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        tasks = args.tasks.split(",")
        r = {t: run_task(t, n, args.timeout) if t in tasks else {"failed": "not run"} for t in
             ("build", "eval", "vstar", "loss", "api10", "vecenv", "lstdq")}
        bound = f" ({r['vstar']['bound']:.1e})" if "bound" in r["vstar"] else ""
        env = r["vecenv"]
        rate = f"{env['transitions/s'] / 1e6:.1f} M" if "transitions/s" in env else "-"
        print(f"| {n:,} | {fmt(r['build'])} | {fmt(r['eval'])} | {fmt(r['vstar'])}{bound} | "
              f"{fmt(r['loss'])} | {fmt(r['api10'])} | {fmt(env)} | {rate} | "
              f"{fmt(r['lstdq'])} |", flush=True)
    if args.baseline == "no":
        return
    print("\n## mdptoolbox-hiive beside nsrl (same model; eval = one random policy, v* = its "
          "policy iteration, VI = its value iteration, epsilon 0.01)\n")
    print("| n_S | nsrl eval | mdptoolbox eval (sparse / dense) | nsrl v* | mdptoolbox PI "
          "(sparse / dense) | mdptoolbox VI (sparse) | speed-up eval / v* |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        ours = {t: run_task(t, n, args.timeout) for t in ("eval", "vstar")}
        base = {}
        for what in ("eval", "pi", "vi"):
            for layout in ("sparse", "dense"):
                if layout == "dense" and (n > 3000 or what == "vi"):
                    base[what, layout] = {"failed": "not run"}
                    continue
                base[what, layout] = run_task(f"mdptoolbox:{what}:{layout}", n, args.timeout)

        ups = [_best(base, w) / ours[t]["seconds"] if "seconds" in ours[t] else float("nan")
               for w, t in (("eval", "eval"), ("pi", "vstar"))]
        print(f"| {n:,} | {fmt(ours['eval'])} | {fmt(base['eval', 'sparse'])} / "
              f"{fmt(base['eval', 'dense'])} | {fmt(ours['vstar'])} | "
              f"{fmt(base['pi', 'sparse'])} / {fmt(base['pi', 'dense'])} | "
              f"{fmt(base['vi', 'sparse'])} | {ups[0]:.0f}x / {ups[1]:.0f}x |", flush=True)


if __name__ == "__main__":
    main()
