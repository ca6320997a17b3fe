"""The paper's statistics of the loss (Scherrer 2014, section 5 and the caption of Figure expall).

The same four statistics are computed on whatever quality the shards hold: the exact loss, or
on a domain without a model the Monte-Carlo score (:mod:`nsrl.experiments.quality`; ``value=``
of :func:`per_mdp`), L below standing for either.

For a scheme at iteration k, with L the loss of a run on an MDP M drawn from an instance:

* ``mean``: E[L_k], the average over every run and MDP (equal runs per MDP, so it is also
  the mean over MDPs of the per-MDP means);
* ``std_of_mean``: Std[E[L_k | M]], the standard deviation across MDPs of the per-MDP mean;
* ``mean_of_std``: E[Std[L_k | M]], the mean across MDPs of the within-MDP std;
* ``std_of_std``: Std[Std[L_k | M]], the standard deviation across MDPs of the within-MDP std.

Every standard deviation is the population one (ddof=0), well defined for any number of
runs and MDPs; the paper does not say which it used (with 30 samples they differ by 1.7%).
Statistics are computed in two passes: :func:`per_mdp` reduces the runs of each MDP (it can
be applied shard by shard), :func:`paper_stats` reduces across MDPs, overall or
conditioned on n_S, n_A or b.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

INSTANCE = ["n_states", "n_actions", "branching"]
STATS = ["mean", "std_of_mean", "mean_of_std", "std_of_std"]


def per_mdp(df: pd.DataFrame, value: str = "loss") -> pd.DataFrame:
    """Mean and std (ddof=0) of the loss over the runs of each (MDP, scheme, iteration).

    Args:
        df: the tidy table (columns n_states, n_actions, branching, mdp, run, scheme,
            iteration, loss, ...).
        value: the column reduced: ``"loss"``, or ``"score"`` for a domain without a model
            (whose table also gives ``ci``, the mean 95% half-width of the runs' scores, and
            ``games``, the mean games per score).

    Returns:
        One row per instance, mdp, scheme and iteration with columns ``mean``, ``std``,
        ``runs``, ``memory`` (mean memory of the output), ``stopped`` (fraction of runs
        whose stopping rule has fired, CPI and CPI+), and for a sample-based sweep
        ``samples`` (mean transitions drawn so far) and ``error`` (mean greedy error of the
        calls made), when the table has them.

    Examples:
        >>> df = pd.DataFrame({"n_states": 5, "n_actions": 2, "branching": 1, "mdp": 0,
        ...                    "run": [0, 1], "scheme": "API", "iteration": 1,
        ...                    "loss": [1.0, 3.0], "memory": 1})
        >>> per_mdp(df)[["mean", "std"]].values.tolist()
        [[2.0, 1.0]]
    """
    missing = set(INSTANCE + ["mdp", "scheme", "iteration", value]) - set(df.columns)
    if missing:
        raise ValueError(f"the table lacks columns {sorted(missing)}; is it nsrl's tidy table?")
    keys = INSTANCE + ["mdp", "scheme", "iteration"]
    # numpy reductions over factorized keys (pandas' groupby was most of the report's time:
    # docs/benchmarks.md); rows come out sorted by the keys, as groupby(sort=True).
    codes, uniques = zip(*(pd.factorize(df[k], sort=True) for k in keys), strict=True)
    group = np.ravel_multi_index(codes, [len(u) for u in uniques])
    cells, inverse = np.unique(group, return_inverse=True)
    runs = np.bincount(inverse)
    loss = df[value].to_numpy(dtype=np.float64)
    mean = np.bincount(inverse, loss) / runs
    std = np.sqrt(np.bincount(inverse, (loss - mean[inverse]) ** 2) / runs)
    index = np.unravel_index(cells, [len(u) for u in uniques])
    out = pd.DataFrame({k: np.asarray(u)[i] for k, u, i in zip(keys, uniques, index, strict=True)})
    out["mean"], out["std"], out["runs"] = mean, std, runs
    if "memory" in df.columns:
        out["memory"] = np.bincount(inverse, df["memory"].to_numpy(dtype=np.float64)) / runs
    if "step" in df.columns:  # CPI and CPI+ record a 0 step once their stopping rule fired
        out["stopped"] = np.bincount(inverse, (df["step"] == 0).to_numpy(np.float64)) / runs
    for column, name in (("score_ci", "ci"), ("games", "games")):  # a Monte-Carlo score's
        if column in df.columns:
            out[name] = np.bincount(inverse, df[column].to_numpy(np.float64)) / runs
    if "samples" in df.columns:  # sample-based sweeps: transitions drawn so far, greedy error
        out["samples"] = np.bincount(inverse, df["samples"].to_numpy(np.float64)) / runs
    if "error" in df.columns:
        error = df["error"].to_numpy(np.float64)
        called = np.bincount(inverse, ~np.isnan(error))  # NaN: no call (CPI has stopped)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["error"] = np.bincount(inverse, np.nan_to_num(error)) / called
    return out


def paper_stats(pm: pd.DataFrame, by: list[str] | tuple[str, ...] = ()) -> pd.DataFrame:
    """The four statistics of the paper per scheme and iteration, optionally per ``by``.

    Args:
        pm: the per-MDP table of :func:`per_mdp`.
        by: instance columns to condition on, e.g. ``["branching"]`` (empty: overall).

    Returns:
        Columns ``*by, scheme, iteration, mean, std_of_mean, mean_of_std, std_of_std, mdps``.

    Examples:
        >>> pm = pd.DataFrame({"n_states": 5, "n_actions": 2, "branching": 1,
        ...                    "mdp": [0, 1], "scheme": "API", "iteration": 1,
        ...                    "mean": [1.0, 3.0], "std": [0.5, 0.5], "runs": 2})
        >>> paper_stats(pm)[["mean", "std_of_mean", "mean_of_std", "std_of_std"]].values.tolist()
        [[2.0, 1.0, 0.5, 0.0]]
    """
    by = list(by)
    unknown = set(by) - set(INSTANCE)
    if unknown:
        raise ValueError(f"can condition on {INSTANCE} only, got {sorted(unknown)}.")
    g = pm.groupby(by + ["scheme", "iteration"], sort=True, observed=True)

    def pstd(x):
        return float(np.std(x.to_numpy()))

    out = pd.DataFrame({
        "mean": g["mean"].mean(),
        "std_of_mean": g["mean"].agg(pstd),
        "mean_of_std": g["std"].mean(),
        "std_of_std": g["std"].agg(pstd),
        "mdps": g["mean"].size(),
    })
    if "ci" in pm.columns:  # a Monte-Carlo score: the games per point and their mean interval
        out["games"], out["mean_ci"] = g["games"].mean(), g["ci"].mean()
    return out.reset_index()


def final_summary(stats: pd.DataFrame, pm: pd.DataFrame | None = None,
                  higher: bool = False) -> pd.DataFrame:
    """Per scheme at the last iteration: the four statistics, a rank by mean, and speed.

    ``k_1pct`` is the first iteration from which the mean loss stays within 1% of its final
    value (how fast a scheme settles); ``memory`` the mean memory of the final output. Rank 1
    is the lowest mean (a loss), or with ``higher`` the highest (a score whose higher is better).
    """
    last = stats[stats["iteration"] == stats["iteration"].max()].set_index("scheme")
    out = last[STATS].copy()
    settle = {}
    for scheme, s in stats.groupby("scheme"):
        s = s.sort_values("iteration")
        far = np.abs(s["mean"].to_numpy() - s["mean"].iloc[-1]) > 0.01 * abs(s["mean"].iloc[-1])
        settle[scheme] = int(s["iteration"].iloc[np.flatnonzero(far)[-1] + 1]) if far.any() \
            else int(s["iteration"].iloc[0])
    out["k_1pct"] = pd.Series(settle)
    if pm is not None and "memory" in pm.columns:
        k = pm["iteration"].max()
        out["memory"] = pm[pm["iteration"] == k].groupby("scheme")["memory"].mean()
    out["rank"] = out["mean"].rank(method="min", ascending=not higher).astype(int)
    return out.sort_values("rank")
