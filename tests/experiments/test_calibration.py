"""The calibration measures on cases with a known answer: the exact operator keeps the whole
of the exact greedy step, a noise that drowns the values keeps about none of it."""

import numpy as np
import pandas as pd
import pytest

import nsrl
from nsrl.experiments.sensitivity.calibration import (
    FRACTION,
    SPREAD,
    exact_step_losses,
    is_calibrated,
    measures,
    relative_spread,
    step_fraction,
)
from nsrl.schemes import API
from nsrl.schemes.base import reference_run


def test_step_fraction_is_a_ratio_of_mean_gains():
    assert step_fraction([30.0, 20.0], [10.0, 0.0], [20.0, 10.0]) == 0.5
    assert step_fraction(10.0, 0.0, 12.0) == pytest.approx(-0.2)  # worse than pi_0
    with pytest.raises(ValueError, match="gains nothing"):
        step_fraction([5.0], [5.0], [4.0])


def test_relative_spread_and_the_ranges():
    assert relative_spread([0.5, 1.5], [40.0, 60.0]) == pytest.approx(0.02)
    assert is_calibrated(0.7, 0.05)
    assert not is_calibrated(FRACTION[1] + 0.01, 0.05)  # hardly perturbed
    assert not is_calibrated(0.7, SPREAD[0] / 2)  # runs do not differ


def per_mdp_of(mdp, operator, n_runs=3, k=4):
    runs = np.array([reference_run(API(), operator, k, rng=np.random.default_rng(r)).losses
                     for r in range(n_runs)])
    return pd.DataFrame({"n_states": mdp.n_states, "n_actions": mdp.n_actions, "branching": 2,
                         "mdp": 0, "scheme": "API", "iteration": [1, k],
                         "mean": runs[:, [0, -1]].mean(axis=0),
                         "std": runs[:, [0, -1]].std(axis=0), "runs": n_runs})


def test_the_exact_operator_keeps_the_whole_step_and_drowned_values_almost_none():
    mdp = nsrl.garnet(30, 3, 2, seed=4)
    l0, lx = exact_step_losses(mdp)
    assert lx < l0
    ref = pd.DataFrame({"n_states": [30], "n_actions": [3], "branching": [2], "mdp": [0],
                        "loss_pi0": [l0], "loss_exact": [lx]})
    exact = measures(per_mdp_of(mdp, nsrl.ExactGreedy(mdp)), ref)
    assert exact["step fraction"] == pytest.approx(1.0) and exact["relative spread"] == 0.0
    assert not exact["calibrated"]  # not perturbed at all
    drowned = measures(per_mdp_of(mdp, nsrl.ProjectedGreedy(mdp, noise=1e6)), ref)
    assert drowned["step fraction"] < 0.5
