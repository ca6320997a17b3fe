"""`nsrl run --operator <sample-based>` and `nsrl compare`: outputs, counts, errors."""

import json
import sys

import numpy as np
import pandas as pd
import pytest

import nsrl
from nsrl.cli import main
from nsrl.experiments import compare


def test_run_json_reports_cumulative_samples(capsys):
    code = main(["run", "--scheme", "api", "--garnet", "12,2,2", "--operator", "rollout-csc",
                 "--samples", "800", "--iterations", "3", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["operator"] == "rollout-csc" and len(out["samples"]) == 3
    # Geometric horizon: each call uses about 800 transitions (expected 1/(1-gamma) each).
    assert np.all(np.diff([0] + out["samples"]) > 0)
    assert 3 * 800 / 3 < out["samples"][-1] < 3 * 800 * 3


@pytest.mark.parametrize("op", ["rollout-reg", "lstdq"])
def test_run_with_each_sample_operator(op, capsys):
    code = main(["run", "--scheme", "nspi(2)", "--garnet", "12,2,2", "--operator", op,
                 "--samples", "1000", "--iterations", "2", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["samples"][-1] > 0 and all(np.isfinite(out["losses"]))


def test_budget_too_small_is_a_usage_error(capsys):
    code = main(["run", "--scheme", "api", "--garnet", "12,2,2", "--operator", "rollout-csc",
                 "--samples", "5"])
    assert code == 2
    assert "too small" in capsys.readouterr().err


def test_compare_writes_table_and_figure(tmp_path, capsys):
    code = main(["compare", "--garnet", "10,2,2", "--schemes", "api,api(0.5)", "--operators",
                 "rollout-csc,exact", "--budget", "3000", "--seeds", "2", "--iterations", "3",
                 "--out", str(tmp_path)])
    assert code == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    assert (tmp_path / "compare.png").stat().st_size > 1000
    assert set(df.learner) == {"api/rollout-csc", "api(0.5)/rollout-csc", "api/exact",
                               "api(0.5)/exact"}
    assert set(df.seed) == {0, 1} and (df.loss >= -1e-9).all()
    exact = df[df.learner == "api/exact"]
    assert (exact.samples == 0).all() and np.allclose(exact.loss, 0.0)  # exact PI converges
    sampled = df[df.learner == "api/rollout-csc"]
    assert (sampled.samples > 0).all()


def test_learner_checkpoints_stop_at_the_budget(monkeypatch):
    mdp = nsrl.garnet(10, 2, 2, seed=0)
    learner = compare.scheme_learner("api(0.1)", "rollout-reg", iterations=40)
    points = learner(mdp, 8000, 0)  # fixed-length rollouts: at most 8000 // 40 per call
    samples = [s for s, _ in points]
    assert samples == sorted(samples) and len(points) == 40
    assert 0.95 * 8000 <= samples[-1] <= 8000
    # An operator that spends three times its share is stopped once the budget is used.
    original = compare.sample_operator
    monkeypatch.setattr(compare, "sample_operator",
                        lambda name, mdp, samples, **kw: original(name, mdp, 3 * samples, **kw))
    samples = [s for s, _ in learner(mdp, 8000, 0)]
    assert samples == sorted(samples) and 10 < len(samples) < 20
    assert samples[-1] >= 8000 and samples[-2] < 8000


def test_registered_learners_run_beside_schemes(monkeypatch, tmp_path):
    def constant_learner(mdp, budget, seed):
        return [(budget, nsrl.constant(seed % mdp.n_actions))]

    monkeypatch.setitem(compare.LEARNERS, "const", constant_learner)
    df = compare.compare(nsrl.garnet(8, 2, 2, seed=0), {"const": constant_learner}, 100, [0, 1])
    assert df.samples.tolist() == [100, 100]
    assert df.loss.tolist() == [nsrl.loss(nsrl.garnet(8, 2, 2, seed=0), nsrl.constant(s))
                                for s in (0, 1)]


def test_sb3_missing_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "nsrl.sb3.learners", None)  # import fails
    monkeypatch.setitem(sys.modules, "nsrl.sb3", None)
    code = main(["compare", "--garnet", "8,2,2", "--schemes", "api", "--operators", "exact",
                 "--budget", "100", "--seeds", "1", "--sb3", "ppo", "--out", str(tmp_path)])
    assert code == 2
    assert "SB3 learners need Stable-Baselines3" in capsys.readouterr().err


def test_bad_names_are_refused(tmp_path, capsys):
    code = main(["compare", "--garnet", "8,2,2", "--schemes", "api", "--operators", "magic",
                 "--budget", "100", "--out", str(tmp_path)])
    assert code == 2 and "unknown operator 'magic'" in capsys.readouterr().err


def test_fixed_horizon_budget_is_spent_exactly(tmp_path):
    code = main(["compare", "--garnet", "10,2,2", "--schemes", "api", "--operators",
                 "rollout-reg", "--representation", "onehot", "--horizon", "5", "--budget",
                 "3000", "--seeds", "1", "--iterations", "3", "--out", str(tmp_path)])
    assert code == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    # 1000 per call = 100 states x 2 actions x 1 rollout x 5 transitions, exactly.
    assert df.samples.tolist() == [1000, 2000, 3000]


def test_sb3_learners_are_loaded_from_their_module(monkeypatch, tmp_path):
    import types

    def fake(mdp, budget, seed):
        return [(budget // 2, nsrl.constant(0)), (budget, nsrl.constant(1))]

    monkeypatch.setitem(sys.modules, "nsrl.sb3.learners", types.SimpleNamespace(
        LEARNERS={"fake": fake}))
    monkeypatch.setattr(compare, "LEARNERS", {})
    code = main(["compare", "--garnet", "8,2,2", "--schemes", "api", "--operators", "exact",
                 "--budget", "100", "--seeds", "2", "--sb3", "fake", "--out", str(tmp_path)])
    assert code == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    assert df[df.learner == "fake"].samples.tolist() == [50, 100, 50, 100]
