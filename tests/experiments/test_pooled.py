"""An experiment's sweeps on one pool of workers: each sweep's results as if run alone."""

import json

import pandas as pd
import pytest

from nsrl.experiments import runner
from nsrl.experiments.execution import run_experiment
from nsrl.experiments.experiment import Experiment
from nsrl.experiments.runner import run_sweep
from nsrl.experiments.sweep import Sweep

BASE = Sweep(name="pool", n_states=(10,), n_actions=(2,), branching=(2,), n_mdps=3, n_runs=2,
             n_iterations=5, schemes=("api", "cpi", "nspi(2)"))
EXPERIMENT = Experiment("pool", BASE, {"a": {"n_actions": (2, 3)},
                                       "b": {"schemes": ("psdp", "cpi+"), "n_mdps": 2}})
KEYS = ["n_states", "n_actions", "branching", "mdp", "scheme", "run", "iteration"]


def table(folder) -> pd.DataFrame:
    return pd.read_parquet(folder / "shards").sort_values(KEYS).reset_index(drop=True)


def sessions(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "sessions.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """Each variant's sweep run by itself, in one process."""
    root = tmp_path_factory.mktemp("alone")
    for variant, sweep in EXPERIMENT.sweeps().items():
        run_sweep(sweep, root / variant, jobs=1, backend="sequential", progress=False)
    return {v: table(root / v) for v in EXPERIMENT.sweeps()}


def test_pooled_sweeps_give_each_sweeps_results_as_run_alone(tmp_path, alone):
    result = run_experiment(EXPERIMENT, tmp_path, jobs=2, progress=False)
    assert result["complete"] and list(result["sweeps"]) == ["a", "b"]
    for variant in ("a", "b"):
        pd.testing.assert_frame_equal(table(tmp_path / variant), alone[variant])
        start, *shards, end = sessions(tmp_path / variant)
        assert start["pooled"] is True and end["event"] == "end"
        assert len(shards) == end["computed"] == len(EXPERIMENT.sweeps()[variant].shards())
        summary = (tmp_path / variant / "summary.md").read_text()
        assert "workers shared with the experiment's other variants" in summary


def _out_of_order(jobs, backend, scheduler, calls):
    """Every call run here, the last submitted first: results cross from sweep to sweep."""
    for function, args in reversed(calls):
        yield function(*args)


def test_results_arriving_across_sweeps_land_in_their_own_folders(tmp_path, alone,
                                                                   monkeypatch):
    monkeypatch.setattr(runner, "_results", _out_of_order)
    order = []
    run_experiment(EXPERIMENT, tmp_path, jobs=2, progress=False,
                   on_sweep=lambda variant, folder, result: order.append(variant))
    assert order == ["b", "a"]  # b's shards were submitted last, so they came back first
    for variant in ("a", "b"):
        pd.testing.assert_frame_equal(table(tmp_path / variant), alone[variant])


def test_an_interruption_closes_every_sweep_and_resume_completes_them(tmp_path, alone,
                                                                      monkeypatch):
    def interrupted(jobs, backend, scheduler, calls):
        results = _out_of_order(jobs, backend, scheduler, calls)
        yield next(results)  # one shard of b, then Ctrl-C
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_results", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(EXPERIMENT, tmp_path, jobs=2, progress=False)
    assert not (tmp_path / "a").exists()  # a started and wrote nothing: nothing left behind
    *_, end = sessions(tmp_path / "b")
    assert end == {**end, "event": "end", "computed": 1}
    assert len(list((tmp_path / "b" / "shards").glob("*.parquet"))) == 1
    monkeypatch.undo()  # the locks were released: the same command resumes
    result = run_experiment(EXPERIMENT, tmp_path, jobs=2, resume=True, report=False,
                            progress=False)
    assert result["sweeps"]["b"]["computed"] == len(EXPERIMENT.sweeps()["b"].shards()) - 1
    for variant in ("a", "b"):
        pd.testing.assert_frame_equal(table(tmp_path / variant), alone[variant])
