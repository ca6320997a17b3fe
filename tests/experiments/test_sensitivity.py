"""The sensitivity study: one resumable sweep per reading, and the combined table."""

import dataclasses

import pandas as pd

from nsrl.cli import main
from nsrl.experiments import sensitivity
from nsrl.experiments.presets import Sweep
from nsrl.experiments.report import load_per_mdp

TINY = Sweep(name="sens", n_states=(20,), n_actions=(2,), branching=(1, 2), n_mdps=2, n_runs=2,
             n_iterations=6, schemes=("api", "cpi+", "psdp"))
READINGS = {"default": {}, "exact-advantage": {"cpi_advantage": "exact"},
            "no-noise": {"noise": 0.0}}


def test_each_reading_differs_from_the_default_in_its_fields_only():
    family = sensitivity.sweeps()
    default = family["default"]
    for name, change in sensitivity.READINGS.items():
        s = family[name]
        diff = {f.name for f in dataclasses.fields(Sweep)
                if getattr(s, f.name) != getattr(default, f.name)} - {"name"}
        assert diff == set(change), name
    assert default.fingerprint() == dataclasses.replace(sensitivity.BASE).fingerprint()


def test_the_study_runs_every_reading_and_tabulates_them(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sensitivity, "BASE", TINY)
    monkeypatch.setattr(sensitivity, "READINGS", READINGS)
    out = tmp_path / "sens"
    code = main(["reproduce", "--preset", "sensitivity", "--out", str(out), "--backend",
                 "sequential", "--no-plot"])
    assert code == 0
    table = pd.read_csv(out / "sensitivity.csv", index_col="reading")
    assert list(table.index) == list(READINGS)
    assert {"held", "O1", "O5", "C", "mean API", "mean PSDP"} <= set(table.columns)
    assert "# Sensitivity of section 5's observations" in capsys.readouterr().out
    # each reading is an ordinary results folder, with the reading's options in its manifest
    sweep, pm, coverage = load_per_mdp(out / "exact-advantage")
    assert sweep.cpi_advantage == "exact" and coverage.intact == coverage.total == 4
    # the readings do change the results they should change
    cpi = {r: table.loc[r, "mean CPI+"] for r in READINGS}
    assert cpi["exact-advantage"] != cpi["default"] and cpi["no-noise"] != cpi["default"]
    assert table.loc["exact-advantage", "mean API"] == table.loc["default", "mean API"]
    # nsrl plot on the study's folder rewrites the combined table
    (out / "sensitivity.md").unlink()
    assert main(["plot", str(out)]) == 0 and (out / "sensitivity.md").exists()
