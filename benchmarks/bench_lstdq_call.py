"""One LSTD-Q greedy call at 10^5 states (issue 31): today's sparse solve beside the new one.

The ``bigger`` sweep's grid world MDP 0 at n_states = 10^5 (90 007 states), tile coding with
25 600 features (4 tilings; d = 102 400 LSTD-Q weights), 10^5 transitions of uniform walks
drawn once and replayed, so both paths solve the same system; one core (threadpoolctl).
Two targets: pi_0 = action 0 (a run's first call) and pi_1, the greedy policy of that call (a
target that mixes actions across states, as every later call's does).

* **paths**: one greedy call (statistics, solve, greedy table, advantage; the draw is timed
  apart) with SuperLU's COLAMD ordering (the default) and with MMD on A^T A (the option
  ``LSTDQ(sparse_ordering="MMD_ATA")``), and the relative difference of their
  weights. A path still running after ``--cap`` seconds is stopped (it runs in a child
  process) and reported as such; pi_1's weights are then compared with a third exact LU
  (MMD on A^T + A).
* **iterative**: the preconditioned Krylov solvers tried for pi_1's system (scipy's GMRES and
  BiCGSTAB with the block-diagonal Gram part G + lambda I as preconditioner, GMRES with an
  incomplete LU, GMRES preconditioned by pi_0's exact LU and warm-started from its
  solution), with their iteration caps, seconds and final relative residuals: what the
  choice of a direct solve rests on.
* **ridge** (``--part ridge``): GMRES(200) preconditioned by G + lambda I on pi_1's system
  with LSTDQ's default ridge for tile coding (10^-3 transitions) and with larger ones: the
  iterations it needs, against an LU of the same system.
* **multi-resolution**: the cells plus 4 offset tilings of 80 x 80 (116 251 columns, d =
  465 004), pi_1 as target, one solve with the new ordering.

* **before** (``--before REV``): the same two calls (the same replayed transitions, the
  default ordering) with the package of revision REV (exported with git archive, run in a
  child process on PYTHONPATH), beside today's, interleaved, best of 3: the issue's target is
  a call <= 1 s on one core, with the figure of before beside it.

* **later** (``--part later``): a run's successive calls with the default store (reuse), each
  drawing 10^5 new uniform-walk transitions (the store grows by 10^5 per call), the target
  the previous call's greedy policy (API's), one core (CPU seconds). Two operators draw the
  same transitions (the same seed) and run interleaved: today's, whose store keeps the
  products Phi^T diag N_a Phi and Phi^T N_a as running sums (issue 46), and the path of the
  revision before (837e417: those products formed from the stored counts at every call,
  ``FromCounts`` below). Per call: both calls' seconds, the seconds of forming the store's
  system alone (statistics and products, no solve) on each path, whether the weights are
  equal bit for bit and the share of states where the greedy policies agree, the non-zeros
  of the system and (``--fill``: one more LU per call) of its LU (COLAMD), whose fill grows
  with the stored data and is what the call's time follows.

* **krylov** (``--part krylov``): issue 46's candidate (c) for the later calls: the same run's
  third call solved by GMRES(60) (180 iterations at most, relative residual target 1e-10)
  preconditioned by an earlier call's exact LU (the first call's, cheap to apply, or the
  previous call's), cold or warm-started from the previous call's weights; against the
  direct solve: iterations, seconds, relative residual and difference, and the share of
  states where the greedy policies agree. Also the agreement of successive calls' greedy
  policies and the largest |Q|: how much a warm start can carry.

* **pardiso** (``--part pardiso``): issue 46's candidate (d), another direct solver: the same
  run's successive calls' systems (as ``--part later`` draws them), each solved by SuperLU
  (COLAMD, what LSTDQ runs) and by Intel MKL's PARDISO (``pypardiso``, METIS nested
  dissection, not a dependency of nsrl: ``pip install pypardiso``, 685 MB of MKL) with MKL's
  defaults and with minimum degree and no scaling (:data:`PARDISO_CONFIGS`), one thread
  each, CPU seconds: PARDISO's whole solve (ordering, symbolic and numeric
  factorisation, solve with iterative refinement) and its analysis alone (the ordering and
  symbolic part, which a fixed pattern could reuse), its LU's non-zeros, perturbed pivots
  and refinement steps, the relative residuals and the weights' relative difference.

Run: ``python benchmarks/bench_lstdq_call.py [--cap 120] [--skip-iterative] [--part ridge]
[--before f3f294f]`` (``--part ridge`` runs that part alone; ``--part later --calls 5
[--fill]``).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from dataclasses import fields

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from bench_lstdq import Replay  # a sibling script: benchmarks/ is on the path
from revisions import export  # a sibling script too
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.domains import side
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.greedy.feature_maps import make_feature_map
from nsrl.greedy.lstd_system import DEFAULT_ORDERING, solve_target
from nsrl.greedy.sampling import Transitions, make_sampler
from nsrl.policies import Constant, Mixture

N_STATES, TILES, BUDGET = 100_000, 25_600, 100_000


def setup():
    sweep = load_experiment("bigger").sweeps()["grid-lstdq"]
    shard = Shard(N_STATES, 4, 4, 0)
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    mdp = nsrl.gridworld(side(N_STATES), gamma=sweep.gamma, seed=rng)
    tiles = make_feature_map("tiles", TILES, 2).set_params(sparse_output=True) \
        .fit_transform(mdp.features)
    env = FiniteMDPVectorEnv(mdp, num_envs=1)
    return mdp, env, tiles


def operator(env, phi, data, ordering):
    op = nsrl.LSTDQ(env, budget=BUDGET, features=phi, reuse=False, sparse_ordering=ordering)
    op.sampler = Replay(op.sampler, data)
    return op


def call(env, phi, data, target, ordering):
    """Seconds of one greedy call on the replayed data, its weights and its greedy policy."""
    op = operator(env, phi, data, ordering)
    rng = np.random.default_rng(0)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        out = op.greedy(target, nsrl.Nu(), rng)
        seconds = time.perf_counter() - t0
        theta = op.solve(target, data, rng)  # the same weights (for the comparison)
    return seconds, theta, out.policy


def _child(queue, env, phi, data, target, ordering):
    seconds, theta, _ = call(env, phi, data, target, ordering)
    queue.put((seconds, theta))


def capped_call(env, phi, data, target, ordering, cap):
    """:func:`call` in a child process stopped after ``cap`` s: (seconds, theta) or None."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(queue, env, phi, data, target, ordering))
    child.start()
    try:
        return queue.get(timeout=cap)
    except Exception:  # queue.Empty: still running
        return None
    finally:
        if child.is_alive():
            child.terminate()
        child.join()


