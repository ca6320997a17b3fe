"""The cost-sensitive fit of rollouts + CSC: today's LogisticRegression beside SoftmaxCSC.

On the fits of a ``bigger-powered`` ``grid-rollout-1e4`` shard (MDP 0, API and PSDP, captured
by benchmarks/capture_csc_problems.py into benchmarks/results/csc_problems_grid-rollout-1e4.npz;
the features are the MDP's Phi, 100 RBFs, rebuilt here), one BLAS thread, CPU seconds per fit:

* **today**: ``LogisticRegression(max_iter=1000)`` (lbfgs) on the weighted rows (one per
  state and label with a positive weight), as ``RolloutCSC`` fitted it before SoftmaxCSC;
* **newton**: ``SoftmaxCSC(warm_start=False)``, one row per state with soft labels, Newton;
* **warm**: the same, warm-started from its fit of the scheme's previous captured problem
  (what ``RolloutCSC`` does with ``warm_start=True``);
* **lbfgs**: ``SoftmaxCSC(solver="lbfgs")`` (the same objective by L-BFGS, from zero);
* **newton-cholesky**: scikit-learn's ``LogisticRegression(solver="newton-cholesky")`` on the
  weighted rows (reference);

with the objective each reaches (scikit-learn's L, the same function for all, minus the
lowest of them) and the share of the 10^4 states where the policy equals today's.

``--threshold`` times SoftmaxCSC's three solvers (Newton, trust-ncg, L-BFGS) and today's fit on
one captured problem's label weights with RBF grids of growing size on the grid world's
coordinates and with one-hot states (sparse): where :data:`NEWTON_MAX` and the choice beyond
it come from.

    python benchmarks/bench_csc_fit.py [--every 1] [--threshold]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments import load_experiment
from nsrl.experiments.domains import side
from nsrl.experiments.presets import Shard
from nsrl.experiments.runner import build_mdp
from nsrl.greedy.csc import NEWTON_MAX, SoftmaxCSC
from nsrl.greedy.csc_solvers import Problem
from nsrl.greedy.feature_maps import RBFGrid
from nsrl.greedy.rollout import label_weights

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "benchmarks" / "results" / "csc_problems_grid-rollout-1e4.npz"
METHODS = ("today", "newton", "warm", "lbfgs", "newton-cholesky")


# method -> fit(x, label weights, x of the weighted rows, their labels, their weights, the
# scheme's previous warm fit)
FITS = {
    "today": lambda x, w, xr, y, sw, init: LogisticRegression(max_iter=1000).fit(
        xr, y, sample_weight=sw),
    "newton": lambda x, w, xr, y, sw, init: SoftmaxCSC(warm_start=False).fit_label_weights(x, w),
    "warm": lambda x, w, xr, y, sw, init: SoftmaxCSC().fit_label_weights(x, w, init=init),
    "lbfgs": lambda x, w, xr, y, sw, init: SoftmaxCSC(
        solver="lbfgs", warm_start=False).fit_label_weights(x, w),
    "newton-cholesky": lambda x, w, xr, y, sw, init: LogisticRegression(
        solver="newton-cholesky", max_iter=1000).fit(xr, y, sample_weight=sw),
}


def timed(fit, *args):
    """(fit(*args), its CPU seconds), one BLAS thread, convergence warnings silenced."""
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.process_time()
        out = fit(*args)
        return out, time.process_time() - t0


def objective(prob: Problem, clf) -> float:
    """scikit-learn's L at the classifier's coefficients (the same function for every fit)."""
    return prob.value(np.hstack([clf.coef_, clf.intercept_[:, None]])) / prob.total


def problems(every: int):
    data = np.load(PROBLEMS)
    sweep = load_experiment("bigger-powered").sweeps()[str(data["variant"])]
    shard = Shard(sweep.n_states[0], sweep.n_actions[0], sweep.branching[0], int(data["mdp"]))
    mdp = build_mdp(sweep, shard)
    # the coordinates of the same grid world (the RBF features' input, for --threshold)
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    coords = np.asarray(nsrl.gridworld(side(shard.n_states), gamma=sweep.gamma, seed=rng).features)
    keys = sorted(k[:-2] for k in data.files if k.endswith("_q"))
    phi = np.asarray(mdp.features)
    chosen = [k for k in keys if int(k.split("_")[1]) % every == 0]
    return coords, phi, [(k, data[k + "_states"], label_weights(data[k + "_q"],
                                                              data[k + "_counts"].astype(float)))
                      for k in chosen]


def captured(every: int) -> list[str]:
    _, phi, fits = problems(every)
    lines = [f"### Per fit, {len(fits)} fits of grid-rollout-1e4 (MDP 0), CPU s, one BLAS "
             f"thread; objective: scikit-learn's L minus the lowest reached\n",
             "| fit | states | rows | " + " | ".join(f"{m} s" for m in METHODS)
             + " | today's L - min | new L - min | newton-cholesky L - min | steps (new, warm)"
             " | policy = today's | new = newton-cholesky's |",
             "|---|---:|---:|" + "---:|" * len(METHODS) + "---:|---:|---:|---|---:|---:|"]
    totals = dict.fromkeys(METHODS, 0.0)
    per_scheme: dict[str, dict[str, float]] = {}
    previous: dict[str, SoftmaxCSC] = {}
    worst = -np.inf
    for key, states, weights in fits:
        scheme = key.split("_")[0]
        x = phi[states]
        rows, labels = np.nonzero(weights > 0)
        xr, sw = x[rows], weights[rows, labels]
        fitted, secs = {}, {}
        for m in METHODS:
            fitted[m], secs[m] = timed(FITS[m], x, weights, xr, labels, sw, previous.get(scheme))
        previous[scheme] = fitted["warm"]
        prob = Problem(x, weights[:, fitted["newton"].classes_], 1.0)
        values = {m: objective(prob, fitted[m]) for m in METHODS}
        low = min(values.values())
        worst = max(worst, values["newton"] - values["today"])
        same = np.mean(fitted["newton"].predict(phi) == fitted["today"].predict(phi))
        ref = np.mean(fitted["newton"].predict(phi) == fitted["newton-cholesky"].predict(phi))
        for m in METHODS:
            totals[m] += secs[m]
            per_scheme.setdefault(scheme, dict.fromkeys(METHODS, 0.0))[m] += secs[m]
        lines.append(
            f"| {key} | {len(states):,} | {len(rows):,} | "
            + " | ".join(f"{secs[m]:.3f}" for m in METHODS)
            + f" | {values['today'] - low:.1e} | {values['newton'] - low:.1e} | "
              f"{values['newton-cholesky'] - low:.1e} | {fitted['newton'].n_iter_}, "
              f"{fitted['warm'].n_iter_} | {same:.4f} | {ref:.4f} |")
        print(lines[-1], flush=True)
    lines += ["", "| scheme | " + " | ".join(f"{m} s" for m in METHODS)
              + " | today / newton | today / warm | newton / warm |",
              "|---|" + "---:|" * (len(METHODS) + 3)]
    for scheme, t in [*per_scheme.items(), ("all", totals)]:
        lines.append(f"| {scheme} | " + " | ".join(f"{t[m]:.2f}" for m in METHODS)
                     + f" | {t['today'] / t['newton']:.2f}x | {t['today'] / t['warm']:.2f}x | "
                       f"{t['newton'] / t['warm']:.2f}x |")
    lines.append(f"\nnew L - today's L, largest over the fits: {worst:.1e} (<= 0: the new fit "
                 f"reaches an equal or lower objective on every fit)")
    return lines


def threshold() -> list[str]:
    coords, phi, fits = problems(1)
    key, states, weights = next(f for f in fits if f[0].startswith("API")
                                and np.count_nonzero(f[2]) > 20_000)  # a full problem
    coords = coords[states]
    rows, labels = np.nonzero(weights > 0)
    lines = [f"\n### The solvers by size (SoftmaxCSC, {key}'s label weights, {len(states):,} "
             f"states; RBF grids of the coordinates, and one-hot states as CSR), CPU s; "
             f"NEWTON_MAX = {NEWTON_MAX}\n",
             "| features | K(d + 1) | newton s | trust-ncg s | lbfgs s | today s | L - newton's "
             "(trust-ncg, lbfgs, today) |", "|---|---:|---:|---:|---:|---:|---|"]
    sizes = [(f"RBF {c} x {c}", RBFGrid(n_centres=c).fit_transform(coords))
             for c in (10, 14, 20, 25, 30)]
    sizes.append((f"one-hot, {len(phi):,} columns", sp.identity(len(phi), format="csr")[states]))
    for name, x in sizes:
        size = 4 * (x.shape[1] + 1)
        fitted, secs = {}, {}
        for solver in ("newton", "trust-ncg", "lbfgs"):
            if solver == "newton" and size > 10_000:  # a Hessian of 10^9 entries and more
                continue
            fitted[solver], secs[solver] = timed(
                SoftmaxCSC(solver=solver, warm_start=False).fit_label_weights, x, weights)
        fitted["today"], secs["today"] = timed(FITS["today"], x, weights, x[rows], labels,
                                               weights[rows, labels], None)
        prob = Problem(x, weights[:, fitted["lbfgs"].classes_], 1.0)
        best = objective(prob, fitted.get("newton", fitted["trust-ncg"]))
        gaps = ", ".join(f"{objective(prob, fitted[m]) - best:.1e}"
                         for m in ("trust-ncg", "lbfgs", "today"))
        cells = " | ".join(f"{secs[m]:.2f}" if m in secs else "-"
                           for m in ("newton", "trust-ncg", "lbfgs", "today"))
        lines.append(f"| {name} | {size:,} | {cells} | {gaps} |")
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="every n-th iteration's fits")
    parser.add_argument("--threshold", action="store_true", help="also the Newton threshold")
    parser.add_argument("--out", default="bench_csc_fit.txt")
    args = parser.parse_args()
    head = [f"# python benchmarks/bench_csc_fit.py --every {args.every}"
            + (" --threshold" if args.threshold else ""), ""]
    lines = head + captured(args.every) + (threshold() if args.threshold else [])
    text = "\n".join(lines) + "\n"
    print(text)
    (ROOT / "benchmarks" / "results" / args.out).write_text(text)


if __name__ == "__main__":
    main()
