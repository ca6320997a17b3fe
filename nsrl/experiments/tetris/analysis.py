"""The Tetris presets' analysis: curves beside the published ones, intervals, tests.

Written into the experiment's folder once its variants are complete:

* ``tetris_curves.png``: each scheme's mean lines per iteration over the units, with its 95%
  t-interval, beside the published final scores of the papers (horizontal lines);
* ``tetris_final.csv``: per variant and scheme, the mean lines of the last iteration and of the
  best one (the iteration of highest mean), their intervals, memory and samples;
* ``tetris_comparisons.csv``: every pair of schemes at the last iteration, unit by unit (the
  schemes of a unit play the same evaluation games), paired t and Wilcoxon tests, Holm's
  correction over all the pairs of the experiment;
* ``tetris.md``: the tables and what they say.

Scores are lines per game, higher is better. The published figures are those of Scherrer et
al. (JMLR 2015, section 6.2; Gabillon et al., NIPS 2013) for the same protocol, 100 runs each.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nsrl.experiments.bigger.inference import holm, interval, paired_comparisons

# (board height, label) -> published mean lines (the papers' final or best curves).
PUBLISHED = {
    10: {"CBMPI, m = 5 (JMLR 2015)": 4_200, "CBMPI, m = 2 (NIPS 2013)": 4_300,
         "DPI (JMLR 2015)": 3_400, "cross-entropy (JMLR 2015)": 3_000},
    20: {"CBMPI (JMLR 2015)": 20_000_000, "DPI (JMLR 2015)": 12_000_000,
         "cross-entropy (JMLR 2015)": 20_000_000},
}


def units(pm: pd.DataFrame, iteration: int | None = None) -> pd.DataFrame:
    """Lines per unit (rows: the units) and scheme (columns) at ``iteration`` (default last)."""
    k = int(pm["iteration"].max()) if iteration is None else iteration
    last = pm[pm["iteration"] == k]
    return last.pivot_table(index=["n_states", "mdp"], columns="scheme", values="mean")


def curves(pm: pd.DataFrame) -> pd.DataFrame:
    """Per scheme and iteration: units, mean lines over them and its 95% t-interval."""
    rows = []
    for (scheme, k), part in pm.groupby(["scheme", "iteration"]):
        mean, low, high = interval(part["mean"].to_numpy())
        samples = part["samples"].to_numpy(dtype=float) if "samples" in part else [np.nan]
        rows.append({"scheme": scheme, "iteration": k, "units": len(part), "mean": mean,
                     "low": low, "high": high, "samples": float(np.mean(samples)),
                     "memory": float(part["memory"].to_numpy(dtype=float).mean())})
    return pd.DataFrame(rows)


def final_table(curve: pd.DataFrame, variant: str) -> pd.DataFrame:
    """The last iteration's and the best iteration's row of each scheme."""
    rows = []
    for scheme in curve["scheme"].unique():
        part = curve[curve["scheme"] == scheme].to_dict("records")
        last = max(part, key=lambda r: r["iteration"])
        best = max(part, key=lambda r: r["mean"])
        rows.append({"variant": variant, "scheme": scheme, "units": last["units"],
                     "final": last["mean"], "final_low": last["low"],
                     "final_high": last["high"], "best": best["mean"],
                     "best_iteration": best["iteration"], "best_low": best["low"],
                     "best_high": best["high"], "memory": last["memory"],
                     "samples_per_iteration": last["samples"] / last["iteration"]})
    return pd.DataFrame(rows).sort_values("final", ascending=False, ignore_index=True)


def comparisons(tables: dict[str, pd.DataFrame], alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of schemes of each variant, unit by unit, Holm over all of them.

    ``diff`` is a - b in lines (positive: a better); ``better`` names the higher scheme
    where the pair is significant after the correction over the whole experiment.
    """
    parts = []
    for variant, table in tables.items():
        if table.shape[1] < 2:
            continue
        # paired_comparisons calls the lower one better (losses): fed the negated lines.
        c = paired_comparisons(-table, alpha=alpha)
        c["diff"], c["low"], c["high"] = -c["diff"], -c["high"], -c["low"]
        c.insert(0, "variant", variant)
        parts.append(c.drop(columns=["n_states", "better", "significant", "p_holm"]))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    out["p_holm"] = holm(out["p_t"].fillna(1.0).to_numpy())
    out["significant"] = out["p_holm"] < alpha
    out["better"] = np.where(out["significant"], np.where(out["diff"] > 0, out["a"], out["b"]),
                             "")
    return out


def label_places(published: Mapping[str, float], ylim: tuple[float, float],
                 gap: float = 0.04) -> list[tuple[str, float, float]]:
    """The published lines to draw: (label, value, x in axes fraction) for each value.

    Equal values share one line and one label; a label closer than ``gap`` of the y-range
    to one already placed at the same x moves left, so no two labels overlap.

    Examples:
        >>> label_places({"A": 20.0, "B": 12.0, "C": 20.0}, (0.0, 25.0))
        [('B', 12.0, 1.0), ('A, C', 20.0, 1.0)]
        >>> label_places({"A": 42.0, "B": 43.0}, (0.0, 45.0))
        [('A', 42.0, 1.0), ('B', 43.0, 0.6)]
    """
    merged: dict[float, list[str]] = {}
    for label, value in published.items():
        merged.setdefault(value, []).append(label)
    span = max(ylim[1] - ylim[0], 1e-12)
    placed: list[tuple[str, float, float]] = []
    for value in sorted(merged):
        x = 1.0
        while any(px == x and abs(value - pv) < gap * span for _, pv, px in placed):
            x = round(x - 0.4, 10)
        placed.append((", ".join(merged[value]), value, x))
    return placed