def stopped(result, cap):
    return f"> {cap:.0f} (stopped)" if result is None else f"{result[0]:.2f}"


def rel(x, y):
    return float(np.linalg.norm(x - y) / np.linalg.norm(y))


def paths(mdp, env, phi, data, cap):
    print(f"\n### One greedy call, {BUDGET:,} transitions, grid world at 10^5 states "
          f"({mdp.n_states:,}), tile coding {phi.shape[1]:,} features (d = "
          f"{4 * phi.shape[1]:,}), one core\n\n| target | today (COLAMD) s | new (MMD_ATA) s "
          f"| relative difference of the weights |\n|---|---:|---:|---|", flush=True)
    t_new, theta_new, pi1 = call(env, phi, data, nsrl.constant(), "MMD_ATA")
    old = capped_call(env, phi, data, nsrl.constant(), "COLAMD", cap)
    diff = "-" if old is None else f"{rel(theta_new, old[1]):.1e} (vs COLAMD)"
    print(f"| pi_0 = action 0 | {stopped(old, cap)} "
          f"| {t_new:.2f} | {diff} |", flush=True)
    t_new, theta_new, _ = call(env, phi, data, pi1, "MMD_ATA")
    old = capped_call(env, phi, data, pi1, "COLAMD", cap)
    if old is None:
        t_ref, theta_ref, _ = call(env, phi, data, pi1, "MMD_AT_PLUS_A")
        diff = f"{rel(theta_new, theta_ref):.1e} (vs MMD_AT_PLUS_A's LU, {t_ref:.0f} s)"
    else:
        diff = f"{rel(theta_new, old[1]):.1e} (vs COLAMD)"
    print(f"| pi_1 = greedy of the first call | "
          f"{stopped(old, cap)} | {t_new:.2f} | "
          f"{diff} |", flush=True)
    more = sampler_of(env).transitions(BUDGET, np.random.default_rng(2))
    both = Transitions(*(np.concatenate([getattr(data, f.name), getattr(more, f.name)])
                         for f in fields(Transitions)))
    t_new, theta_new, _ = call(env, phi, both, pi1, "MMD_ATA")
    old = capped_call(env, phi, both, pi1, "COLAMD", cap)
    diff = "-" if old is None else f"{rel(theta_new, old[1]):.1e} (vs COLAMD)"
    print(f"| pi_1, from {2 * BUDGET:,} transitions (a run's second call with reuse) | "
          f"{stopped(old, cap)} | {t_new:.2f} | {diff} |", flush=True)
    return pi1


