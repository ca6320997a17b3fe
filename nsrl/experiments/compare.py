"""``nsrl compare``: exact loss against samples used, sample-based operators beside exact ones.

A *learner* is ``learner(mdp, budget, seed) -> [(samples_used, policy), ...]``: the policy it
would output after each number of environment transitions, to be judged by its exact loss
``mu (v* - v_pi)`` on ``mdp``. Every (scheme, operator) pair is a learner
(:func:`scheme_learner`, operators by their registry name, :mod:`nsrl.greedy.registry`);
other learners are registered by name (:mod:`nsrl.experiments.learners`), e.g. the
Stable-Baselines3 agents (``ppo``, ``a2c``, ``dqn``), which ``--sb3 LIST`` loads.

    nsrl compare --garnet 50,4,2 --schemes api,cpi(0.1),nspi(5)
                 --operators rollout-csc,lstdq,exact --run-budget 200000 --seeds 3 --out DIR

writes ``DIR/compare.csv`` (one row per checkpoint: learner, seed, samples, loss, memory)
and ``DIR/compare.png`` (mean loss over seeds against samples; model-based operators, which
draw no samples, as horizontal lines at their final loss).
"""

from __future__ import annotations

import numpy as np

from nsrl.engine import run
from nsrl.experiments.learners import learner as registered_learner
from nsrl.greedy.registry import make_operator, operator_entry
from nsrl.schemes import make_scheme


def scheme_learner(scheme_name: str, operator_name: str, iterations: int = 20, **options):
    """The learner that runs ``scheme_name`` with the registered operator ``operator_name``.

    A sample-based operator gets ``budget // iterations`` transitions per greedy call (its
    own ``budget``; ``budget`` here is the run's, shared by its calls) and the run stops
    once ``budget`` transitions are used (CPI+'s value estimates count), or after
    ``iterations``; a model-based one (exact, projected) runs ``iterations`` and gives one
    checkpoint at 0 samples. ``options`` are the operator's
    own (:mod:`nsrl.greedy.registry`; checked now, an option it does not take is refused).
    """
    make_scheme(scheme_name)  # fail early on a bad name
    entry = operator_entry(operator_name)
    entry.check({**options, **({"budget": 1} if entry.sample_based else {})})

    def learner(mdp, budget, seed):
        extra = {"budget": max(1, budget // iterations)} if entry.sample_based else {}
        op = make_operator(entry.name, mdp, **options, **extra)
        hist = run(make_scheme(scheme_name), op, iterations, rng=np.random.default_rng(seed),
                   mdp=mdp, keep_outputs=True,
                   max_samples=budget if entry.sample_based else None)
        out = list(zip(hist.samples.tolist(), hist.outputs, strict=True))
        return out if entry.sample_based else out[-1:]

    learner.__name__ = f"{scheme_name}/{operator_name}"
    return learner


def load_sb3(names: list[str]) -> dict:
    """The registered learners ``names`` (``ppo``, ``a2c``, ``dqn``: SB3, loaded now)."""
    return {n: registered_learner(n) for n in names}


def compare(mdp, learners: dict, budget: int, seeds, progress=None):
    """Rows ``(learner, seed, checkpoint, samples, loss, memory)`` for every learner and seed."""
    import pandas as pd

    from nsrl.exact import backend

    rows = []
    for name, learner in learners.items():
        for seed in seeds:
            for i, (samples, policy) in enumerate(learner(mdp, budget, seed)):
                rows.append((name, seed, i, int(samples), backend(mdp).loss(policy),
                             int(getattr(policy, "memory", 1))))
            if progress:
                progress(name, seed)
    return pd.DataFrame(rows, columns=["learner", "seed", "checkpoint", "samples", "loss",
                                       "memory"])


_STYLES = {"rollout-csc": ("-", "o"), "rollout-reg": ("-.", "^"), "lstdq": (":", "s")}


def plot(df, path, title: str = "") -> None:
    """Mean exact loss (band: +- one std over seeds) against samples used, log x.

    One colour per scheme (or other learner), one line style per operator; model-based
    operators are dashed horizontal lines at their final loss.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9.5, 4.5))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors: dict = {}
    for name, g in df.groupby("learner", sort=False):
        scheme, _, op = name.partition("/")
        color = colors.setdefault(scheme, cycle[len(colors) % len(cycle)])
        stats = g.groupby("checkpoint").agg(samples=("samples", "mean"), mean=("loss", "mean"),
                                            std=("loss", "std")).fillna(0.0)
        if (g["samples"] == 0).all():
            ax.axhline(stats["mean"].iloc[-1], ls="--", lw=1, color=color,
                       label=f"{name} (model, 0 samples)")
            continue
        ls, marker = _STYLES.get(op, ("-", "."))
        ax.plot(stats["samples"], stats["mean"], ls=ls, marker=marker, ms=3, color=color,
                label=name)
        ax.fill_between(stats["samples"], stats["mean"] - stats["std"],
                        stats["mean"] + stats["std"], color=color, alpha=0.12)
    ax.set_xscale("log")
    ax.set_xlabel("environment transitions used")
    ax.set_ylabel("exact loss  mu (v* - v_pi)")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
