"""benchmarks/check_mountain_car.py at a small size: its code path, its output and the reader.

The check's numbers are Gymnasium's returns of the grid's optimal policy per seed set; here
one 12 x 12 grid and three seed sets of 2 episodes, compared with a direct call, and read back
by the renderer of docs/bigger.md's table (study.numbers.bigger).
"""

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

import nsrl
from nsrl.envs.mountain_car import gymnasium_returns
from study.numbers.bigger import car_check, car_worst
from study.numbers.registry import BLOCKS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "check_mountain_car.py"


def run_check(monkeypatch, *args):
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), *args])
    runpy.run_path(str(SCRIPT), run_name="__main__")


def test_the_check_reports_each_seed_set_and_the_renderer_reads_it(monkeypatch, tmp_path):
    out = tmp_path / "benchmarks" / "results" / "mountain_car_check.txt"
    out.parent.mkdir(parents=True)
    run_check(monkeypatch, "--sizes", "12", "--seed-sets", "0-1", "5-6", "10-11",
              "--figure-size", "0", "--out", str(out))
    t = car_check(tmp_path)
    assert len(t) == 6 and set(t["seeds"]) == {"0-1", "5-6", "10-11"}
    assert (t["episodes"] == 2).all()
    mdp = nsrl.mountain_car(12, 12)
    pi = nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp))
    for first, row in zip((0, 5, 10), t[t["interp"] == "barycentric"].itertuples(), strict=True):
        r = gymnasium_returns(pi, 12, 12, n_episodes=2, seed=first)
        assert row.mean == pytest.approx(r.mean(), abs=0.05)  # printed to one decimal
        assert row.se == pytest.approx(r.std(ddof=1) / np.sqrt(2), abs=0.05)
        assert (row.min, row.max) == (r.min(), r.max())
    worst = car_worst(tmp_path).loc[(12, "barycentric")]
    assert worst["mean"] == t[t["interp"] == "barycentric"]["mean"].min()
    table = BLOCKS["bigger-car-check"].render(tmp_path)
    assert "barycentric, seeds 5-6" in table and "| 12 x 12 | 144 |" in table


@pytest.mark.parametrize(("sets", "message"), [
    (["0-9", "5-14"], "should be disjoint"),
    (["9-0"], "A <= B"),
    (["0:9"], "A-B"),
])
def test_bad_seed_sets_are_refused(monkeypatch, tmp_path, capsys, sets, message):
    with pytest.raises(SystemExit):
        run_check(monkeypatch, "--sizes", "12", "--seed-sets", *sets, "--figure-size", "0",
                  "--out", str(tmp_path / "x.txt"))
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.txt").exists()
