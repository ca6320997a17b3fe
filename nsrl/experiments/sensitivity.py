"""How section 5's observations depend on what the paper leaves unsaid: one sweep per reading.

``nsrl reproduce --preset sensitivity --out DIR`` runs :data:`BASE` (a reduced protocol: all 27
Garnet instances, a few MDPs and runs, 100 iterations, the eight schemes) once per reading of
:data:`READINGS` into ``DIR/<reading>/`` (each an ordinary, resumable results folder), then
writes ``DIR/sensitivity.md`` and ``DIR/sensitivity.csv``: one row per reading with the
verdict of every observation (:mod:`nsrl.experiments.observations`), each scheme's final mean
loss, the two spread statistics and CPI+'s stopping fractions.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import Final, observations
from nsrl.experiments.presets import Sweep
from nsrl.experiments.report import balanced, load_per_mdp, markdown

# The reduced protocol: 27 instances x 6 MDPs x 5 runs x 8 schemes x 100 iterations.
BASE = Sweep(name="sensitivity", n_mdps=6, n_runs=5)

# Each reading changes the paper's default reading (docs/decisions.md) in the named fields.
READINGS: dict[str, dict] = {
    "default": {},
    "no-noise": {"noise": 0.0},
    "absolute-noise": {"noise_model": "absolute"},
    "span-noise": {"noise_model": "span"},
    "constant-feature": {"constant_feature": True},
    "exact-advantage": {"cpi_advantage": "exact"},
    "epsilon-0.01": {"cpi_epsilon": 0.01},
    "largest-improving": {"line_search": "largest-improving"},
    "doubling": {"line_search": "doubling"},
    "estimated-scores": {"line_search_scores": "estimated"},
    "exact-advantage+doubling": {"cpi_advantage": "exact", "line_search": "doubling"},
    "exact-advantage+estimated-scores": {"cpi_advantage": "exact",
                                         "line_search_scores": "estimated"},
    "constant-feature+exact-advantage": {"constant_feature": True, "cpi_advantage": "exact"},
}


def sweeps(base: Sweep | None = None, readings: dict | None = None) -> dict[str, Sweep]:
    """The sweep of every reading (name -> Sweep), all sharing ``base``'s protocol and seed."""
    base = BASE if base is None else base
    readings = READINGS if readings is None else readings
    return {name: dataclasses.replace(base, name=f"{base.name}-{name}", **change)
            for name, change in readings.items()}


def summarise(out, readings: dict | None = None) -> pd.DataFrame:
    """The combined table of a sensitivity folder: one row per reading found in ``out``."""
    rows = []
    for name in (READINGS if readings is None else readings):
        folder = Path(out) / name
        if not (folder / "manifest.json").exists():
            continue
        sweep, pm, _ = load_per_mdp(folder)
        pm, _ = balanced(pm, sweep)
        rows.append(_row(name, pm))
    if not rows:
        raise ValueError(f"{out} holds no reading of the sensitivity study yet: run "
                         f"`nsrl reproduce --preset sensitivity --out {out}` first.")
    return pd.DataFrame(rows).set_index("reading")


def _row(name: str, pm: pd.DataFrame) -> dict:
    obs = observations(pm)
    f = Final(pm)
    row: dict = {"reading": name, "held": int((obs["holds"] == True).sum())}  # noqa: E712
    row.update({k: _mark(v) for k, v in zip(obs["observation"], obs["holds"], strict=True)})
    for scheme in f.mean.columns:
        row[f"mean {scheme}"] = f.avg(scheme)
    row["Std[E] (mean over schemes)"] = float(f.mean.std(ddof=0).mean())
    row["E[Std] (mean over schemes)"] = float(f.std.mean().mean())
    if f.stopped is not None:
        for k in (1, 10, 20):
            if ("CPI+", k) in f.stopped.index:
                row[f"CPI+ stopped k={k}"] = float(f.stopped.loc[("CPI+", k), "stopped"])
    return row


def _mark(holds) -> str:
    return "n/a" if holds is None or (isinstance(holds, float) and np.isnan(holds)) else (
        "yes" if holds else "no")


def write_summary(out, readings: dict | None = None) -> list[Path]:
    """Write ``sensitivity.csv`` and ``sensitivity.md`` in ``out``; returns their paths."""
    out = Path(out)
    table = summarise(out, readings)
    table.to_csv(out / "sensitivity.csv")
    verdicts = table[["held", "O1", "O2", "O3", "O4", "O5", "O6", "C"]]
    means = table[[c for c in table.columns if c.startswith("mean ")]].rename(
        columns=lambda c: c[5:])
    spread = table[[c for c in table.columns if c.startswith(("Std[E]", "E[Std]", "CPI+"))]]
    base = BASE
    text = "\n".join([
        f"# Sensitivity of section 5's observations ({base.n_mdps} MDPs x {base.n_runs} runs "
        f"per instance of n_S in {list(base.n_states)}, n_A in {list(base.n_actions)}, b in "
        f"{list(base.branching)}; {base.n_iterations} iterations)", "",
        "## Which observations hold under each reading", "", markdown(verdicts), "",
        "## Final mean loss of each scheme", "", markdown(means, ".2f"), "",
        "## Spread and CPI+'s stopping rule", "", markdown(spread, ".2f"), ""])
    (out / "sensitivity.md").write_text(text)
    return [out / "sensitivity.csv", out / "sensitivity.md"]
