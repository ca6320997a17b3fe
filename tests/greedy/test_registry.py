"""The operator registry: one declaration of every option, read by every entry point."""

import gymnasium as gym
import numpy as np
import pytest

import nsrl
from nsrl.batched import Batch
from nsrl.cli import main
from nsrl.greedy.registry import OPERATORS, operator_entry, options_for


@pytest.mark.parametrize("name", list(OPERATORS))
def test_every_operator_is_built_with_its_defaults_and_refuses_unknown_options(name):
    env_id = operator_entry(name).env_id  # built on a simulator (Tetris) rather than a model
    on = nsrl.garnet(8, 2, 2, seed=0) if env_id is None else gym.make(env_id)
    assert isinstance(nsrl.make_operator(name, on), nsrl.GreedyOperator)
    with pytest.raises(ValueError, match=f"operator '{name}' got unknown option.*'bogus'"):
        nsrl.make_operator(name, on, bogus=1)


@pytest.mark.parametrize(("options", "says"), [
    ({"noise": -0.1}, r"option 'noise' should be a finite float in \[0, 1e\+06\], got -0.1"),
    ({"noise_model": "gauss"}, "option 'noise_model' should be a string, one of 'relative'"),
    ({"value_estimate": "guess"},
     "option 'value_estimate' should be a string, one of 'exact', 'estimated'"),
])
def test_the_batched_state_and_the_operator_refuse_the_same_values(options, says):
    """Batch reads ProjectedGreedy's declaration: the error names the option, not numpy."""
    mdp = nsrl.garnet(8, 2, 2, seed=0)
    with pytest.raises(ValueError, match=says):
        Batch(mdp, **options)
    with pytest.raises(ValueError, match=says):
        nsrl.ProjectedGreedy(mdp, **options)
    with pytest.raises(ValueError, match=says):
        nsrl.run("api", nsrl.OperatorSpec("projected", **options), 2,
                 rng=[np.random.default_rng(0)], mdp=mdp)


def test_options_given_for_several_operators_go_to_those_that_take_them():
    split = options_for(["lstdq", "rollout-csc", "exact"], {"features": "onehot", "m": 2})
    assert split == {"lstdq": {"features": "onehot"},
                     "rollout-csc": {"features": "onehot", "m": 2}, "exact": {}}
    with pytest.raises(ValueError, match="'noise' are not taken by lstdq.*options of projected"):
        options_for(["lstdq"], {"noise": 0.1})


def test_the_cli_refuses_an_option_the_operator_does_not_take(capsys):
    assert main(["run", "--scheme", "api", "--garnet", "8,2,1", "--operator", "exact",
                 "--noise", "0.2"]) == 2
    err = capsys.readouterr().err
    assert "--noise is an option of projected, not of exact" in err
    assert main(["run", "--scheme", "api", "--garnet", "8,2,1", "--operator", "magic"]) == 2
    err = capsys.readouterr().err
    assert "unknown operator 'magic'; expected one of 'exact', 'projected'" in err


def test_memory_per_call_is_declared_by_the_operator():
    assert operator_entry("projected").nbytes(100, 5, 10**6) == 0
    assert operator_entry("lstdq").nbytes(10, 2, 1000) > operator_entry(
        "rollout-csc").nbytes(10, 2, 1000) > 0