def sampler_of(env):
    return make_sampler(env, None)


def system_of(env, phi, data, target):
    op = operator(env, phi, data, "MMD_ATA")
    rng = np.random.default_rng(0)
    system = op._system(data, rng)
    lam = op.ridge * system.scale
    F = (system.gram + lam * sp.identity(system.d, format="csr")).tocsr()
    return op, system, lam, F, (F - op.gamma * system.cross(target)).tocsc()


def iterative(env, phi, data, pi1):
    _, system, lam, F, A = system_of(env, phi, data, pi1)
    b, d, p = system.b, system.d, phi.shape[1]
    x_ref = spla.splu(A, permc_spec="MMD_ATA").solve(b)
    print(f"\n### Iterative solvers on pi_1's system (d = {d:,}), relative residual "
          f"target 1e-12\n\n| solver | preconditioner setup s | iterations | solve s | "
          f"relative residual | relative difference to the LU |\n|---|---:|---:|---:|---:|---:|",
          flush=True)
    t0 = time.perf_counter()
    blocks = [spla.splu(F[a * p:(a + 1) * p, a * p:(a + 1) * p].tocsc()) for a in range(4)]
    gram_setup = time.perf_counter() - t0
    gram = spla.LinearOperator((d, d), lambda y: np.concatenate(
        [f.solve(y[a * p:(a + 1) * p]) for a, f in enumerate(blocks)]))
    candidates = [("GMRES(100), 100 iterations", "G + lambda I (exact, per action)", gram_setup,
                   gram, None, dict(restart=100, maxiter=1)),
                  ("BiCGSTAB, 100 iterations", "G + lambda I (exact, per action)", gram_setup,
                   gram, None, dict(maxiter=100))]
    t0 = time.perf_counter()
    ilu = spla.spilu(A, drop_tol=1e-4, fill_factor=5)
    candidates.append(("GMRES(100), 300 iterations", "ILU (drop 1e-4, fill 5, COLAMD)",
                       time.perf_counter() - t0, spla.LinearOperator((d, d), ilu.solve), None,
                       dict(restart=100, maxiter=3)))
    _, _, _, _, A0 = system_of(env, phi, data, nsrl.constant())
    t0 = time.perf_counter()
    lu0 = spla.splu(A0, permc_spec="MMD_ATA")
    x0 = lu0.solve(b)
    candidates.append(("GMRES(100), 100 iterations, warm start from pi_0's weights",
                       "pi_0's exact LU (the previous call's system)", time.perf_counter() - t0,
                       spla.LinearOperator((d, d), lu0.solve), x0, dict(restart=100, maxiter=1)))
    for name, pre, setup_s, M, start, kw in candidates:
        count = [0]

        def tick(*_, count=count):
            count[0] += 1
        solver = spla.gmres if name.startswith("GMRES") else spla.bicgstab
        extra = {"callback_type": "pr_norm"} if solver is spla.gmres else {}
        t0 = time.perf_counter()
        x, _ = solver(A, b, x0=start, rtol=1e-12, atol=0.0, M=M, callback=tick, **kw, **extra)
        seconds = time.perf_counter() - t0
        print(f"| {name} | {pre}: {setup_s:.2f} | {count[0]} | {seconds:.1f} | "
              f"{np.linalg.norm(b - A @ x) / np.linalg.norm(b):.1e} | {rel(x, x_ref):.1e} |",
              flush=True)


