"""Families of sweeps (sensitivity, sampled): one resumable sweep per variant, one table."""

import dataclasses

import pandas as pd
import pytest

from nsrl.cli import main
from nsrl.experiments import registry
from nsrl.experiments.experiment import Experiment
from nsrl.experiments.report import load_per_mdp
from nsrl.experiments.sampled.analysis import analyse as sampled_analysis
from nsrl.experiments.sensitivity.analysis import analyse as sensitivity_analysis
from nsrl.experiments.sweep import Sweep

TINY = Sweep(name="sens", n_states=(20,), n_actions=(2,), branching=(1, 2), n_mdps=2, n_runs=2,
             n_iterations=6, schemes=("api", "cpi+", "psdp"))
READINGS = {"default": {}, "exact-advantage": {"scheme_options": {"advantage": "exact"}},
            "no-noise": {"operator_options": {"noise": 0.0}}}


def _named(change: dict) -> set:
    """The flat names a variant's change sets (its operator's and schemes' options by name)."""
    from nsrl.experiments.compat import SCHEME_FLAT

    flat = {option: key for key, option in SCHEME_FLAT.items()}
    names = set()
    for key, value in change.items():
        if key == "operator_options":
            names |= set(value)
        elif key == "scheme_options":
            names |= {flat.get(k, k) for k in value}
        elif key == "domain":  # another family: its own fixed axes come with it
            names |= {"domain", "n_actions", "branching"}
        elif key == "carried":
            names |= set(value)
        elif key == "operator":  # a name or a spec: the operator and its options
            # (another operator declares other options: their table changes with it)
            options = value.get("options", {}) if isinstance(value, dict) else {}
            names |= {"operator", "operator_options", *options}
        elif key == "schemes":  # specs: their names and the options they hold
            names |= {"schemes", "scheme_options"}
        else:
            names.add(key)
    return names


@pytest.mark.parametrize("family", [e for e in registry.EXPERIMENTS.values() if e.variants],
                         ids=lambda f: f.name)
def test_each_variant_differs_from_the_base_in_what_it_names_only(family):
    from nsrl.experiments.compat import beyond_flat, flat_view

    def view(sweep):
        return {**flat_view(sweep), **beyond_flat(sweep)}

    base = view(family.base)
    assert family.sweeps()  # a family with variants
    for name, sweep in family.sweeps().items():
        mine = view(sweep)
        diff = {k for k in set(base) | set(mine) if base.get(k) != mine.get(k)}
        change = family.variants[name]
        assert diff <= _named(change) and (bool(diff) or not change), name


def test_the_study_runs_every_reading_and_tabulates_them(tmp_path, monkeypatch, capsys):
    registry.register_experiment(Experiment(
        "sensitivity", TINY, READINGS, "readings", sensitivity_analysis), replace=True)
    out = tmp_path / "sens"
    code = main(["reproduce", "--preset", "sensitivity", "--out", str(out), "--backend",
                 "sequential", "--no-plot"])
    assert code == 0
    table = pd.read_csv(out / "sensitivity.csv", index_col="variant")
    assert list(table.index) == list(READINGS)
    assert {"held", "O1", "O5", "C", "mean API", "mean PSDP"} <= set(table.columns)
    assert "## Which observations hold in each variant" in capsys.readouterr().out
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


def test_the_sampled_family_compares_operators_on_one_protocol(tmp_path, monkeypatch, capsys):
    """Sample-based variants record transitions and greedy errors; the table and the figure
    put them beside the projected operator's."""
    variants = {"projected": {}, "lstdq-onehot": {"operator": "lstdq",
                                                  "features": "onehot"}}
    base = dataclasses.replace(TINY, name="sampled", samples_per_pair=20)
    registry.register_experiment(Experiment(
        "sampled", base, variants, "samples", sampled_analysis), replace=True)
    out = tmp_path / "sampled"
    assert main(["reproduce", "--preset", "sampled", "--out", str(out), "--backend",
                 "sequential"]) == 0
    table = pd.read_csv(out / "sampled.csv", index_col="variant")
    assert list(table.index) == ["projected", "lstdq-onehot"]
    assert table.loc["lstdq-onehot", "transitions API"] == 6 * 20 * 20 * 2
    assert table.loc["lstdq-onehot", "error PSDP"] >= 0
    assert (out / "sampled_loss_vs_samples.png").stat().st_size > 1000
    assert (out / "lstdq-onehot" / "loss_vs_samples.png").exists()
    assert "Samples and greedy errors" in (out / "lstdq-onehot" / "summary.md").read_text()


def test_every_experiment_is_loaded_from_python_as_from_the_command_line(tmp_path):
    from nsrl.experiments import load_experiment, load_sweep, run_experiment
    from nsrl.experiments.loader import experiment_of

    for name, entry in registry.EXPERIMENTS.items():
        experiment = entry.experiment
        assert load_experiment(name) is experiment and load_sweep(name) == experiment.base
    assert load_sweep("sensitivity/doubling").line_search == "doubling"
    with pytest.raises(ValueError, match="unknown variant 'triple'.*doubling"):
        load_sweep("sensitivity/triple")
    tiny = Experiment("tiny", TINY, {"a": {}, "b": {"operator_options": {"noise": 0.0}}},
                      "tiny", sensitivity_analysis)
    result = run_experiment(tiny, tmp_path, backend="sequential", progress=False)
    assert result["complete"] and (tmp_path / "tiny.md") in result["written"]
    assert (tmp_path / "a" / "summary.md").exists() and experiment_of(tmp_path) is None
