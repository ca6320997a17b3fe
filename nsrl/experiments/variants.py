"""The combined table of an experiment's variants (sensitivity, sampled), from their folders.

One row per variant found in ``OUT`` (an experiment with variants writes each into
``OUT/<variant>/``; :mod:`nsrl.experiments.experiment`): the verdict of every section-5
observation (:mod:`nsrl.experiments.observations`), each scheme's final mean loss (or, on a
domain without a model, its Monte-Carlo score, ranked by the score's direction), the spread
statistics, CPI+'s stopping fractions and, for sample-based variants, transitions and greedy
errors (measured with the model, so none without one). :func:`write_summary` writes it as
``OUT/<name>.csv`` and ``OUT/<name>.md``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import Final, observations
from nsrl.experiments.quality import LOSS, Quality
from nsrl.experiments.report import balanced, load_per_mdp, markdown


def summarise(out, experiment) -> pd.DataFrame:
    """The combined table of an experiment's folder: one row per variant found in ``out``."""
    rows = []
    for name in experiment.variants:
        folder = Path(out) / name
        if not (folder / "manifest.json").exists():
            continue
        sweep, pm, _ = load_per_mdp(folder)
        pm, _ = balanced(pm, sweep)
        rows.append(_row(name, pm, sweep.quality))
    if not rows:
        raise ValueError(f"{out} holds no variant of the {experiment.name} experiment yet: run "
                         f"`nsrl reproduce --preset {experiment.name} --out {out}` first.")
    return pd.DataFrame(rows).set_index("variant")


def _row(name: str, pm: pd.DataFrame, quality: Quality = LOSS) -> dict:
    obs = observations(pm, quality=quality)
    f = Final(pm, quality=quality)
    row: dict = {"variant": name, "held": int((obs["holds"] == True).sum())}  # noqa: E712
    row.update({k: _mark(v) for k, v in zip(obs["observation"], obs["holds"], strict=True)})
    for scheme in f.mean.columns:
        row[f"mean {scheme}"] = f.avg(scheme)
    row["Std[E] (mean over schemes)"] = float(f.mean.std(ddof=0).mean())
    row["E[Std] (mean over schemes)"] = float(f.std.mean().mean())
    if f.stopped is not None:
        for k in (1, 10, 20):
            if ("CPI+", k) in f.stopped.index:
                # pandas-stubs types a cell as any scalar pandas holds (dates too)
                row[f"CPI+ stopped k={k}"] = float(f.stopped.loc[("CPI+", k), "stopped"])  # type: ignore[arg-type]
    if "samples" in pm.columns:
        last = f.pm.groupby("scheme")
        for scheme, s in last:
            row[f"transitions {scheme}"] = float(s["samples"].mean())
            if "error" in pm.columns:  # measured with the model
                row[f"error {scheme}"] = float(pm[pm["scheme"] == scheme]["error"].mean())
    return row


def _mark(holds) -> str:
    return "n/a" if holds is None or (isinstance(holds, float) and np.isnan(holds)) else (
        "yes" if holds else "no")


def _columns(table: pd.DataFrame, prefix: str) -> pd.DataFrame:
    return table[[c for c in table.columns if c.startswith(prefix)]].rename(
        columns=lambda c: c[len(prefix):])


def write_summary(out, experiment, figures=()) -> list[Path]:
    """Write ``<name>.csv`` and ``<name>.md`` in ``out``; returns their paths.

    Args:
        out: the experiment's folder.
        experiment: the :class:`~nsrl.experiments.experiment.Experiment`.
        figures: ``figure(out, experiment) -> Path`` functions whose figures the summary shows.
    """
    out = Path(out)
    table = summarise(out, experiment)
    table.to_csv(out / f"{experiment.name}.csv")
    base = experiment.base
    verdicts = table[["held", "O1", "O2", "O3", "O4", "O5", "O6", "C"]]
    means = _columns(table, "mean ")
    q = base.quality
    ranks = means.rank(axis=1, method="min", ascending=not q.higher).astype(int)
    spread = table[[c for c in table.columns if c.startswith(("Std[E]", "E[Std]", "CPI+"))]]
    grid = (f"n_S in {list(base.n_states)}, n_A in {list(base.n_actions)}, b in "
            f"{list(base.branching)}") if q.exact else \
        ", ".join(f"{k} in {list(v)}" for k, v in base.grid) or "one instance"
    lines = [
        f"# {experiment.question}", "",
        f"{base.n_mdps} {'MDPs' if q.exact else 'replicates'} x {base.n_runs} runs per instance "
        f"of {grid}; {base.n_iterations} iterations; variants in `DIR/<variant>/`.", "",
        "## Which observations hold in each variant", "", markdown(verdicts), "",
        f"## Final mean {q.name} of each scheme", "", markdown(means, ".2f"), "",
        f"## Rank of each scheme (1: {'lowest' if not q.higher else 'highest'} final {q.name})",
        "", markdown(ranks), "",
        "## Spread and CPI+'s stopping rule", "", markdown(spread, ".2f"), ""]
    written = [out / f"{experiment.name}.csv", out / f"{experiment.name}.md"]
    if any(c.startswith("error ") for c in table.columns):
        lines += ["## Transitions drawn by the end, and mean greedy error per call", "",
                  markdown(_columns(table, "transitions ").dropna(how="all"), ".3g"), "",
                  markdown(_columns(table, "error ").dropna(how="all"), ".3g"), ""]
    elif any(c.startswith("transitions ") for c in table.columns):  # no model: no greedy error
        lines += ["## Transitions drawn by the end", "",
                  markdown(_columns(table, "transitions ").dropna(how="all"), ".3g"), ""]
    for figure in figures:
        written.append(figure(out, experiment))
        lines += [f"![{written[-1].stem.replace('_', ' ')}]({written[-1].name})", ""]
    written[1].write_text("\n".join(lines))
    return written