def ridges(env, phi, data, pi1, values=(1e-3, 1.0, 100.0)):
    print("\n### GMRES(200) with the G + lambda I preconditioner on pi_1's system against the "
          "ridge (in transitions; LSTD-Q's default for tile coding: 1e-3), relative residual "
          "target 1e-10\n\n| ridge | iterations | seconds | relative residual | relative "
          "difference to the LU (COLAMD) |\n|---:|---:|---:|---:|---:|", flush=True)
    for ridge in values:
        op = nsrl.LSTDQ(env, budget=BUDGET, features=phi, reuse=False, ridge=ridge)
        system = op._system(data, np.random.default_rng(0))
        d, p = system.d, phi.shape[1]
        F = (system.gram + ridge * system.scale * sp.identity(d, format="csr")).tocsr()
        A = (F - op.gamma * system.cross(pi1)).tocsc()
        with threadpool_limits(1):
            t0 = time.perf_counter()
            blocks = [spla.splu(F[a * p:(a + 1) * p, a * p:(a + 1) * p].tocsc())
                      for a in range(4)]
            M = spla.LinearOperator((d, d), lambda y, blocks=blocks, p=p: np.concatenate(
                [f.solve(y[a * p:(a + 1) * p]) for a, f in enumerate(blocks)]))
            count = [0]

            def tick(*_, count=count):
                count[0] += 1
            x, _ = spla.gmres(A, system.b, rtol=1e-10, atol=0.0, M=M, restart=200, maxiter=1,
                              callback=tick, callback_type="pr_norm")
            seconds = time.perf_counter() - t0
        x_ref = spla.splu(A, permc_spec="COLAMD").solve(system.b)
        print(f"| {ridge:g} | {count[0]} | {seconds:.1f} | "
              f"{np.linalg.norm(system.b - A @ x) / np.linalg.norm(system.b):.1e} | "
              f"{rel(x, x_ref):.1e} |", flush=True)


def multires(mdp, env, data, pi1):
    tilings = make_feature_map("tiles", 4 * 81 * 81, 2).set_params(
        sparse_output=True, n_tiles=80).fit_transform(mdp.features)
    phi = sp.hstack([sp.identity(mdp.n_states, format="csr"), tilings], format="csr")
    op, system, lam, _, A = system_of(env, phi, data, pi1)
    uniform = Mixture([(0.25, Constant(a)) for a in range(4)])
    with threadpool_limits(1):
        t0 = time.perf_counter()
        theta = solve_target(system, pi1, op.gamma, lam, uniform, op.sampler.state_reward,
                             "MMD_ATA")
        seconds = time.perf_counter() - t0
    res = np.linalg.norm(system.b - A @ theta) / np.linalg.norm(system.b)
    print(f"\n### Multi-resolution map (cells + 4 tilings of 80 x 80, {phi.shape[1]:,} columns, "
          f"d = {system.d:,}), pi_1, the same {BUDGET:,} transitions\n\none LU solve "
          f"(MMD_ATA): {seconds:.1f} s, relative residual {res:.1e} (COLAMD on this "
          f"system not measured here)", flush=True)


_BEFORE_CHILD = """
import sys, time
import numpy as np
from threadpoolctl import threadpool_limits
import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.experiments import load_experiment
from nsrl.domains import side
from nsrl.experiments.shards import Shard
from nsrl.greedy.feature_maps import make_feature_map
from nsrl.greedy.sampling import Transitions

saved = np.load(sys.argv[1])
sweep = load_experiment("bigger").sweeps()["grid-lstdq"]
shard = Shard({n}, 4, 4, 0)
rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
mdp = nsrl.gridworld(side({n}), gamma=sweep.gamma, seed=rng)
phi = make_feature_map("tiles", {tiles}, 2).set_params(sparse_output=True).fit_transform(
    mdp.features)
env = FiniteMDPVectorEnv(mdp, num_envs=1)
data = Transitions(*(saved[k] for k in saved.files if k != "pi1"))
target = nsrl.constant() if sys.argv[2] == "pi0" else nsrl.Deterministic(saved["pi1"])
op = nsrl.LSTDQ(env, budget={budget}, features=phi, reuse=False)
op.sampler.transitions = lambda n, rng, behaviour=None, explore=1.0: data
with threadpool_limits(1):
    t0 = time.perf_counter()
    out = op.greedy(target, nsrl.Nu(), np.random.default_rng(0))
    print(time.perf_counter() - t0)
np.save(sys.argv[3], out.policy.actions)
"""


