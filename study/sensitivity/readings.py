"""A reading computed alone joins the sensitivity study's stored files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nsrl.experiments.report import balanced, load_per_mdp
from nsrl.experiments.sensitivity.analysis import COLUMNS, cpu_seconds, kept, tables
from nsrl.experiments.sensitivity.sweep import SWEEP, VARIANTS
from nsrl.experiments.storage import read_manifest


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
    folder, results = Path(folder), Path(results)
    if name not in VARIANTS:
        raise ValueError(f"{name!r} is not a reading of the sensitivity study; add it to "
                         f"VARIANTS in nsrl/experiments/sensitivity/sweep.py first (readings: "
                         f"{', '.join(VARIANTS)}).")
    want = SWEEP.replace(name=f"sensitivity-{name}", **VARIANTS[name])
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
