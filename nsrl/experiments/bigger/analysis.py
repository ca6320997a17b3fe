"""The bigger study's analysis: the variants' table, loss against transitions, gap to exact."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nsrl.experiments.report import load_per_mdp
from nsrl.experiments.sampled.analysis import loss_vs_samples
from nsrl.experiments.variants import write_summary


def analyse(out, experiment) -> list[Path]:
    """Write ``bigger.csv``, ``.md``, ``_loss_vs_samples.png`` and ``_gap.csv`` in ``out``."""
    written = write_summary(out, experiment, figures=[loss_vs_samples])
    gap = gap_to_exact(out, experiment)
    if gap is not None:
        path = Path(out) / f"{experiment.name}_gap.csv"
        gap.to_csv(path)
        written.append(path)
    return written


def final_losses(out, experiment) -> pd.DataFrame:
    """Final mean loss per variant, size and scheme, with pi_0's loss (iteration-0 free)."""
    rows = []
    for name in experiment.sweeps():
        folder = experiment.folder(out, name)
        if not (folder / "manifest.json").exists():
            continue
        _, pm, _ = load_per_mdp(folder)
        last = pm[pm["iteration"] == pm["iteration"].max()]
        table = last.groupby(["n_states", "scheme"])["mean"].mean().rename("loss").reset_index()
        rows.append(table.assign(variant=name))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def gap_to_exact(out, experiment) -> pd.DataFrame | None:
    """Each variant's final mean loss minus the exact operator's, per domain, size, scheme."""
    table = final_losses(out, experiment)
    if table.empty:
        return None
    table["domain"] = table["variant"].str.split("-").str[0]
    table["operator"] = table["variant"].str.split("-", n=1).str[1]
    wide = table.pivot_table(index=["domain", "n_states", "scheme"], columns="operator",
                             values="loss")
    if "exact" not in wide.columns:
        return wide
    return wide.sub(wide["exact"], axis=0).drop(columns="exact").add_prefix("gap ")