def before(rev, env, phi, data, pi1):
    """Today's two calls beside revision ``rev``'s, interleaved, best of 3 (seconds)."""
    import subprocess
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        old = export(rev, tmp)
        saved = Path(tmp) / "data.npz"
        np.savez(saved, pi1=pi1.actions, **{f.name: getattr(data, f.name)
                                             for f in fields(Transitions)})
        script = _BEFORE_CHILD.format(n=N_STATES, tiles=TILES, budget=BUDGET)
        print(f"\n### The same call at revision {rev} (before) and today, interleaved, best of 3"
              f"\n\n| target | before ({rev}) s | today s | same greedy policy |"
              f"\n|---|---:|---:|---|", flush=True)
        for name, target in (("pi0", nsrl.constant()), ("pi1", pi1)):
            olds, news = [], []
            for _ in range(3):
                out = Path(tmp) / "actions.npy"
                run = subprocess.run([sys.executable, "-c", script, str(saved), name, str(out)],
                                     env={**os.environ, "PYTHONPATH": str(old)}, check=True,
                                     capture_output=True, text=True, cwd=tmp)
                olds.append(float(run.stdout.split()[-1]))
                seconds, _, policy = call(env, phi, data, target, DEFAULT_ORDERING)
                news.append(seconds)
            same = bool(np.array_equal(np.load(out), policy.actions))
            print(f"| {name} | {min(olds):.2f} | {min(news):.2f} | {same} |", flush=True)


class FromCounts(nsrl.LSTDQ):
    """LSTD-Q as at revision 837e417: the store's system formed from its counts at every call."""

    def _sums(self):
        return None


def later(env, phi, calls, fill=False):
    """Successive greedy calls with the store, as in a run (see the module docstring)."""
    ops = {"before": FromCounts(env, budget=BUDGET, features=phi),
           "today": nsrl.LSTDQ(env, budget=BUDGET, features=phi)}
    rngs = {name: np.random.default_rng(3) for name in ops}
    targets = dict.fromkeys(ops, nsrl.constant())
    print(f"\n### A run's successive calls with the store, {BUDGET:,} new transitions per call, "
          f"one core, CPU seconds\n\n| call | stored | before (837e417) s | today s | "
          f"system alone: before s | today s | weights equal | greedy policies agree | "
          f"system non-zeros | LU non-zeros (COLAMD) |\n|---:|---:|---:|---:|---:|---:|---|"
          f"---:|---:|---:|", flush=True)
    for k in range(calls):
        seconds, build, out = {}, {}, {}
        with threadpool_limits(1):
            for name, op in ops.items():
                t0 = time.process_time()
                out[name] = op.greedy(targets[name], nsrl.Nu(), rngs[name])
                seconds[name] = time.process_time() - t0
                op._store_system = None  # formed afresh: the statistics' share of the call
                t0 = time.process_time()
                system = op._system(None, rngs[name])
                build[name] = time.process_time() - t0
            q = {name: o.policy.q for name, o in out.items()}
            same = bool(np.array_equal(q["before"], q["today"]))
            agree = float(np.mean(out["before"].policy.actions == out["today"].policy.actions))
            op = ops["today"]
            F = system.gram + op.ridge * system.scale * sp.identity(system.d, format="csr")
            A = (F - op.gamma * system.cross(targets["today"])).tocsc()
            lu_nnz = "-"
            if fill:
                lu = spla.splu(A, permc_spec=DEFAULT_ORDERING)
                lu_nnz = f"{lu.L.nnz + lu.U.nnz:,}"
                del lu
        print(f"| {k + 1} | {len(op.store):,} | {seconds['before']:.2f} | {seconds['today']:.2f}"
              f" | {build['before']:.2f} | {build['today']:.2f} | {same} | {agree:.4f} | "
              f"{A.nnz:,} | {lu_nnz} |", flush=True)
        targets = {name: o.policy for name, o in out.items()}


