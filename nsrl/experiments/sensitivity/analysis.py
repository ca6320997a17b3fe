"""The sensitivity study's analysis: every table a function of two stored files.

:func:`analyse` (run by ``nsrl reproduce --preset sensitivity`` once every reading is
complete, and by ``nsrl plot DIR``) keeps, from each reading's results folder, the per-MDP
statistics the tables read (:data:`KEEP`) in ``per_mdp.csv``, with the exact losses of pi_0 and
of the exact greedy step on the same MDPs in ``reference_losses.csv``; then :func:`tables`
writes, from those two files alone:

* ``sensitivity.csv`` / ``.md``: per reading, the verdict of each observation, the
  calibration measures (:mod:`nsrl.experiments.sensitivity.calibration`), each scheme's final
  mean loss, the spreads and CPI+'s stopping fractions, and the verdicts that another threshold
  changes (:func:`nsrl.experiments.observations.robustness`);
* ``robustness.csv``: every verdict under every threshold;
* ``observations.csv``: every check with its measured figures (the default thresholds).

A reading that runs CPI+ alone (``sweep.SHARES``) takes the other schemes from the reading it
shares them with. ``python -m nsrl.experiments.sensitivity DIR`` rewrites the tables
from a folder's two files (e.g. the committed ``docs/sensitivity``); :func:`blocks` gives the
Markdown that ``python -m nsrl.docs`` puts in docs/fidelity.md. A reading added to the study
later is run alone (its own resumable folder, e.g. ``run_sweep(load_sweep(
"sensitivity/calibrated"), RESULTS)``) and joins the stored files with :func:`add_reading`
(``python -m nsrl.experiments.sensitivity DIR --add NAME RESULTS``), the others untouched.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import Final, flips, observations, robustness
from nsrl.experiments.report import NoIntactShard, balanced, load_per_mdp, markdown
from nsrl.experiments.sensitivity.calibration import measures, reference_losses
from nsrl.experiments.sensitivity.sweep import SHARES, SWEEP, VARIANTS

# The per-MDP rows the tables read: the final iteration of every scheme, API's first (the
# calibration's step fraction) and CPI+'s stopping fractions at k = 1, 10 and 20.
KEEP = {"API": (1,), "CPI+": (1, 10, 20)}
COLUMNS = ["variant", "n_states", "n_actions", "branching", "mdp", "scheme", "iteration",
           "mean", "std", "runs", "stopped"]
OBSERVATIONS = ["O1", "O2", "O3", "O4", "O5", "O6", "C"]
MDP_KEYS = ["n_states", "n_actions", "branching", "mdp"]


def analyse(out, experiment) -> list[Path]:
    """Store ``per_mdp.csv`` and ``reference_losses.csv`` in ``out``, then :func:`tables`."""
    out = Path(out)
    parts, cpu = [], {}
    for name in experiment.variants:
        folder = out / name
        if not (folder / "manifest.json").exists():
            continue
        try:
            sweep, pm, _ = load_per_mdp(folder)
        except NoIntactShard:
            continue
        pm, n_common = balanced(pm, sweep)
        if n_common:  # a partial reading counts once every instance has an MDP
            parts.append(kept(pm).assign(variant=name))
            cpu[name] = cpu_seconds(folder)
    if not parts:
        raise ValueError(f"{out} holds no reading of the sensitivity study yet: run `nsrl "
                         f"reproduce --preset sensitivity --out {out}` first.")
    pd.concat(parts)[COLUMNS].to_csv(out / "per_mdp.csv", index=False, float_format="%.6g")
    pd.DataFrame(cpu, index=["shards", "CPU s"]).T.rename_axis("variant").to_csv(
        out / "cpu_seconds.csv", float_format="%.1f")
    reference = out / "reference_losses.csv"
    if not reference.exists():
        reference_losses(experiment.base).to_csv(reference, index=False, float_format="%.8g")
    return [out / "per_mdp.csv", reference] + tables(out, experiment.base, experiment.name)


def add_reading(folder, name: str, results) -> list[Path]:
    """Add reading ``name``, computed alone in the results folder ``results``, to the study.

    Its kept per-MDP rows (:func:`kept`) replace any of the same name in ``folder/per_mdp.csv``
    and its CPU seconds its line of ``cpu_seconds.csv``, both in the order of :data:`VARIANTS`;
    then :func:`tables` rewrites every table. The instances (and ``reference_losses.csv``)
    are the study's: a reading changes the operator or the features, never the MDPs.

    Raises:
        ValueError: ``name`` is not a reading of the study, ``results`` holds another sweep
            than that reading's, or it is not complete.
    """
    import dataclasses

    from nsrl.experiments.storage import read_manifest

    folder, results = Path(folder), Path(results)
    if name not in VARIANTS:
        raise ValueError(f"{name!r} is not a reading of the sensitivity study; add it to "
                         f"VARIANTS in nsrl/experiments/sensitivity/sweep.py first (readings: "
                         f"{', '.join(VARIANTS)}).")
    want = dataclasses.replace(SWEEP, name=f"sensitivity-{name}", **VARIANTS[name])
    _, found = read_manifest(results) if (results / "manifest.json").is_file() else (None, None)
    if found is None or found.fingerprint() != want.fingerprint():
        raise ValueError(f"{results} does not hold the reading {name!r} (its manifest describes "
                         f"another sweep); run it with run_sweep(load_sweep('sensitivity/"
                         f"{name}'), {str(results)!r}).")
    sweep, pm, _ = load_per_mdp(results)
    pm, n_common = balanced(pm, sweep)
    if n_common < sweep.n_mdps:
        raise ValueError(f"{results} has {n_common} of the {sweep.n_mdps} MDPs of every "
                         f"instance; finish it (run_sweep(..., resume=True)) before adding it.")
    order = {v: i for i, v in enumerate(VARIANTS)}
    stored = pd.read_csv(folder / "per_mdp.csv")
    rows = pd.concat([stored[stored["variant"] != name], kept(pm).assign(variant=name)[COLUMNS]])
    rows = rows.sort_values("variant", key=lambda v: v.map(order), kind="stable")
    rows.to_csv(folder / "per_mdp.csv", index=False, float_format="%.6g")
    cpu = pd.read_csv(folder / "cpu_seconds.csv", index_col="variant")
    cpu.loc[name] = cpu_seconds(results)
    cpu = cpu.sort_index(key=lambda v: v.map(order))
    cpu.to_csv(folder / "cpu_seconds.csv", float_format="%.1f")
    return [folder / "per_mdp.csv", folder / "cpu_seconds.csv"] + tables(folder)


def cpu_seconds(folder) -> tuple[int, float]:
    """(shards, worker CPU seconds) recorded in ``folder/sessions.jsonl``, each shard once."""
    seen: dict[str, float] = {}
    path = Path(folder) / "sessions.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill mid-write
        if record.get("event") == "shard" and "cpu_seconds" in record:
            seen.setdefault(record["shard"], record["cpu_seconds"])
    return len(seen), float(sum(seen.values()))


def kept(pm: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``pm`` that the tables read (:data:`KEEP`)."""
    last = pm["iteration"] == pm["iteration"].max()
    extra = np.zeros(len(pm), dtype=bool)
    for scheme, ks in KEEP.items():
        extra |= (pm["scheme"] == scheme) & pm["iteration"].isin(ks)
    out = pm[last | extra].copy()
    if "stopped" not in out.columns:
        out["stopped"] = 0.0
    return out


