"""One-call greedy error against the budget, for every greedy operator.

For a fixed target policy the greedy error of one call is ``nu (T v - T_{pi'} v)``, v the
target's value, pi' the returned policy (``nsrl.schemes.base.greedy_error``, measured with the
model, rho = nu uniform). Problems: Garnet(50, 4, 2) and Garnet(100, 4, 2), gamma = 0.99,
mdp seeds 0, 1, 2. Targets: pi_0 (action 0 everywhere) and pi_mid, the policy exact API
reaches after 2 iterations from pi_0 (a mid-run target). Operators, built as ``nsrl compare``
builds them (``nsrl.make_operator``, the operator registry), one-hot features unless said:

* rollout-csc defaults: m = 1 rollouts ended by the LSTD critic, CRN, stratified states,
  LogisticRegression; measured after one warm-up call on the same target and budget (the
  critic's data: the steady state of a scheme whose target stops changing). The first call
  of a run has no critic: it is the "H=30, no critic" row;
* rollout-csc, geometric horizon, no critic (the unbiased option; CRN and strata on);
* rollout-reg defaults (Ridge per action, the same critic and warm-up);
* LSTD-Q one-hot and LSTD-Q Phi features (the MDP's p = S / 10 features): one call from an
  empty store (its default ridge; reuse cannot help a single call);
* the paper's projected operator (noise 0.1, Phi features), which draws no sample: a
  horizontal line.

Transitions per call: 1e3 .. 1e6 by half decades (``--repeats`` 3 run seeds per mdp seed) and
1e7 (one run per mdp seed). The slope is the least-squares slope of log10(mean error)
against log10(transitions) over 1e4 .. 1e6 (rate ~ n^slope; -0.5 is the Monte-Carlo rate of
a mean, steeper slopes mean the error has started to vanish: argmax errors disappear once
the estimates' noise is below every action gap).

    python benchmarks/study_greedy_error.py            # 2-3 minutes on one core
    python benchmarks/study_greedy_error.py --quick    # a smaller grid

Writes benchmarks/results/study_greedy_error.{csv,txt} and docs/sampling_greedy_error.png.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.schemes.base import Step, greedy_error

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results"
FIGURE = ROOT / "docs" / "sampling_greedy_error.png"
# name -> (registered operator name, its options, warm-up calls before the measured one)
CONFIGS = {
    "rollout-csc defaults (m=1, LSTD critic)": ("rollout-csc", {"features": "onehot"}, 1),
    "rollout-csc, H=30, no critic (a run's first call)":
        ("rollout-csc", {"features": "onehot", "critic": "none"}, 0),
    "rollout-csc, geometric, no critic":
        ("rollout-csc", {"features": "onehot", "critic": "none", "horizon": "geometric"}, 0),
    "rollout-reg defaults (m=1, LSTD critic)": ("rollout-reg", {"features": "onehot"}, 1),
    "LSTD-Q one-hot": ("lstdq", {"features": "onehot"}, 0),
    "LSTD-Q Phi": ("lstdq", {}, 0),
}
PROJECTED = "projected (noise 0.1, Phi; 0 samples)"
FLOOR = 1e-5  # a mean error of exactly 0 is drawn here on the log axis


def targets(mdp) -> dict:
    """pi_0 and pi_mid (exact API after 2 iterations from pi_0)."""
    h = nsrl.run(nsrl.API(), nsrl.ExactGreedy(mdp), 2, rng=np.random.default_rng(0),
                 keep_outputs=True)
    return {"pi_0": nsrl.constant(0), "pi_mid": h.outputs[-1]}


def measure(sizes, seeds, budgets, big, repeats) -> pd.DataFrame:
    rows = []
    for n_states in sizes:
        for seed in seeds:
            mdp = nsrl.garnet(n_states, 4, 2, seed=seed)
            for tname, target in targets(mdp).items():
                step = dict(target=target, rho=nsrl.Nu())
                base = (f"Garnet({n_states},4,2)", seed, tname, nsrl.loss(mdp, target))
                projected = nsrl.ProjectedGreedy(mdp, noise=0.1)
                for r in range(repeats):
                    g = projected.greedy(target, nsrl.Nu(), np.random.default_rng(r))
                    rows.append((*base, PROJECTED, 0, r,
                                 greedy_error(mdp, Step(greedy=g, **step)), 0, 0.0))
                for name, (op_name, kwargs, warm) in CONFIGS.items():
                    for budget in [*budgets, *big]:
                        for r in range(repeats if budget not in big else 1):
                            rng = np.random.default_rng(1000 * seed + r)
                            t0 = time.perf_counter()
                            op = nsrl.make_operator(op_name, mdp, budget=budget, **kwargs)
                            for _ in range(warm):
                                op.greedy(target, nsrl.Nu(), rng)
                            t1 = time.perf_counter()
                            g = op.greedy(target, nsrl.Nu(), rng)
                            seconds = time.perf_counter() - t1
                            rows.append((*base, name, budget, r,
                                         greedy_error(mdp, Step(greedy=g, **step)), g.samples,
                                         seconds))
                            del op, g
                            if t1 - t0 > 60:  # a guard: the study should stay cheap
                                print(f"  slow warm-up: {name} at {budget}", flush=True)
                print(f"  Garnet({n_states}) seed {seed} {tname} done", flush=True)
    return pd.DataFrame(rows, columns=["problem", "mdp", "target", "target_loss", "operator",
                                       "budget", "run", "error", "samples", "seconds"])


def slope(g: pd.DataFrame, low=1e4, high=1e6) -> float:
    """Least-squares slope of log10(mean error) on log10(budget) over [low, high]."""
    m = g[(g.budget >= low) & (g.budget <= high)].groupby("budget")["error"].mean()
    m = m[m > 0]
    if len(m) < 3:
        return float("nan")
    return float(np.polyfit(np.log10(m.index.to_numpy(float)), np.log10(m.to_numpy()), 1)[0])


def tables(df: pd.DataFrame) -> str:
    lines = []
    budgets = sorted(b for b in df.budget.unique() if b > 0)
    for (problem, target), part in df.groupby(["problem", "target"], sort=False):
        losses = part.groupby("mdp").target_loss.first()
        lines += [f"\n### {problem}, target {target} (its loss {losses.mean():.2f}, mean of "
                  f"{len(losses)} MDPs): "
                  f"mean nu(T v - T_pi' v)\n",
                  "| operator | " + " | ".join(f"{b:.0e}" for b in budgets)
                  + " | slope 1e4-1e6 | s/call @1e6 |",
                  "|---|" + "---:|" * (len(budgets) + 2)]
        proj = part[part.operator == PROJECTED].error.mean()
        for name in CONFIGS:
            g = part[part.operator == name]
            means = g.groupby("budget").error.mean()
            cells = [f"{means[b]:.2g}" if b in means.index else "" for b in budgets]
            sec = g[g.budget == 1e6].seconds.mean()
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {slope(g):.2f} | "
                         f"{sec:.2f} |")
        lines.append(f"| {PROJECTED} | " + " | ".join(f"{proj:.2g}" for _ in budgets)
                     + " | | |")
    return "\n".join(lines)


STYLE = {"rollout-csc defaults (m=1, LSTD critic)": ("C0", "-", "o"),
         "rollout-csc, H=30, no critic (a run's first call)": ("C0", ":", "o"),
         "rollout-csc, geometric, no critic": ("C3", "--", "v"),
         "rollout-reg defaults (m=1, LSTD critic)": ("C1", "-.", "^"),
         "LSTD-Q one-hot": ("C2", "-", "s"),
         "LSTD-Q Phi": ("C4", "-", "D")}


def figure(df: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(df.groupby(["problem", "target"], sort=False))
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(11, 4 * rows + 1.2), sharey=True, squeeze=False)
    axes = axes.ravel()
    for ax, ((problem, target), part) in zip(axes, panels, strict=False):
        for name, (color, ls, marker) in STYLE.items():
            m = part[part.operator == name].groupby("budget").error.mean()
            y = np.maximum(m.to_numpy(), FLOOR)
            ax.plot(m.index, y, ls=ls, marker=marker, ms=3, color=color, label=name)
            zero = m.to_numpy() == 0
            ax.plot(m.index[zero], y[zero], marker=marker, ms=7, ls="none", mfc="none",
                    color=color)
        ax.axhline(part[part.operator == PROJECTED].error.mean(), color="k", ls="--", lw=1,
                   label=PROJECTED)
        ax.set(xscale="log", yscale="log", title=f"{problem}, target {target}",
               xlabel="transitions per greedy call")
    for ax in axes[::2]:
        ax.set_ylabel("greedy error nu(T v - T_pi' v)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8,
               title=f"mean over runs; below {FLOOR:g} drawn at {FLOOR:g}; open markers: exactly 0")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller grid (a minute)")
    parser.add_argument("--repeats", type=int, default=3, help="run seeds per mdp seed (3)")
    parser.add_argument("--no-1e7", action="store_true", help="skip 10^7 per call")
    parser.add_argument("--report", action="store_true", help="tables and figure from the CSV")
    args = parser.parse_args()
    t0 = time.time()
    if args.report:
        df = pd.read_csv(OUT / "study_greedy_error.csv")
        print(tables(df))
        figure(df, FIGURE)
        return
    if args.quick:
        df = measure([50], [0], [1e3, 1e4, 1e5], [], 1)
    else:
        budgets = [int(b) for b in np.round(np.logspace(3, 6, 7), -2)]  # 1e3, 3.2e3, ...
        df = measure([50, 100], [0, 1, 2], budgets, [] if args.no_1e7 else [10**7],
                     args.repeats)
    text = tables(df) + f"\n\n({time.time() - t0:.0f} s on one core of the shared machine)\n"
    print(text)
    if not args.quick:
        OUT.mkdir(parents=True, exist_ok=True)
        df.to_csv(OUT / "study_greedy_error.csv", index=False)
        (OUT / "study_greedy_error.txt").write_text(text)
        figure(df, FIGURE)
        print(f"wrote {OUT / 'study_greedy_error.csv'}, .txt and {FIGURE}")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
