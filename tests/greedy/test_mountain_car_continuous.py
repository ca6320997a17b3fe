"""benchmarks/study_mountain_car_continuous.py at its smallest size: every path it takes.

Facts checked:
- the RBF features equal a hand computation at the grid centres (3 x 3 and 2 x 2, plus the
  constant), and are not refitted by the operators on their first batch;
- the uniform start is inside the box, reproducible from its seed, and rollouts can restart
  from saved states through it;
- a run's sample count is the library's budget accounting: each iteration draws at most B
  transitions (N = B // (3 H) states at the first call, B // (3 m) once the critic is ready),
  History.samples ends at the operator's ``samples_used``;
- identical seeds give identical runs; the script runs every method (each scheme, DPI, LSPI,
  DQN) and writes its table.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import nsrl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
study = pytest.importorskip("study_mountain_car_continuous")


@pytest.mark.parametrize("n", [3, 2])
def test_rbf_features_at_the_grid_centres_equal_a_hand_computation(n: int) -> None:
    feats = study.rbf_features(n)
    low, high = study.BOX_LOW, study.BOX_HIGH
    grid = [low + (high - low) * np.array([i, j]) / (n - 1) for i in range(n) for j in range(n)]
    x = feats.transform(np.array(grid))
    assert x.shape == (n * n, n * n + 1)
    ij = np.array([(i, j) for i in range(n) for j in range(n)])
    # in units of the spacing (standard deviation one spacing): exp(-|di|^2 / 2)
    hand = np.exp(-0.5 * ((ij[:, None, :] - ij[None, :, :]) ** 2).sum(axis=2))
    assert np.allclose(x[:, :-1], hand, rtol=0, atol=1e-12)
    assert np.all(x[:, -1] == 1.0) and np.all(np.diag(x[:, :-1]) == 1.0)
    # the operator's feature map keeps the fitted box (not the box of its first batch)
    op = study.rollout_operator(feats, 600, critic=True)
    centre = np.array([[-0.3, 0.0]])
    assert np.allclose(op.features(centre), feats.transform(centre))
    assert np.allclose(op.features(np.array(grid[:2])), x[:2])


def test_uniform_start_is_in_the_box_and_reproducible() -> None:
    env = study.rollout_env()
    starts = [env.reset(seed=s)[1]["state"] for s in range(50)]
    pos, vel = np.array(starts).T
    assert np.all((pos >= -1.2) & (pos < 0.5) & (np.abs(vel) <= 0.07))
    assert pos.min() < -1.0 and pos.max() > 0.2  # the whole box, not Gymnasium's [-0.6, -0.4]
    assert env.reset(seed=7)[1]["state"] == starts[7]
    obs, info = env.reset(options={"state": starts[3]})
    assert info["state"] == starts[3] and np.allclose(obs, starts[3])


def test_a_run_draws_what_the_budget_accounting_says() -> None:
    budget = 600
    op = study.rollout_operator(study.rbf_features(2), budget, critic=True)
    h = nsrl.run("api", op, 3, rng=np.random.default_rng(0))
    per = np.diff(np.r_[0, h.samples])
    assert h.samples[-1] == op.samples_used and np.all(per <= budget) and np.all(per > 0)
    first = budget // (3 * study.HORIZON)  # 10 states, 3 actions, H-step rollouts
    assert op.states_per_call(nsrl.Constant(0), nsrl.Nu()) == budget // (3 * study.M)
    # the first call has no critic: H steps per rollout, fewer only where the goal is reached
    assert per[0] <= first * 3 * study.HORIZON and per[1] <= budget
    lspi = study.LSTDQ(study.rollout_env(), budget, features=study.rbf_features(2),
                       gamma=study.GAMMA)
    assert np.diff(np.r_[0, nsrl.run("api", lspi, 2, rng=np.random.default_rng(0)).samples]
                   ).tolist() == [budget, budget]


def test_identical_seeds_give_identical_runs() -> None:
    mc = study.evaluation(3)
    a, b = (study.run_scheme("nspi(3)", study.rollout_operator(study.rbf_features(2), 600, True),
                             2, 5, mc) for _ in range(2))
    assert a == b and 0 < a.steps <= study.CAP
    c = study.run_scheme("nspi(3)", study.rollout_operator(study.rbf_features(2), 600, True),
                         2, 6, mc)
    assert c.per_iteration != a.per_iteration  # another seed, other rollouts


def test_the_script_runs_every_method_at_its_smallest_size(tmp_path: Path) -> None:
    # DQN needs the sb3 extra (torch); the dependency-floors job tests tests/greedy without it,
    # and there the table must simply have no DQN row.
    dqn_runs = int(importlib.util.find_spec("stable_baselines3") is not None)
    out = tmp_path / "table.txt"
    text = study.main(["--runs", "2", "--iterations", "2", "--budget", "600", "--games", "3",
                       "--dqn-runs", str(dqn_runs), "--grids", "2x2", "--out", str(out)])
    assert out.read_text() == text
    rows = [line.split() for line in text.splitlines()[1:] if line.startswith(("2x2", "-"))]
    names = [" ".join(r[1:r.index(next(t for t in r[1:] if t.isdigit()))]) for r in rows]
    assert names == [f"{s} (CBMPI m={study.M})" for s in study.SCHEMES] + [
        f"DPI = api, H={study.HORIZON}", "LSPI (LSTDQ)"] + ["DQN (SB3)"] * dqn_runs
    for r in rows:
        steps = float(r[r.index("+-") - 1])
        assert 0 < steps <= study.CAP
    assert "load average" in text and "CPU time" in text
