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
                 "--budget", "800", "--iterations", "3", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["operator"] == "rollout-csc" and len(out["samples"]) == 3
    # H = 30 rollouts in the first call, m = 1 then the critic: about 800 per call.
    assert np.all(np.diff([0] + out["samples"]) > 0)
    assert 3 * 800 / 3 < out["samples"][-1] < 3 * 800 * 3


@pytest.mark.parametrize("op", ["rollout-reg", "lstdq"])
def test_run_with_each_sample_operator(op, capsys):
    code = main(["run", "--scheme", "nspi(2)", "--garnet", "12,2,2", "--operator", op,
                 "--budget", "1000", "--iterations", "2", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["samples"][-1] > 0 and all(np.isfinite(out["losses"]))


def test_budget_too_small_is_a_usage_error(capsys):
    code = main(["run", "--scheme", "api", "--garnet", "12,2,2", "--operator", "rollout-csc",
                 "--budget", "5"])
    assert code == 2
    assert "too small" in capsys.readouterr().err


def test_compare_writes_table_and_figure(tmp_path, capsys):
    code = main(["compare", "--garnet", "10,2,2", "--schemes", "api,api(0.5)", "--operators",
                 "rollout-csc,exact", "--run-budget", "3000", "--seeds", "2", "--iterations", "3",
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
    original = compare.make_operator
    monkeypatch.setattr(compare, "make_operator", lambda name, mdp, budget, **kw: original(
        name, mdp, budget=3 * budget, **kw))
    samples = [s for s, _ in learner(mdp, 8000, 0)]
    assert samples == sorted(samples) and 10 < len(samples) < 20
    assert samples[-1] >= 8000 and samples[-2] < 8000


def test_registered_learners_run_beside_schemes(monkeypatch, tmp_path):
    def constant_learner(mdp, budget, seed):
        return [(budget, nsrl.constant(seed % mdp.n_actions))]

    from nsrl.experiments.learners import register_learner

    register_learner("const", constant_learner)
    assert compare.load_sb3(["const"]) == {"const": constant_learner}
    df = compare.compare(nsrl.garnet(8, 2, 2, seed=0), {"const": constant_learner}, 100, [0, 1])
    assert df.samples.tolist() == [100, 100]
    assert df.loss.tolist() == [nsrl.loss(nsrl.garnet(8, 2, 2, seed=0), nsrl.constant(s))
                                for s in (0, 1)]


def test_sb3_missing_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "nsrl.sb3.learners", None)  # import fails
    monkeypatch.setitem(sys.modules, "nsrl.sb3", None)
    code = main(["compare", "--garnet", "8,2,2", "--schemes", "api", "--operators", "exact",
                 "--run-budget", "100", "--seeds", "1", "--sb3", "ppo", "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "the learner 'ppo' needs a package that did not import" in err
    assert "pip install 'nsrl[sb3]'" in err


def test_bad_names_are_refused(tmp_path, capsys):
    code = main(["compare", "--garnet", "8,2,2", "--schemes", "api", "--operators", "magic",
                 "--run-budget", "100", "--out", str(tmp_path)])
    assert code == 2 and "unknown operator 'magic'" in capsys.readouterr().err


def test_fixed_horizon_budget_is_spent_exactly(tmp_path):
    code = main(["compare", "--garnet", "10,2,2", "--schemes", "api", "--operators",
                 "rollout-reg", "--features", "onehot", "--horizon", "5", "--run-budget",
                 "3000", "--seeds", "1", "--iterations", "3", "--out", str(tmp_path)])
    assert code == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    # 1000 per call = 100 states x 2 actions x 1 rollout x 5 transitions, exactly.
    assert df.samples.tolist() == [1000, 2000, 3000]


def test_a_registered_learner_by_module_path_is_loaded_when_used(monkeypatch, tmp_path):
    import types

    from nsrl.experiments.learners import register_learner

    def fake(mdp, budget, seed):
        return [(budget // 2, nsrl.constant(0)), (budget, nsrl.constant(1))]

    monkeypatch.setitem(sys.modules, "my_learners", types.SimpleNamespace(fake=fake))
    register_learner("fake", "my_learners:fake")  # resolved on first use, as the SB3 agents
    code = main(["compare", "--garnet", "8,2,2", "--schemes", "api", "--operators", "exact",
                 "--run-budget", "100", "--seeds", "2", "--sb3", "fake", "--out", str(tmp_path)])
    assert code == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    assert df[df.learner == "fake"].samples.tolist() == [50, 100, 50, 100]


def _run_json(argv, capsys):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("options", "kwargs"), [
    (["--horizon", "geometric", "--critic", "none"], {"horizon": "geometric", "critic": None}),
    (["--horizon", "7", "--rollout-m", "3", "--critic", "regression"],
     {"horizon": 7, "m": 3, "critic": "regression"}),
    (["--rollout-m", "2", "--critic", "lstd"], {"m": 2, "critic": "lstd"}),
])
def test_run_rollout_options_are_the_operator_arguments(options, kwargs, capsys):
    from sklearn.linear_model import LinearRegression, LogisticRegression

    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy import RolloutCSC

    out = _run_json(["run", "--scheme", "api", "--garnet", "12,2,2", "--operator",
                     "rollout-csc", "--budget", "1200", "--iterations", "4", "--seed", "3",
                     "--json", *options], capsys)
    mdp = nsrl.garnet(12, 2, 2, seed=0)
    if kwargs.get("critic") == "regression":
        kwargs = {**kwargs, "critic": LinearRegression()}
    op = RolloutCSC(FiniteMDPVectorEnv(mdp, num_envs=1), LogisticRegression(max_iter=1000),
                    budget=1200, **kwargs)
    h = nsrl.run(nsrl.API(), op, 4, rng=np.random.default_rng(3))
    assert out["samples"] == h.samples.tolist()  # same seed, same draws
    np.testing.assert_array_equal(out["losses"], h.losses)


def test_geometric_horizon_without_critic_draws_about_the_budget(capsys):
    out = _run_json(["run", "--scheme", "api", "--garnet", "12,2,2", "--operator",
                     "rollout-reg", "--budget", "4000", "--iterations", "3", "--horizon",
                     "geometric", "--critic", "none", "--json"], capsys)
    per_call = np.diff([0] + out["samples"])
    # 20 states x 2 actions x geometric lengths of mean 100: 4000 in expectation, not exactly
    assert len(set(per_call.tolist())) > 1 and np.all(abs(per_call - 4000) < 2000)


def test_compare_takes_the_rollout_options(tmp_path):
    code = main(["compare", "--garnet", "10,2,2", "--schemes", "api", "--operators",
                 "rollout-reg,lstdq", "--features", "onehot", "--horizon", "5",
                 "--critic", "none", "--run-budget", "3000", "--seeds", "1", "--iterations", "3",
                 "--out", str(tmp_path)])
    assert code == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    # No critic: every call runs 100 states x 2 actions x 5 transitions, exactly.
    assert df[df.learner == "api/rollout-reg"].samples.tolist() == [1000, 2000, 3000]
    assert df[df.learner == "api/lstdq"].samples.tolist() == [1000, 2000, 3000]  # unaffected


@pytest.mark.parametrize(("options", "option"), [
    (["--horizon", "0"], "--horizon"),
    (["--horizon", "geom"], "--horizon"),
    (["--horizon", "2.5"], "--horizon"),
    (["--rollout-m", "0"], "--rollout-m"),
    (["--rollout-m", "two"], "--rollout-m"),
    (["--critic", "ridge"], "--critic"),
    (["--rollout-m", "3", "--critic", "none"], "--rollout-m"),
    (["--operators", "lstdq,exact", "--critic", "lstd"], "--critic"),
    (["--operators", "lstdq", "--horizon", "geometric", "--rollout-m", "2"], "--horizon"),
])
def test_compare_bad_rollout_options_exit_2(options, option, tmp_path, capsys):
    argv = ["compare", "--garnet", "8,2,2", "--schemes", "api", "--run-budget", "1000",
            "--out", str(tmp_path / "out"), *options]
    if "--operators" not in options:
        argv += ["--operators", "rollout-csc"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()  # refused before any work


def test_critic_names_map_to_operator_arguments():
    from sklearn.linear_model import LinearRegression

    mdp = nsrl.garnet(8, 2, 2, seed=0)
    op = nsrl.make_operator("rollout-csc", mdp, budget=1000, critic="none", horizon="geometric")
    assert op.critic is None and op.horizon is None  # None: the geometric horizon
    op = nsrl.make_operator("rollout-reg", mdp, budget=1000, critic="regression", m=4)
    assert isinstance(op.critic.regressor, LinearRegression) and op.m == 4
    with pytest.raises(ValueError, match="option 'critic' should be a string, one of 'auto'"):
        nsrl.make_operator("rollout-csc", mdp, budget=1000, critic="magic")
    with pytest.raises(ValueError, match="unknown option.*'noise'"):
        nsrl.make_operator("rollout-csc", mdp, noise=0.1)