def krylov(env, phi, calls=3):
    """GMRES on call ``calls``'s system, preconditioned by earlier calls' LUs (docstring)."""
    op = nsrl.LSTDQ(env, budget=BUDGET, features=phi)
    rng = np.random.default_rng(3)
    target, lus, thetas, actions, peak = nsrl.constant(), [], [], [], []
    with threadpool_limits(1):
        for _ in range(calls):
            out = op.greedy(target, nsrl.Nu(), rng)
            system = op._system(None, rng)
            F = system.gram + op.ridge * system.scale * sp.identity(system.d, format="csr")
            A, b = (F - op.gamma * system.cross(target)).tocsc(), system.b
            t0 = time.process_time()
            lus.append(spla.splu(A, permc_spec=DEFAULT_ORDERING))
            thetas.append(lus[-1].solve(b))
            lu_s = time.process_time() - t0
            actions.append(out.policy.actions)
            peak.append(float(np.abs(out.policy.q).max()))
            target = out.policy
    print(f"\n### Issue 46 (c): call {calls}'s system ({len(op.store):,} stored) by GMRES(60), "
          f"at most 180 iterations, relative residual target 1e-10, one core\n\ndirect "
          f"solve (COLAMD LU): {lu_s:.2f} s; successive calls' greedy policies agree on "
          + ", ".join(f"{np.mean(actions[k] == actions[k + 1]):.1%}" for k in range(calls - 1))
          + " of the states; largest |Q| per call: " + ", ".join(f"{q:.3g}" for q in peak)
          + "\n\n| preconditioner | start | iterations | seconds | relative residual | "
          "relative difference to the LU | greedy policy agrees with the LU's |\n"
          "|---|---|---:|---:|---:|---:|---:|", flush=True)
    x_ref = thetas[-1]
    q_ref = (phi @ x_ref.reshape(op.n_actions, -1).T).argmax(axis=1)
    runs = [("the first call's LU", lus[0], None, "cold"),
            ("the previous call's LU", lus[-2], None, "cold"),
            ("the previous call's LU", lus[-2], thetas[-2], "the previous weights")]
    for name, lu, start, how in runs:
        count = [0]

        def tick(*_, count=count):
            count[0] += 1
        M = spla.LinearOperator(A.shape, lu.solve)
        with threadpool_limits(1):
            t0 = time.process_time()
            x, _ = spla.gmres(A, b, x0=start, M=M, rtol=1e-10, atol=0.0, restart=60, maxiter=3,
                              callback=tick, callback_type="pr_norm")
            seconds = time.process_time() - t0
        agree = np.mean((phi @ x.reshape(op.n_actions, -1).T).argmax(axis=1) == q_ref)
        print(f"| {name} | {how} | {count[0]} | {seconds:.1f} | "
              f"{np.linalg.norm(b - A @ x) / np.linalg.norm(b):.1e} | {rel(x, x_ref):.1e} | "
              f"{agree:.1%} |", flush=True)


# PARDISO's iparm(1): 0 takes MKL's defaults for a real nonsymmetric matrix (METIS ordering,
# scaling and weighted matching, pivots perturbed at 1e-13); 1 with every other iparm 0
# (pypardiso's zeros) orders by minimum degree, without scaling or matching.
PARDISO_CONFIGS = {"MKL defaults": 0, "minimum degree, no scaling": 1}


