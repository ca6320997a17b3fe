"""The Markdown blocks docs/fidelity.md shows, from the sensitivity study's stored tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nsrl.experiments.report import markdown
from nsrl.experiments.sensitivity.analysis import verdict_table


def blocks(folder) -> dict[str, str]:
    """The Markdown blocks a page shows, rendered from ``folder/sensitivity.csv``."""
    table = pd.read_csv(Path(folder) / "sensitivity.csv", index_col="variant")
    means = table[[c for c in table.columns if c.startswith("mean ")]].rename(
        columns=lambda c: c[5:])
    spread = table[[c for c in table.columns if c.startswith(("Std[E]", "E[Std]", "CPI+"))]]
    robust = pd.read_csv(Path(folder) / "robustness.csv", index_col=["variant", "observation"])
    out = {"verdicts": verdict_table(table), "means": markdown(means, ".2f"),
           "spread": markdown(spread, ".2f"), "robustness": robustness_table(robust)}
    cpu = Path(folder) / "cpu_seconds.csv"
    if cpu.exists():
        out["cpu"] = markdown(pd.read_csv(cpu, index_col="variant").astype(
            {"shards": int}), ".1f")
    search = Path(folder) / "calibration_search.csv"
    if search.exists():
        found = pd.read_csv(search).set_index("feature_law")
        out["search"] = markdown(found.assign(calibrated=found["calibrated"].map(
            {True: "yes", False: "no"})), ".2f")
    for name, path in (("search-p", "calibration_search_p.csv"),
                       ("search-confirm", "calibration_confirm.csv")):
        if (Path(folder) / path).exists():
            out.update(search_tables(pd.read_csv(Path(folder) / path), name))
    return out


def _cell(row) -> str:
    """``step / spread``, in bold when the setting is calibrated."""
    text = f"{row['step fraction']:.2f} / {row['relative spread']:.2f}"
    return f"**{text}**" if row["calibrated"] else text


def search_tables(found: pd.DataFrame, name: str) -> dict[str, str]:
    """A search over p (``calibration_search_p.csv`` or ``_confirm.csv``) as Markdown.

    ``name``: the settings at iota = 0.1, one row each, p / n_S across, cells "step kept /
    spread", bold when calibrated; ``name-noise``: the other amplitudes, if any.
    """
    found = found.assign(cell=found.apply(_cell, axis=1),
                         constant_feature=found["constant_feature"].map({True: "yes",
                                                                        False: "no"}))
    setting = ["feature_law", "constant_feature", "noise_model"]
    paper = found[found["noise"] == 0.1]
    grid = paper.pivot(index=setting, columns="feature_fraction", values="cell")
    grid = grid.reindex(paper[setting].drop_duplicates().itertuples(index=False, name=None))
    grid.columns = [f"{f:.2g}" for f in grid.columns]
    grid.index = [" ".join(i) for i in grid.index]
    out = {name: markdown(grid.rename_axis("setting; then p / n_S:"))}
    other = found[found["noise"] != 0.1]
    if len(other):
        table = other.set_index("feature_fraction")[setting + ["noise", "cell"]]
        out[f"{name}-noise"] = markdown(table.rename(columns={"cell": "step kept / spread"}),
                                        "g")
    return out


def robustness_table(robust: pd.DataFrame) -> str:
    """Per reading and threshold, the observations that hold (``robustness.csv``)."""
    held = {}
    for variant, part in robust.groupby(level="variant", sort=False):
        part = part.droplevel("variant")
        held[variant] = {c: " ".join(part.index[part[c] == True]) or "none"  # noqa: E712
                         for c in part.columns if c != "robust"}
    return markdown(pd.DataFrame(held).T.rename_axis("reading"))
