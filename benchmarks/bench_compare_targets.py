"""Exact loss against transitions for every scheme, LSTD-Q and rollouts + CSC: issue 12's targets.

The issue's protocol: Garnet(50, 4, 2), gamma = 0.99, one-hot features, mdp seeds 0, 1, 2, one
run each, 300 000 transitions over 20 iterations, the operators' defaults, i.e. for each mdp
seed s

    nsrl compare --garnet 50,4,2 --mdp-seed s --seed s --seeds 1 --features onehot \\
        --schemes "api,api(0.1),cpi(0.1),cpi+,nspi(5),psdp" --operators lstdq,rollout-csc,exact \\
        --run-budget 300000 --iterations 20 --out DIR

run here through the same Python functions (``nsrl.experiments.compare``), with the exact
operator's final loss after the same 20 iterations for reference, and textbook LSPI (tabular
LSTD-Q on one batch of 300 000 transitions collected once, 20 iterations on it) beside them.

Writes benchmarks/results/compare_targets.{csv,txt} and docs/sampling_compare.png; prints
the final-loss table and the targets table (met / missed, with the numbers).

    python benchmarks/bench_compare_targets.py     # under a minute on one core
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments.compare import compare, scheme_learner

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results"
FIGURE = ROOT / "docs" / "sampling_compare.png"
SCHEMES = ("api", "api(0.1)", "cpi(0.1)", "cpi+", "nspi(5)", "psdp")
OPERATORS = ("lstdq", "rollout-csc", "exact")
BUDGET, ITERATIONS, SEEDS = 300_000, 20, (0, 1, 2)
# (learner, reference learner or None, bound, what): loss <= bound, or loss - reference <= bound
TARGETS = [
    ("api/lstdq", None, 0.05, "API + LSTD-Q <= 0.05"),
    ("psdp/lstdq", "psdp/exact", 0.15, "PSDP + LSTD-Q within 0.15 of PSDP exact"),
    ("api/rollout-csc", None, 0.5, "API + rollouts + CSC <= 0.5"),
    ("psdp/rollout-csc", None, 1.0, "PSDP + rollouts + CSC <= 1.0"),
    ("cpi(0.1)/lstdq", "cpi(0.1)/exact", 1.0, "CPI(0.1) + LSTD-Q within 1.0 of CPI(0.1) exact"),
]
# What the issue measured before this work (`nsrl compare` defaults then).
BEFORE = {"api/lstdq": "4.5", "psdp/lstdq": "0.93", "api/rollout-csc": "27.5",
          "psdp/rollout-csc": "8.9", "cpi(0.1)/lstdq": "24.8"}


def lspi_learner(iterations: int = ITERATIONS):
    """Textbook LSPI: API + LSTD-Q on one batch of ``budget`` transitions, reused every time.

    The batch is collected once from the env's own walks (uniform actions, restarts w.p.
    1 - gamma), then ``LSTDQ(budget=0, store=...)`` draws nothing more.
    """
    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy import LSTDQ, TransitionStore

    def learner(mdp, budget, seed):
        rng = np.random.default_rng(seed)
        env = FiniteMDPVectorEnv(mdp, num_envs=1)
        store = TransitionStore(budget)
        store.add(LSTDQ(env, budget=1, reuse=False).sampler.transitions(budget, rng))
        op = LSTDQ(env, budget=0, features="onehot", store=store)
        h = nsrl.run(nsrl.API(), op, iterations, rng=rng)
        return [(budget, h.output)]

    return learner


def timed(learner, seconds: dict, name: str):
    def run(mdp, budget, seed):
        t0 = time.process_time()
        out = learner(mdp, budget, seed)
        seconds.setdefault(name, []).append(time.process_time() - t0)
        return out

    return run


def measure() -> tuple[pd.DataFrame, dict]:
    learners = {f"{s}/{o}": scheme_learner(s, o, ITERATIONS,
                                           **({} if o == "exact" else {"features": "onehot"}))
                for s in SCHEMES for o in OPERATORS}
    learners["lspi (one fixed batch)"] = lspi_learner()
    seconds: dict = {}
    learners = {name: timed(fn, seconds, name) for name, fn in learners.items()}
    frames = []
    for seed in SEEDS:
        mdp = nsrl.garnet(50, 4, 2, seed=seed)
        frames.append(compare(mdp, learners, BUDGET, [seed]))
        print(f"  mdp seed {seed} done", flush=True)
    return pd.concat(frames, ignore_index=True), seconds


def finals(df: pd.DataFrame) -> pd.DataFrame:
    """The last checkpoint of every run, learners in (scheme, operator) order, seeds sorted."""
    last = df.sort_values("checkpoint").groupby(["learner", "seed"]).last().reset_index()
    order = [f"{s}/{o}" for s in SCHEMES for o in OPERATORS]
    rank = {name: i for i, name in enumerate(order)}
    last["rank"] = last.learner.map(lambda n: rank.get(n, len(order)))
    return last.sort_values(["rank", "seed"]).drop(columns="rank")


def final_table(df: pd.DataFrame, seconds: dict) -> str:
    last = finals(df)
    lines = ["| learner | transitions | final loss, mean ± sd | seeds 0, 1, 2 | CPU s per run |",
             "|---|---:|---:|---|---:|"]
    for name, g in last.groupby("learner", sort=False):
        runs = ", ".join(f"{x:.3f}" for x in g.loss)
        lines.append(f"| {name} | {g.samples.mean():,.0f} | {g.loss.mean():.3f} ± "
                     f"{g.loss.std():.3f} | {runs} | {np.mean(seconds[name]):.1f} |")
    return "\n".join(lines)


def target_table(df: pd.DataFrame) -> str:
    last = finals(df).groupby("learner").loss
    mean, per_seed = last.mean(), last.apply(list)
    lines = ["| target | before (issue) | now: mean (seeds 0, 1, 2) | reference | met |",
             "|---|---:|---:|---:|---|"]
    for learner, ref, bound, what in TARGETS:
        value = mean[learner] - (mean[ref] if ref else 0.0)
        runs = ", ".join(f"{x:.3f}" for x in per_seed[learner])
        ref_text = f"{mean[ref]:.3f}" if ref else ""
        gap = f"gap {value:+.3f}; " if ref else ""
        verdict = "met" if value <= bound else f"missed by {value - bound:.3f}"
        lines.append(f"| {what} | {BEFORE[learner]} | {mean[learner]:.3f} ({runs}) | "
                     f"{ref_text} | {gap}{verdict} |")
    return "\n".join(lines)


def figure(df: pd.DataFrame, path: Path) -> None:
    """One panel per sample-based operator: mean loss over the mdp seeds against transitions.

    Colours are schemes; the exact operator's final loss after the same iterations is the
    dashed line of the scheme's colour; symlog y (linear below 0.1) so that both the start
    (about 25) and the convergence to 0 show.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
    colors = {scheme: f"C{i}" for i, scheme in enumerate(SCHEMES)}
    titles = {"lstdq": "LSTD-Q (no reset-to-state)", "rollout-csc": "rollouts + CSC"}
    for ax, op in zip(axes, ("lstdq", "rollout-csc"), strict=True):
        for scheme in SCHEMES:
            g = df[df.learner == f"{scheme}/{op}"]
            # mean over seeds at each checkpoint (CPI+ stops by its rule: fewer checkpoints)
            m = g.groupby("checkpoint").agg(samples=("samples", "mean"), loss=("loss", "mean"))
            ax.plot(m.samples, m.loss, "-", marker=".", color=colors[scheme], label=scheme)
            exact = df[df.learner == f"{scheme}/exact"].loss.mean()
            ax.axhline(exact, ls="--", lw=1, color=colors[scheme])
        if op == "lstdq":
            lspi = df[df.learner == "lspi (one fixed batch)"]
            ax.plot(lspi.samples.mean(), lspi.loss.mean(), "*", ms=12, color="k",
                    label="textbook LSPI, one batch")
        ax.set(xscale="log", yscale="symlog", title=f"{titles[op]}: mean of mdp seeds 0, 1, 2",
               xlabel="environment transitions used")
        ax.set_yscale("symlog", linthresh=0.1)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("exact loss mu(v* - v_pi)  (symlog: linear below 0.1)")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[1].legend(handles, labels, fontsize=8, title="dashed: exact operator, 20 iterations",
                   loc="lower left")
    fig.suptitle(f"Garnet(50, 4, 2), one-hot, {BUDGET:,} transitions over {ITERATIONS} "
                 f"iterations, operators' defaults")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true",
                        help="only redo the tables and figure from the saved CSV")
    args = parser.parse_args()
    t0 = time.time()
    if args.report:
        df, seconds = pd.read_csv(OUT / "compare_targets.csv"), None
        cpu = df.groupby("learner").cpu_s.first().to_dict()
        seconds = {k: [v] for k, v in cpu.items()}
    else:
        df, seconds = measure()
        df["cpu_s"] = df.learner.map({k: float(np.mean(v)) for k, v in seconds.items()})
        OUT.mkdir(parents=True, exist_ok=True)
        df.to_csv(OUT / "compare_targets.csv", index=False)
    text = (f"### Final exact loss, Garnet(50, 4, 2), one-hot, {BUDGET:,} transitions over "
            f"{ITERATIONS} iterations (exact: {ITERATIONS} iterations, 0 transitions)\n\n"
            + final_table(df, seconds) + "\n\n### Targets (issue 12)\n\n" + target_table(df)
            + f"\n\n({time.time() - t0:.0f} s wall on the shared machine)\n")
    print(text)
    if not args.report:
        (OUT / "compare_targets.txt").write_text(text)
    figure(df, FIGURE)
    print(f"wrote {FIGURE}")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
