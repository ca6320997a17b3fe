"""Certificates that never lie (issue 30): the dense bound, the gamma limit, overflowing values.

Each reproducer of the issue is a row here: a model whose v* cannot be certified is refused
before any work, with a message naming the limit, and every bound reported is at least the
true error.
"""

import time

import numpy as np
import pytest

import nsrl
from nsrl.cli import main
from nsrl.cli.common import GAMMA_MAX as CLI_GAMMA_MAX
from nsrl.exact import ExactBackend, operators
from nsrl.exact.operators import GAMMA_MAX
from nsrl.experiments.accuracy import GAMMA_MAX as SWEEP_GAMMA_MAX


def test_the_dense_path_reports_a_residual_bound_not_zero(dense_v_star):
    mdp = nsrl.garnet(40, 2, 3, seed=0)
    b = ExactBackend(mdp)
    v = b.optimal_value()
    assert b.dense
    assert 0 < b.v_star_bound <= b.value_tol
    assert np.abs(v - dense_v_star(mdp)).max() <= b.v_star_bound
    residual = np.abs(operators.q_values(mdp, v).max(axis=1) - v).max()
    assert b.v_star_bound >= residual / (1 - mdp.gamma)


def test_the_dense_bound_is_zero_only_when_the_residual_is_exactly_zero():
    nxt = np.array([[[1, 0]], [[0, 1]]])
    pr = np.array([[[0.5, 0.5]], [[1.0, 0.0]]])
    zero = nsrl.FiniteMDP.from_successors(nxt, pr, [0.0, 0.0], 0.9)
    b = ExactBackend(zero)
    b.optimal_value()
    assert b.v_star_bound == 0.0
    b = ExactBackend(nsrl.FiniteMDP.from_successors(nxt, pr, [0.0, 1.0], 0.9))
    b.optimal_value()
    assert b.v_star_bound > 0.0


@pytest.mark.parametrize("gamma", [1 - 1e-13, 1 - 1e-10, 1 - 1e-6])
@pytest.mark.parametrize("n_states", [40, 400])
def test_a_gamma_beyond_the_certifiable_limit_is_refused_before_work(gamma, n_states):
    mdp = nsrl.garnet(n_states, 2, 3, gamma=gamma, seed=0)
    t = time.perf_counter()
    with pytest.raises(ValueError, match=f"use gamma <= {GAMMA_MAX!r}"):
        nsrl.optimal_value(mdp)
    with pytest.raises(ValueError, match="too close to 1"):
        nsrl.evaluate(mdp, nsrl.Deterministic(np.zeros(n_states, dtype=int)))
    assert time.perf_counter() - t < 60  # refused, not solved (a loose guard, never a timing)


@pytest.mark.parametrize("n_states", [40, 400])
def test_the_largest_accepted_gamma_is_certified_honestly(n_states, dense_v_star):
    mdp = nsrl.garnet(n_states, 2, 3, gamma=GAMMA_MAX, seed=0)
    b = ExactBackend(mdp)
    v = b.optimal_value()
    assert b.v_star_bound <= b.value_tol
    # the dense reference is itself only accurate to ~cond * eps * |v|: compare within both
    reference = dense_v_star(mdp)
    slack = 1e-15 * np.abs(reference).max() / (1 - mdp.gamma)
    assert np.abs(v - reference).max() <= b.v_star_bound + slack


def test_python_the_cli_and_the_sweeps_agree_on_the_limit():
    assert GAMMA_MAX == CLI_GAMMA_MAX == SWEEP_GAMMA_MAX


def test_the_cli_refuses_a_gamma_it_cannot_certify_at_once(capsys):
    t = time.perf_counter()
    assert main(["run", "--scheme", "api", "--garnet", "400,2,3", "--gamma", "0.999999",
                 "--iterations", "3"]) == 2
    err = capsys.readouterr().err
    assert "--gamma" in err and repr(GAMMA_MAX)[:7] in err
    assert time.perf_counter() - t < 60  # at once (a loose guard, never a timing)


def test_the_cli_certifies_the_largest_gamma_it_accepts(capsys):
    assert main(["run", "--scheme", "api", "--garnet", "400,2,3", "--gamma", repr(GAMMA_MAX),
                 "--iterations", "3", "--json"]) == 0
    losses = __import__("json").loads(capsys.readouterr().out)["losses"]
    assert min(losses) >= 0


@pytest.mark.parametrize("rewards", [[0.0, 1e308], [-1e308, 0.0], [0.0, 1e306]])
def test_rewards_whose_values_overflow_are_refused(rewards):
    nxt = np.array([[[1, 0]], [[0, 1]]])
    pr = np.array([[[0.5, 0.5]], [[1.0, 0.0]]])
    mdp = nsrl.FiniteMDP.from_successors(nxt, pr, rewards, 0.999)
    with pytest.raises(ValueError, match="rescale the rewards"):
        nsrl.optimal_value(mdp)


def test_large_but_representable_rewards_give_finite_certified_values(dense_v_star):
    nxt = np.array([[[1, 0]], [[0, 1]]])
    pr = np.array([[[0.5, 0.5]], [[1.0, 0.0]]])
    mdp = nsrl.FiniteMDP.from_successors(nxt, pr, [0.0, 1e300], 0.5)
    b = ExactBackend(mdp)
    v = b.optimal_value()
    assert np.isfinite(v).all() and np.isfinite(b.v_star_bound)
    assert np.abs(v - dense_v_star(mdp)).max() <= b.v_star_bound