def readings(folder) -> dict[str, pd.DataFrame]:
    """Reading -> its per-MDP rows from ``folder/per_mdp.csv``, shared schemes filled in.

    Readings come in the file's order; one that lacks schemes (it runs CPI+ alone) takes them
    from the reading ``SHARES`` names (``default`` unless it says otherwise).
    """
    table = pd.read_csv(Path(folder) / "per_mdp.csv")
    found = {name: table[table["variant"] == name].drop(columns="variant")
             for name in table["variant"].unique()}
    out = {}
    for name, pm in found.items():
        base = SHARES.get(name, "default")
        if base in found and name != base and \
                set(found[base]["scheme"]) - set(pm["scheme"]):
            other = found[base][~found[base]["scheme"].isin(pm["scheme"].unique())]
            mdps = pm[MDP_KEYS].drop_duplicates()  # a partial reading: its MDPs only
            pm = pd.concat([other.merge(mdps, on=MDP_KEYS), pm], ignore_index=True)
        elif name in SHARES and SHARES[name] not in found:
            continue  # the reading it shares its other schemes with is not run yet
        out[name] = pm
    restricted = same_mdps(out)
    first = {k: out[k] for k in ("default",) if k in out}
    return first | restricted | {k: v for k, v in out.items() if k != "default"}


