"""Sweeps on the structured domains and the ``bigger`` family (tiny sizes)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from nsrl.cli import main
from nsrl.domains import FEATURE_MAPS, side
from nsrl.experiments import registry
from nsrl.experiments.bigger.analysis import analyse
from nsrl.experiments.experiment import Experiment
from nsrl.experiments.report import load_per_mdp
from nsrl.experiments.shards import Shard
from nsrl.experiments.sweep import Sweep
from nsrl.greedy.feature_maps import KINDS

GRID = dict(domain="gridworld", n_states=(36,), n_actions=(4,), branching=(4,), n_mdps=2,
            n_runs=1, n_iterations=3, n_features=9, budget=600, engine="reference",
            schemes=("api", "cpi+", "psdp"))


def test_the_feature_maps_a_sweep_names_are_the_library_s():
    assert FEATURE_MAPS == KINDS


def test_a_domain_sweep_builds_the_family_s_model_with_phi_of_the_coordinates():
    sweep = Sweep(**GRID)
    a, b = (sweep.model(Shard(36, 4, 4, i)) for i in (0, 1))
    assert a.n_actions == 4 and a.features.shape[1] == 9 and a != b  # seeded per MDP
    assert sweep.model(Shard(36, 4, 4, 0)) == a  # derived seeds: same MDP every time
    car = dataclasses.replace(sweep, domain="mountain-car", n_actions=(3,), branching=(3,),
                              n_states=(100_000,), feature_map="tiles")
    assert side(100_000) == 316
    small = dataclasses.replace(car, n_states=(49,))
    mdp = small.model(Shard(49, 3, 3, 0))
    assert mdp.n_states == 49 and np.allclose(mdp.features.sum(axis=1), 4)  # 4 tilings
    assert car.budget_for(Shard(100_000, 3, 3, 0)) == 600


@pytest.mark.parametrize(("change", "match"), [
    ({"n_actions": (2,)}, r"gridworld models have n_actions = \[4\]"),
    ({"domain": "mountain-car"}, r"n_actions = \[3\]"),
    ({"feature_map": "fourier"}, "feature_map"),
    ({"budget": 0}, "budget"),
    ({"engine": "fast"}, "engine"),
])
def test_a_domain_sweep_that_makes_no_sense_is_refused(change, match):
    with pytest.raises(ValueError, match=match):
        Sweep(**{**GRID, **change})


def test_the_cli_refuses_a_bad_domain_preset_with_status_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('domain = "gridworld"\nn_states = [36]\nn_actions = [2]\n')
    assert main(["reproduce", "--preset", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "n_actions = [4]" in capsys.readouterr().err


def test_garnet_sweeps_keep_their_fingerprints():
    # the new fields enter the fingerprint only away from their defaults
    assert Sweep().fingerprint() == Sweep(domain="garnet", feature_map="rbf",
                                          engine="auto").fingerprint()
    assert Sweep(engine="reference").fingerprint() != Sweep().fingerprint()


def test_the_bigger_family_runs_every_operator_on_both_domains(tmp_path, monkeypatch):
    family = registry.EXPERIMENTS["bigger"]
    base = dataclasses.replace(family.base, **GRID)
    variants = {k: {**v, **({"n_states": (49,)} if k.startswith("car") else {})}
                for k, v in family.variants.items() if k.endswith(("exact", "lstdq"))
                or k == "car-projected"}
    registry.register_experiment(Experiment(
        "bigger", base, variants, family.question, analyse), replace=True)
    out = tmp_path / "bigger"
    assert main(["reproduce", "--preset", "bigger", "--out", str(out), "--backend",
                 "sequential"]) == 0
    table = pd.read_csv(out / "bigger.csv", index_col="variant")
    assert list(table.index) == list(variants)
    gap = pd.read_csv(out / "bigger_gap.csv")
    assert {"gap lstdq", "gap projected"} <= set(gap.columns)
    assert len(gap) == 2 * 3  # (domain, size) x scheme
    # API with the exact operator is policy iteration: its loss never increases
    _, pm, _ = load_per_mdp(out / "grid-exact")
    api = pm[pm["scheme"] == "API"].pivot_table(index="mdp", columns="iteration", values="mean")
    assert (np.diff(api.to_numpy(), axis=1) <= 1e-9).all()
    sweep, pm, _ = load_per_mdp(out / "car-lstdq")
    assert sweep.domain.name == "mountain-car" and (pm["samples"] <= 3 * 600).all()
    assert "Section 5's observations" in (out / "grid-exact" / "summary.md").read_text()


def test_an_uncertified_occupancy_leaves_the_greedy_error_nan_not_the_run(monkeypatch):
    import nsrl
    from nsrl.exact.iterative import NotCertifiedError
    from nsrl.schemes import base

    def refuse(mdp, rho):
        raise NotCertifiedError("stopped above the tolerance")

    mdp = nsrl.mountain_car(6, 6)
    monkeypatch.setattr(base, "rho_array", refuse)
    hist = nsrl.run("cpi(0.1)", nsrl.ExactGreedy(mdp), 2, rng=np.random.default_rng(0),
                    measure_errors=True)
    assert np.isnan(hist.errors).all() and np.isfinite(hist.losses).all()


@pytest.mark.parametrize("name", ["bigger", "bigger-powered"])
def test_every_bigger_variant_fits_a_laptop_by_the_memory_model(name):
    """LSTD-Q on p features keeps a p A x p A system, not the one-hot counts of n_S^2 A."""
    from nsrl.experiments.checks import shard_nbytes

    for variant, sweep in registry.EXPERIMENTS[name].sweeps().items():
        largest = max(sweep.shards(), key=lambda s: s.n_states or 0)
        assert shard_nbytes(sweep, largest) < 4 * 2**30, variant
