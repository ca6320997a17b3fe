"""benchmarks/check_mountain_car_optimum.py at tiny sizes: its two searches against Gymnasium.

The merged search's action sequences reach the goal in exactly the reported number of steps
when replayed in Gymnasium's own MountainCar-v0; on starts near the goal, both bounds equal
the minimum found by trying every action sequence; the script's output is read back by the
renderers of docs/guide/simulators.md.
"""

import itertools
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

from study.numbers.registry import BLOCKS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "check_mountain_car_optimum.py"


@pytest.fixture(scope="module")
def check():
    return runpy.run_path(str(SCRIPT))


def brute_force(start, depth):
    """The fewest steps to the goal over all 3^t action sequences, t <= depth, in Gymnasium's
    own env (None if more than ``depth``)."""
    import gymnasium as gym

    env = gym.make("MountainCar-v0").unwrapped
    env.reset(seed=0)
    for t in range(1, depth + 1):
        for seq in itertools.product(range(3), repeat=t):
            env.state = np.array(start, dtype=np.float64)
            for k, a in enumerate(seq, start=1):
                if env.step(a)[2]:
                    return k  # no shorter sequence got there, so k == t
    return None


def test_found_sequences_replay_in_gymnasium_in_the_reported_steps(check):
    starts = check["starts"](4)
    assert starts.shape == (4, 2)
    assert ((starts[:, 0] >= -1.2) & (starts[:, 0] < 0.5)).all()
    for x in starts:
        steps, actions = check["shortest_path"](x, 150)
        assert steps == len(actions) > 0
        assert check["replay"](x, actions) == steps  # and not earlier
        assert 0 < check["lower_bound"](x, 150, 150, exact=0) <= steps
        assert check["lower_bound"](x, 150, 150) <= steps


@pytest.mark.parametrize("start", [(0.3, 0.03), (0.35, 0.02), (0.2, 0.05)])
def test_both_bounds_meet_the_exhaustive_minimum_near_the_goal(check, start):
    x = np.array(start)
    exact = brute_force(x, 8)
    assert exact is not None
    steps, actions = check["shortest_path"](x, 200)
    assert steps == exact and check["replay"](x, actions) == exact
    assert check["lower_bound"](x, 400, 400, exact=0) <= exact
    assert check["lower_bound"](x, 400, 400, exact=exact) == exact  # exact states to the goal


def test_the_script_runs_and_the_renderers_read_its_output(monkeypatch, tmp_path, capsys):
    out = tmp_path / "benchmarks" / "results" / "check_mountain_car_optimum.txt"
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--games", "3", "--grids", "100", "200",
                                      "--lower-grids", "200x200", "--out", str(out)])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    text = out.read_text()
    assert text.count("3/3  ") == 2  # every sequence replayed, on both grids
    assert "Command: python benchmarks/check_mountain_car_optimum.py --games 3" in text
    low = float(BLOCKS["simulators-mcar-optimum.lower"].render(tmp_path))
    high = float(BLOCKS["simulators-mcar-optimum.upper"].render(tmp_path))
    assert 0 < low <= high
    assert BLOCKS["simulators-mcar-optimum.exact"].render(tmp_path).endswith(" of 3")
    assert BLOCKS["simulators-mcar-optimum.settled"].render(tmp_path) in ("100", "200")
    assert BLOCKS["simulators-mcar-optimum.best"].render(tmp_path) == "59.4"  # the study's
    capsys.readouterr()