def same_mdps(pms: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """``default`` on the MDPs of each partial reading, to compare like with like.

    A reading run on fewer MDPs than ``default`` (an interrupted run) gets a row
    ``default (N MDPs)``: the default reading restricted to those N MDPs.
    """
    if "default" not in pms:
        return {}
    full = pms["default"]
    n_full = len(full[MDP_KEYS].drop_duplicates())
    out = {}
    for pm in pms.values():
        mdps = pm[MDP_KEYS].drop_duplicates()
        if len(mdps) < n_full:
            out[f"default ({len(mdps)} MDPs)"] = full.merge(mdps, on=MDP_KEYS)
    return out


def row(name: str, pm: pd.DataFrame, reference: pd.DataFrame) -> dict:
    """One reading's line of ``sensitivity.csv``."""
    obs = observations(pm)
    f = Final(pm)
    out: dict = {"variant": name, "MDPs": len(f.mean),
                 "held": int((obs["holds"] == True).sum())}  # noqa: E712
    out.update({k: "yes" if v else "no" for k, v in zip(obs["observation"], obs["holds"],
                                                           strict=True)})
    if "API" in f.mean.columns:
        out.update(measures(pm, reference))
        out["calibrated"] = "yes" if out["calibrated"] else "no"
    out["verdicts that a threshold changes"] = flips(robustness(pm))
    for scheme in f.mean.columns:
        out[f"mean {scheme}"] = f.avg(scheme)
    out["Std[E] (mean over schemes)"] = float(f.mean.std(ddof=0).mean())
    out["E[Std] (mean over schemes)"] = float(f.std.mean().mean())
    for k in KEEP["CPI+"]:
        if f.stopped is not None and ("CPI+", k) in f.stopped.index:
            # pandas-stubs types a cell as any scalar pandas holds (dates too)
            out[f"CPI+ stopped k={k}"] = float(f.stopped.loc[("CPI+", k), "stopped"])  # type: ignore[arg-type]
    return out


def tables(folder, base=SWEEP, name: str = "sensitivity") -> list[Path]:
    """Write ``<name>.csv``, ``<name>.md`` and ``robustness.csv`` in ``folder``.

    ``base`` is the study's protocol (for the page's first line), ``name`` the experiment's.
    """
    folder = Path(folder)
    reference = pd.read_csv(folder / "reference_losses.csv")
    pms = readings(folder)
    table = pd.DataFrame([row(n, pm, reference) for n, pm in pms.items()]).set_index("variant")
    table.to_csv(folder / f"{name}.csv", float_format="%.4f")
    robust = pd.concat({n: robustness(pm) for n, pm in pms.items()}, names=["variant"])
    robust.to_csv(folder / "robustness.csv")
    checks = pd.concat({n: observations(pm).set_index("observation") for n, pm in pms.items()},
                       names=["variant"])
    checks.to_csv(folder / "observations.csv")
    (folder / f"{name}.md").write_text(markdown_page(table, base))
    return [folder / f"{name}.csv", folder / f"{name}.md", folder / "robustness.csv",
            folder / "observations.csv"]


def verdict_table(table: pd.DataFrame) -> str:
    """Verdicts, calibration measures and the threshold-sensitive verdicts, as Markdown."""
    cols = ["MDPs", "held", *OBSERVATIONS, "step fraction", "relative spread", "calibrated",
            "verdicts that a threshold changes"]
    shown = table[[c for c in cols if c in table.columns]].rename(
        columns={"step fraction": "step kept", "relative spread": "spread"})
    return markdown(shown, ".2f")


def markdown_page(table: pd.DataFrame, base=SWEEP) -> str:
    """``sensitivity.md``: every table of the study."""
    means = table[[c for c in table.columns if c.startswith("mean ")]].rename(
        columns=lambda c: c[5:])
    spread = table[[c for c in table.columns if c.startswith(("Std[E]", "E[Std]", "CPI+"))]]
    return "\n".join([
        "# How section 5's observations depend on the readings of what the paper leaves "
        "unsaid", "",
        f"{base.n_mdps} MDPs x {base.n_runs} runs per instance of n_S in "
        f"{list(base.n_states)}, n_A in {list(base.n_actions)}, b in {list(base.branching)}; "
        f"{base.n_iterations} iterations; readings in `DIR/<variant>/`.", "",
        "## Which observations hold in each variant", "",
        "With the calibration measures (step kept, spread) and the verdicts that another "
        "threshold changes.", "", verdict_table(table), "",
        "## Final mean loss of each scheme", "", markdown(means, ".2f"), "",
        "## Spread and CPI+'s stopping rule", "", markdown(spread, ".2f"), ""])


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
    grid = grid.reindex(list(paper[setting].drop_duplicates().itertuples(index=False, name=None)))
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
