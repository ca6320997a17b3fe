"""From a results folder to statistics, figures and ``summary.md`` (``nsrl plot DIR``).

Shards are verified (as ``--resume`` does: key, sweep, rows, checksum) and reduced one at a
time to per-MDP statistics (the full table never has to fit in memory); a shard that fails
verification is left out and named in ``summary.md`` and by ``nsrl plot``. A partial run
(interrupted, to be resumed) is reported on the MDP indices that every instance has, so that
no instance weighs more than another; the coverage (shards intact on disk) is stated. On a
domain without a model the statistics are those of the shards' Monte-Carlo score, labelled
with its name and direction (:mod:`nsrl.experiments.quality`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import observations
from nsrl.experiments.plots import plot_figure, plot_loss_vs_samples
from nsrl.experiments.stats import INSTANCE, paper_stats, per_mdp
from nsrl.experiments.storage import open_results, read_shard
from nsrl.experiments.summary import conditions, markdown, summary_text
from nsrl.experiments.sweep import Sweep

__all__ = ["Coverage", "NoIntactShard", "balanced", "conditions", "load_per_mdp", "markdown",
           "write_report"]


class NoIntactShard(ValueError):
    """A results folder without a single intact shard: there is nothing to report on."""


@dataclass
class Coverage:
    """Which shards the statistics use: intact ones; the rest are missing or excluded.

    Attributes:
        total: shards of the sweep.
        intact: shards read and verified (:func:`~nsrl.experiments.storage.read_shard`).
        excluded: file name -> why it was left out (corrupt, edited, foreign...).
    """

    total: int
    intact: int = 0
    excluded: dict[str, str] = field(default_factory=dict)

    def problem(self) -> str:
        """One line about the excluded files ('' if none)."""
        if not self.excluded:
            return ""
        shown = "; ".join(f"{k}: {v}" for k, v in list(self.excluded.items())[:3])
        more = f"; and {len(self.excluded) - 3} more" if len(self.excluded) > 3 else ""
        return (f"{len(self.excluded)} shard file(s) failed verification and are left out "
                f"({shown}{more}); `nsrl reproduce --resume` with the same preset recomputes "
                f"them")


def load_per_mdp(out) -> tuple[Sweep, pd.DataFrame, Coverage]:
    """(sweep, per-MDP statistics of every intact shard, coverage).

    Every shard file is verified as ``--resume`` does (key, sweep fingerprint of the
    manifest, rows, checksum): a corrupt or edited shard is excluded and listed in the
    coverage, never used.
    """
    sweep, paths = open_results(out)
    parts, coverage = [], Coverage(total=len(sweep.shards()))
    for path in paths:
        table, problem = read_shard(path, sweep)
        if problem or table is None:
            coverage.excluded[path.name] = problem or "unreadable"
            continue
        parts.append(per_mdp(_with_instance(table.to_pandas()), sweep.quality.column))
        coverage.intact += 1
    if not parts:
        why = f" ({coverage.problem()})" if coverage.excluded else ""
        raise NoIntactShard(f"{out} has no intact shard yet{why}: run `nsrl reproduce` first.")
    return sweep, pd.concat(parts, ignore_index=True), coverage


def _with_instance(df: pd.DataFrame) -> pd.DataFrame:
    """The shard table with the paper's instance columns n_S, n_A and b.

    0 where the domain has no such axis (a family with fixed actions and successors): one
    group, never conditioned on.
    """
    for col in INSTANCE:
        if col not in df.columns:
            df[col] = 0
    return df


def balanced(pm: pd.DataFrame, sweep) -> tuple[pd.DataFrame, int]:
    """Keep the MDP indices that every instance of the sweep has (all of a complete run)."""
    have = pm.groupby(INSTANCE)["mdp"].unique()
    n_instances = int(np.prod([len(v) for _, v in sweep.grid]))
    if len(have) < n_instances:
        return pm, 0
    common = set.intersection(*(set(v) for v in have))
    return pm[pm["mdp"].isin(common)], len(common)


def write_report(out) -> tuple[list[Path], Coverage]:
    """Write stats CSVs, figures (expall.png, exp_<condition>.png) and summary.md in ``out``.

    Returns:
        The files written and the :class:`Coverage` (shards used, excluded and why).
    """
    out = Path(out)
    sweep, pm, coverage = load_per_mdp(out)
    pm, n_common = balanced(pm, sweep)
    schemes, quality = list(sweep.scheme_names), sweep.quality
    written = []
    overall = _of_quality(paper_stats(pm), quality)
    overall.to_csv(out / "stats.csv", index=False)
    plot_figure(overall, out / "expall.png", schemes, title="All instances",
                ylabel=quality.label())
    written += [out / "stats.csv", out / "expall.png"]
    conditioned = {}
    for col, label in conditions(sweep).items():
        st = _of_quality(paper_stats(pm, [col]), quality)
        conditioned[col] = st
        st.to_csv(out / f"stats_{col}.csv", index=False)
        plot_figure(st, out / f"exp_{col}.png", schemes, by=col, title=f"Conditioned on {label}",
                    ylabel=quality.label())
        written += [out / f"stats_{col}.csv", out / f"exp_{col}.png"]
    if "samples" in pm.columns and (quality.exact or pm["samples"].max() > 0):
        curves = pm.groupby(["scheme", "iteration"])[["samples", "mean"]].mean().reset_index()
        path = out / f"{quality.column}_vs_samples.png"  # quality against transitions
        if quality.exact:
            plot_loss_vs_samples(curves, path, f"{sweep.operator.name}, {sweep.features} "
                                 f"features")
        else:
            plot_loss_vs_samples(curves, path, sweep.operator.name, quality.label())
        written.append(path)
    obs = observations(pm, quality=quality)
    obs.to_csv(out / "observations.csv", index=False)
    text = summary_text(sweep, pm, overall, conditioned, coverage, n_common, out, obs)
    (out / "summary.md").write_text(text)
    return written + [out / "observations.csv", out / "summary.md"], coverage


def _of_quality(stats: pd.DataFrame, quality) -> pd.DataFrame:
    """``stats``, with a first column naming the shards' column where it is not the loss."""
    if not quality.exact:
        stats.insert(0, "quality", quality.column)
    return stats