def pardiso(env, phi, calls):
    """SuperLU beside PARDISO on a run's successive calls' systems (see the module docstring)."""
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import pypardiso  # not a dependency: pip install pypardiso

    op = nsrl.LSTDQ(env, budget=BUDGET, features=phi)
    rng = np.random.default_rng(3)
    target = nsrl.constant()
    print(f"\n### Issue 46 (d): the successive calls' systems by SuperLU and by PARDISO, "
          f"{BUDGET:,} new transitions per call, one thread, CPU seconds\n\n| call | stored | "
          f"system non-zeros | SuperLU (COLAMD) s | PARDISO's settings | PARDISO s | "
          f"of which its analysis s | "
          f"PARDISO's LU non-zeros | perturbed pivots | refinement steps | relative residual: "
          f"SuperLU | PARDISO | weights' relative difference |\n|---:|---:|---:|---:|---|---:|---:|"
          f"---:|---:|---:|---:|---:|---:|", flush=True)
    for k in range(calls):
        with threadpool_limits(1):
            out = op.greedy(target, nsrl.Nu(), rng)
            system = op._system(None, rng)
            F = system.gram + op.ridge * system.scale * sp.identity(system.d, format="csr")
            A, b = (F - op.gamma * system.cross(target)).tocsr(), system.b
            A.sort_indices()
            t0 = time.process_time()
            x_lu = spla.spsolve(A.tocsc(), b, permc_spec=DEFAULT_ORDERING)
            t_lu = time.process_time() - t0
            runs = {}
            for config, iparm1 in PARDISO_CONFIGS.items():
                probe = pypardiso.PyPardisoSolver()  # the analysis alone (phase 11)
                probe.set_iparm(1, iparm1)
                t0 = time.process_time()
                probe.set_phase(11)
                probe._call_pardiso(A, np.zeros((len(b), 1)))
                t_an = time.process_time() - t0
                probe.free_memory(everything=True)
                solver = pypardiso.PyPardisoSolver()
                solver.set_iparm(1, iparm1)
                solver.set_iparm(18, -1)  # report the factors' non-zeros
                t0 = time.process_time()
                x_p = solver.solve(A, b)  # phase 13: analysis, factorisation, solve, refinement
                runs[config] = (x_p, time.process_time() - t0, t_an,
                                *(int(solver.iparm[i]) for i in (17, 13, 6)))
                solver.free_memory(everything=True)

        def res(x, A=A, b=b):
            return np.linalg.norm(b - A @ x) / np.linalg.norm(b)
        for config, (x_p, t_p, t_an, lu_nnz, perturbed, steps) in runs.items():
            print(f"| {k + 1} | {len(op.store):,} | {A.nnz:,} | {t_lu:.2f} | {config} | "
                  f"{t_p:.2f} | {t_an:.2f} | {lu_nnz:,} | {perturbed} | {steps} | "
                  f"{res(x_lu):.1e} | {res(x_p):.1e} | {rel(x_p, x_lu):.1e} |", flush=True)
        target = out.policy


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=120.0,
                        help="seconds after which today's path is stopped")
    parser.add_argument("--skip-iterative", action="store_true")
    parser.add_argument("--part", choices=["all", "ridge", "before", "later", "krylov", "pardiso"],
                        default="all")
    parser.add_argument("--calls", type=int, default=5, help="calls of --part later")
    parser.add_argument("--fill", action="store_true",
                        help="--part later: also the LU's non-zeros (one more LU per call)")
    parser.add_argument("--before", metavar="REV", default=None,
                        help="also time the calls at revision REV (e.g. f3f294f)")
    args = parser.parse_args()
    mdp, env, tiles = setup()
    sampler = make_sampler(env, None)
    rng = np.random.default_rng(1)
    sampler.transitions(1000, rng)  # warm-up (compilation)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        data = sampler.transitions(BUDGET, rng)
        draw = time.perf_counter() - t0
    print(f"drawing {BUDGET:,} transitions (uniform walks, not in the calls below): "
          f"{draw:.2f} s")
    if args.part == "later":
        later(env, tiles, args.calls, args.fill)
        return
    if args.part == "krylov":
        krylov(env, tiles)
        return
    if args.part == "pardiso":
        pardiso(env, tiles, args.calls)
        return
    if args.part == "ridge":
        _, _, pi1 = call(env, tiles, data, nsrl.constant(), "COLAMD")
        ridges(env, tiles, data, pi1)
        return
    if args.part == "before":
        _, _, pi1 = call(env, tiles, data, nsrl.constant(), DEFAULT_ORDERING)
        before(args.before or "f3f294f", env, tiles, data, pi1)
        return
    pi1 = paths(mdp, env, tiles, data, args.cap)
    if args.before:
        before(args.before, env, tiles, data, pi1)
    if not args.skip_iterative:
        iterative(env, tiles, data, pi1)
        ridges(env, tiles, data, pi1)
    multires(mdp, env, data, pi1)


if __name__ == "__main__":
    main()