def plot(curve_by_variant: dict[str, pd.DataFrame], height: int, path: Path) -> Path:
    """Mean lines per iteration with 95% bands, one line per (variant, scheme), and the papers'.

    One panel per variant that runs several schemes (the preset's first), each scheme in the
    same colour in every panel; the variants that run one scheme are drawn in the first panel,
    dashed, each in a colour of its own.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    several = [v for v, c in curve_by_variant.items() if c["scheme"].nunique() > 1]
    panels = several or list(curve_by_variant)[:1]
    single = [v for v in curve_by_variant if v not in panels]
    schemes = list(dict.fromkeys(s for c in curve_by_variant.values() for s in c["scheme"]))
    colours = {s: f"C{k % 10}" for k, s in enumerate(schemes)}
    fig, axes = plt.subplots(1, len(panels), figsize=(8 * len(panels), 5), sharey=True,
                             squeeze=False)
    for k, (ax, variant) in enumerate(zip(axes[0], panels, strict=True)):
        drawn = [(variant, "-")] + ([(v, "--") for v in single] if k == 0 else [])
        for name, style in drawn:
            for scheme, part in curve_by_variant[name].groupby("scheme", sort=False):
                colour = (colours[scheme] if name == variant
                          else f"C{(len(schemes) + single.index(name)) % 10}")
                label = scheme if name == variant else f"{scheme}, {name.upper()}"
                ax.plot(part["iteration"], part["mean"], ls=style, marker="o", ms=3,
                        label=label, color=colour)
                ax.fill_between(part["iteration"], part["low"], part["high"], alpha=0.12,
                                color=colour)
        ax.set_xlabel("iteration")
        ax.set_title(f"Tetris 10 x {height}" + (f", {variant.upper()}" if variant else "")
                     + ": mean over units, 95% t-intervals", fontsize=10)
        ax.legend(fontsize=7, ncol=2, loc="upper left")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean lines per game (higher is better)")
    # After every panel is drawn: the shared y-range is final, and the same for all of them.
    published = label_places(PUBLISHED.get(height, {}), axes[0][0].get_ylim())
    for ax in axes[0]:
        for j, (label, value, x) in enumerate(published):
            ax.axhline(value, ls=(0, (4, 2 + j)), lw=1, color="0.35")
            ax.annotate(label, (x, value), xycoords=("axes fraction", "data"), fontsize=7,
                        ha="right", va="bottom", color="0.3",
                        bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 0.5})
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def analyse(out: Any, experiment: Any) -> list[Path]:
    """Write the analysis files of a complete Tetris experiment into ``out`` (module doc)."""
    from nsrl.experiments.report import load_per_mdp

    out = Path(out)
    finals, tables, curve_by_variant, height = [], {}, {}, 10
    for variant, sweep in experiment.sweeps().items():
        _, pm, _ = load_per_mdp(experiment.folder(out, variant))
        height = int(sweep.axis("height")[0])
        curve = curves(pm)
        curve_by_variant[variant] = curve
        finals.append(final_table(curve, variant or experiment.name))
        tables[variant or experiment.name] = units(pm)
    final = pd.concat(finals, ignore_index=True)
    comp = comparisons(tables)
    written = [out / "tetris_final.csv", out / "tetris_comparisons.csv", out / "tetris.md"]
    final.to_csv(written[0], index=False, float_format="%.6g")
    comp.to_csv(written[1], index=False, float_format="%.6g")
    written[2].write_text(summary(experiment.name, final, comp, height))
    written.append(plot(curve_by_variant, height, out / "tetris_curves.png"))
    return written


def summary(name: str, final: pd.DataFrame, comp: pd.DataFrame, height: int) -> str:
    """The tables of ``tetris.md``."""
    lines = [f"# {name}: mean lines per game over the units (95% t-intervals)", "",
             "| variant | scheme | units | last iteration | best iteration (k) | memory | "
             "samples per iteration |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in final.to_dict("records"):
        lines.append(f"| {r['variant']} | {r['scheme']} | {r['units']} | "
                     f"{_ci(r['final'], r['final_low'], r['final_high'])} | "
                     f"{_ci(r['best'], r['best_low'], r['best_high'])} ({r['best_iteration']}) "
                     f"| {r['memory']:.0f} | {r['samples_per_iteration']:,.0f} |")
    published = PUBLISHED.get(height)
    lines += ["", ("Published: " + "; ".join(f"{k} {v:,}" for k, v in published.items())
                   + " (100 runs each).") if published else
              f"No published figures for a board {height} high.", ""]
    if len(comp):
        sig = comp[comp["significant"]]
        lines += [f"Pairs of schemes at the last iteration, paired by unit, Holm over all "
                  f"{len(comp)} pairs: {len(sig)} significant at 5%.", "",
                  "| variant | a | b | a - b (95% t) | p (t) | p (Wilcoxon) | p (Holm) | better |",
                  "|---|---|---|---:|---:|---:|---:|---|"]
        for c in comp.sort_values("p_holm").to_dict("records"):
            lines.append(f"| {c['variant']} | {c['a']} | {c['b']} | "
                         f"{_ci(c['diff'], c['low'], c['high'])} | {c['p_t']:.3g} | "
                         f"{c['p_wilcoxon']:.3g} | {c['p_holm']:.3g} | {c['better']} |")
    return "\n".join(lines) + "\n"


def _ci(mean: Any, low: Any, high: Any) -> str:
    return f"{mean:,.0f} [{low:,.0f}, {high:,.0f}]"
