"""Figures in the paper's form (Scherrer 2014, Figure expall and the supplementary figures).

One panel per scheme, the same x and y range on every panel of a figure, the mean loss (or,
where no model gives it, the mean Monte-Carlo score, its name on the y axis) as a line and
three grey bands, from dark to light: mean +- Std[E[L|M]] (variability across
MDPs of the mean), mean +- E[Std[L|M]] (average within-MDP std), mean +- Std[Std[L|M]]
(variability across MDPs of the std). Each grey stays with its statistic; the widest band
is drawn first so that the narrower ones stay visible on top of it.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only: no display needed on a server or in CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

BANDS = (("std_of_std", "0.85", "Std[Std[L|M]]"), ("mean_of_std", "0.7", "E[Std[L|M]]"),
         ("std_of_mean", "0.5", "Std[E[L|M]]"))


def _limits(stats) -> tuple[float, float]:
    lo = min((stats["mean"] - stats[c]).min() for c, _, _ in BANDS)
    hi = max((stats["mean"] + stats[c]).max() for c, _, _ in BANDS)
    pad = 0.03 * (hi - lo or 1.0)
    return lo - pad, hi + pad


def _panel(ax, s) -> None:
    s = s.sort_values("iteration")
    k, m = s["iteration"].to_numpy(), s["mean"].to_numpy()
    for col, grey, label in sorted(BANDS, key=lambda band: -s[band[0]].mean()):
        d = s[col].to_numpy()
        ax.fill_between(k, m - d, m + d, color=grey, lw=0, label=label)
    ax.plot(k, m, color="k", lw=1.2, label="E[L]")


def plot_figure(stats, path, schemes, by: str | None = None, title: str = "",
                ylabel: str = "loss") -> None:
    """Write one figure: a row of panels per value of ``by`` (one row if None).

    Args:
        stats: output of :func:`nsrl.experiments.stats.paper_stats` (conditioned on ``by``).
        path: the PNG file to write.
        schemes: the schemes in panel order.
        by: the instance column the rows are conditioned on, or None.
        title: the figure title.
        ylabel: what the statistics are of (a score's name and direction where no model
            gives the loss: :meth:`nsrl.experiments.quality.Quality.label`).
    """
    values = [None] if by is None else sorted(stats[by].unique())
    # The overall figure wraps its panels on two rows; conditioned ones have a row per value.
    n_cols = len(schemes) if by is not None else (len(schemes) + 1) // 2
    n_rows = len(values) if by is not None else -(-len(schemes) // n_cols)
    fig, grid = plt.subplots(n_rows, n_cols, sharex=True, sharey=True,
                             figsize=(2.2 * n_cols, 2.0 * n_rows + 0.6), squeeze=False)
    axes = grid if by is not None else grid.reshape(1, -1)
    ylim = _limits(stats)
    for i, value in enumerate(values):
        rows = stats if by is None else stats[stats[by] == value]
        for j, scheme in enumerate(schemes):
            ax = axes[i, j]
            s = rows[rows["scheme"] == scheme]
            if len(s):
                _panel(ax, s)
            ax.set_ylim(*ylim)
            ax.grid(alpha=0.3, lw=0.5)
            if i == 0:
                ax.set_title(scheme, fontsize=10)
    for ax in grid[-1]:
        ax.set_xlabel("iteration k")
    for i, row in enumerate(grid):
        row[0].set_ylabel(ylabel if by is None else f"{by} = {values[i]}\n{ylabel}")
    axes[0, 0].legend(fontsize=6, loc="upper right")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def mdps_per_instance(pm) -> np.ndarray:
    """How many MDPs each instance has in the per-MDP table (coverage of a partial run)."""
    return pm.groupby(["n_states", "n_actions", "branching"])["mdp"].nunique().to_numpy()


def plot_loss_vs_samples(curves, path, title: str = "",
                         ylabel: str = "loss  mu (v* - v_pi)") -> None:
    """Mean loss against mean transitions drawn, one line per scheme (sample-based sweeps).

    Args:
        curves: columns ``scheme, samples, mean`` (one row per scheme and iteration), e.g.
            the per-MDP table averaged over MDPs; or with a ``panel`` column, one panel each.
        path: the PNG file to write.
        title: the figure title.
        ylabel: what the mean is of (a score's label on a domain without a model).
    """
    panels = sorted(curves["panel"].unique()) if "panel" in curves.columns else [None]
    fig, axes = plt.subplots(1, len(panels), sharey=True, figsize=(4.2 * len(panels), 3.4),
                             squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        rows = curves if panel is None else curves[curves["panel"] == panel]
        for scheme, s in rows.groupby("scheme", sort=True):
            s = s.sort_values("samples")
            ax.plot(s["samples"], s["mean"], lw=1.2, label=scheme)
        ax.set_xscale("log")
        ax.set_xlabel("transitions drawn (mean over runs)")
        ax.grid(alpha=0.3, lw=0.5)
        if panel is not None:
            ax.set_title(str(panel), fontsize=10)
    axes[0, 0].set_ylabel(ylabel)
    axes[0, -1].legend(fontsize=7, loc="upper right")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
