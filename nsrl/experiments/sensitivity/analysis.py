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
shares them with.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from nsrl.experiments.observations import Final, flips, observations, robustness
from nsrl.experiments.report import NoIntactShard, balanced, load_per_mdp, markdown
from nsrl.experiments.sensitivity.calibration import measures, reference_losses
from nsrl.experiments.sensitivity.sweep import SHARES, SWEEP

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


def cpu_seconds(folder) -> tuple[int, float]:
    """(shards, worker CPU seconds) recorded in ``folder/sessions.jsonl``, each shard once."""
    seen = {}
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
            out[f"CPI+ stopped k={k}"] = float(f.stopped.loc[("CPI+", k), "stopped"])
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
