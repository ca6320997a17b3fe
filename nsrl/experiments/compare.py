"""``nsrl compare``: exact loss against samples used, sample-based operators beside exact ones.

A *learner* is ``learner(mdp, budget, seed) -> [(samples_used, policy), ...]``: the policy it
would output after each number of environment transitions, to be judged by its exact loss
``mu (v* - v_pi)`` on ``mdp``. Every (scheme, operator) pair is a learner
(:func:`scheme_learner`); other learners register in :data:`LEARNERS` by name, e.g. the
Stable-Baselines3 agents of ``nsrl.sb3.learners`` (``ppo``, ``a2c``, ``dqn``), which
``--sb3 LIST`` loads.

    nsrl compare --garnet 50,4,2 --schemes api,cpi(0.1),nspi(5)
                 --operators rollout-csc,lstdq,exact --budget 200000 --seeds 3 --out DIR

writes ``DIR/compare.csv`` (one row per checkpoint: learner, seed, samples, loss, memory)
and ``DIR/compare.png`` (mean loss over seeds against samples; model-based operators, which
draw no samples, as horizontal lines at their final loss).
"""

from __future__ import annotations

import importlib

import numpy as np

# name -> learner(mdp, budget, seed) -> [(samples_used, policy), ...]
LEARNERS: dict = {}

SAMPLE_OPERATORS = ("rollout-csc", "rollout-reg", "lstdq")
MODEL_OPERATORS = ("exact", "projected")


CRITICS = ("auto", "lstd", "regression", "none")  # the rollout operators' critic= by name


def critic_argument(name: str):
    """The rollout operators' ``critic=`` for a critic ``name`` (see :data:`CRITICS`).

    "auto" is the operator's default (LSTD on a finite model), "lstd" LSTD(0) on the
    previous call's first transitions, "regression" a ``LinearRegression()`` on the previous
    call's Q estimates, "none" plain rollouts of the horizon H (no bootstrap).
    """
    if name not in CRITICS:
        raise ValueError(f"unknown critic {name!r}; expected one of {', '.join(CRITICS)}.")
    if name == "regression":
        from sklearn.linear_model import LinearRegression

        return LinearRegression()
    return None if name == "none" else name


def sample_operator(name: str, mdp, samples: int, horizon=None, features=None, m=None,
                    critic="auto"):
    """The sample-based operator ``name`` on the native vector env of ``mdp``.

    ``samples`` transitions per greedy call; estimators are linear in ``features`` (default:
    the MDP's Phi, like the paper's projection, one-hot without; or "onehot"):
    LogisticRegression for ``rollout-csc``, Ridge per action for ``rollout-reg``, LSTD-Q
    for ``lstdq``. Every operator keeps its own defaults (LSTD-Q's consistent ridge and
    sample reuse; the rollouts' ``nsrl.greedy.rollout.DEFAULTS``: m = 1 rollouts ended by
    the LSTD critic, H = 30, CRN, stratified states) except for what is given (None: the
    default). The rollout options, which LSTD-Q does not have and ignores:

    Args:
        name: "rollout-csc", "rollout-reg" or "lstdq".
        mdp: the finite model (the env is ``FiniteMDPVectorEnv(mdp)``).
        samples: transitions per greedy call.
        horizon: H, the length of the rollouts with no critic value to end on: an int, or
            "geometric" (unbiased, high variance).
        features: the state features ("onehot", or None for Phi).
        m: the rollout length before the critic's bootstrap (an int >= 1).
        critic: a name of :data:`CRITICS` ("auto": the default), or anything the rollout
            operators' ``critic=`` takes (a regressor, a critic object).
    """
    from sklearn.linear_model import LogisticRegression, Ridge

    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy import LSTDQ, RolloutCSC, RolloutRegression

    env = FiniteMDPVectorEnv(mdp, num_envs=1)
    rollout = {k: v for k, v in (("horizon", horizon), ("m", m)) if v is not None}
    rollout["critic"] = critic_argument(critic) if isinstance(critic, str) else critic
    if name == "rollout-csc":
        return RolloutCSC(env, LogisticRegression(max_iter=1000), budget=samples,
                          features=features, **rollout)
    if name == "rollout-reg":
        return RolloutRegression(env, Ridge(alpha=1e-3), budget=samples, features=features,
                                 **rollout)
    if name == "lstdq":
        return LSTDQ(env, budget=samples, features=features)
    raise ValueError(f"unknown sample-based operator {name!r}; expected one of "
                     f"{', '.join(SAMPLE_OPERATORS)}.")


def scheme_learner(scheme_name: str, operator_name: str, iterations: int = 20, noise=0.1,
                   **operator_args):
    """The learner that runs ``scheme_name`` with ``operator_name`` (see module docstring).

    A sample-based operator gets ``budget // iterations`` transitions per greedy call and
    the run stops once ``budget`` transitions are used (CPI+'s value estimates count), or
    after ``iterations``; a model-based one (exact, projected) runs ``iterations`` and
    gives one checkpoint at 0 samples. ``operator_args`` go to :func:`sample_operator`.
    """
    from nsrl.greedy import ExactGreedy, ProjectedGreedy
    from nsrl.schemes import make_scheme, run

    make_scheme(scheme_name)  # fail early on a bad name
    if operator_name not in SAMPLE_OPERATORS + MODEL_OPERATORS:
        raise ValueError(f"unknown operator {operator_name!r}; expected one of "
                         f"{', '.join(SAMPLE_OPERATORS + MODEL_OPERATORS)}.")

    def learner(mdp, budget, seed):
        rng = np.random.default_rng(seed)
        scheme = make_scheme(scheme_name)
        if operator_name == "exact":
            op = ExactGreedy(mdp)
        elif operator_name == "projected":
            op = ProjectedGreedy(mdp, noise=noise)
        else:
            op = sample_operator(operator_name, mdp, max(1, budget // iterations),
                                 **operator_args)
        hist = run(scheme, op, iterations, rng=rng, mdp=mdp, keep_outputs=True,
                   max_samples=budget if hasattr(op, "samples_used") else None)
        out = list(zip(hist.samples.tolist(), hist.outputs, strict=True))
        return out if hasattr(op, "samples_used") else out[-1:]

    learner.__name__ = f"{scheme_name}/{operator_name}"
    return learner


def load_sb3(names: list[str]) -> dict:
    """The SB3 learners ``names`` (``ppo``, ``a2c``, ``dqn``) from :mod:`nsrl.sb3.learners`."""
    try:
        module = importlib.import_module("nsrl.sb3.learners")
    except ImportError as exc:
        raise ValueError(f"SB3 learners need Stable-Baselines3, which did not import ({exc}); "
                         f"install the extra: pip install 'nsrl[sb3]'.") from None
    LEARNERS.update(module.LEARNERS)
    missing = [n for n in names if n not in LEARNERS]
    if missing:
        raise ValueError(f"unknown SB3 learner(s) {missing}; available: {sorted(LEARNERS)}.")
    return {n: LEARNERS[n] for n in names}


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
