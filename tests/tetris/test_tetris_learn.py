"""The classification step of DPI/CBMPI on Tetris (nsrl.tetris.learn), at small sizes.

Facts: the cost-sensitive loss on a hand-made problem; Q estimates with m = 0 are the lines of
the placement itself and NaN exactly where a placement is illegal; the surrogate's gradient is
its derivative; both fits are functions of their inputs and never end above where they start.
"""

from __future__ import annotations

import numpy as np
import pytest

from nsrl.tetris import SHIPPED, features_of_placements
from nsrl.tetris.learn import (
    CSCProblem,
    fit_cmaes,
    fit_softmax,
    rollout_problem,
    rollout_states,
    surrogate,
)

W, H = 6, 8


def hand_problem() -> CSCProblem:
    # 2 states x 3 placements, one feature; state 0: placement 2 illegal, placement 1 ends
    phi = np.array([[[1.0], [3.0], [5.0]], [[2.0], [1.0], [0.0]]])
    legal = np.array([[True, True, False], [True, True, True]])
    ends = np.array([[False, True, False], [False, False, False]])
    q = np.array([[1.0, 4.0, np.nan], [0.0, 2.0, 5.0]])
    return CSCProblem(phi, legal, ends, q, ("x",))


def test_the_cost_sensitive_loss_of_a_hand_made_problem():
    p = hand_problem()
    # w = +1: state 0 takes placement 0 (1 ends the game), cost 4 - 1 = 3; state 1 takes 0, 5
    assert p.choose(np.array([1.0])).tolist() == [0, 0] and p.loss(np.array([1.0])) == 4.0
    # w = -1: state 0 still 0 (the only one that does not end), state 1 takes 2, cost 0
    assert p.choose(np.array([-1.0])).tolist() == [0, 2] and p.loss(np.array([-1.0])) == 1.5
    assert p.costs[0, 2] == 0.0  # an illegal placement costs nothing and is never chosen


@pytest.fixture(scope="module")
def problem() -> CSCProblem:
    states = rollout_states(SHIPPED["dt-10"], 60, width=W, height=H, max_pieces=12, seed=0)
    return rollout_problem(states, SHIPPED["dellacherie"], features="dellacherie-thiery", m=4,
                           seed=1)


def test_rollout_states_are_live_and_a_function_of_the_seed():
    a = rollout_states(SHIPPED["dt-10"], 30, width=W, height=H, max_pieces=12, seed=3)
    b = rollout_states(SHIPPED["dt-10"], 30, width=W, height=H, max_pieces=12, seed=3)
    assert (a.pieces >= 0).all() and np.array_equal(a.boards, b.boards)
    assert (a.boards != 0).any(axis=1).mean() > 0.5  # most are played boards, not empty ones


def test_q_with_m_0_is_the_placement_s_lines_and_nan_where_illegal():
    states = rollout_states(SHIPPED["dt-10"], 40, width=W, height=H, max_pieces=20, seed=4)
    p = rollout_problem(states, SHIPPED["dt-10"], features="dellacherie-thiery", m=0, seed=2)
    placements = features_of_placements(states, "dellacherie-thiery")
    assert np.array_equal(np.isnan(p.q), ~p.legal)
    live = p.legal & ~p.ends
    assert np.array_equal(p.q[live], placements.lines[live].astype(float))


def test_the_surrogate_gradient_is_its_derivative(problem):
    f = surrogate(problem, temperature=2.0, ridge=1e-3)
    w = np.random.default_rng(0).normal(size=problem.phi.shape[2]) * 0.3
    value, grad = f(w)
    h = 1e-6
    numeric = [(f(w + h * e)[0] - f(w - h * e)[0]) / (2 * h) for e in np.eye(len(w))]
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-8)


def test_both_fits_start_from_x0_end_no_higher_and_repeat(problem):
    x0 = np.zeros(problem.phi.shape[2])
    cma = fit_cmaes(problem, x0, iterations=5, seed=7)
    assert cma.loss <= problem.loss(x0) and cma.loss == problem.loss(cma.weights)
    assert np.array_equal(cma.weights, fit_cmaes(problem, x0, iterations=5, seed=7).weights)
    assert cma.evaluations == 1 + 5 * 15 * len(x0)  # the papers' population, 5 generations
    soft = fit_softmax(problem, x0)
    assert soft.loss == problem.loss(soft.weights)
    assert np.array_equal(soft.weights, fit_softmax(problem, x0).weights)
    f = surrogate(problem)  # L-BFGS descends the surrogate (not L, which it only stands for)
    assert f(soft.weights)[0] < f(x0)[0]


def test_the_fits_are_estimators_the_operator_takes():
    """CMAESFit and SoftmaxFit store their options, refuse unknown ones, and a fixed seed
    repeats a fit; TetrisRollouts takes one as fit= and gives what the name gives."""
    import gymnasium as gym

    import nsrl
    from nsrl.greedy.tetris import TetrisRollouts
    from nsrl.tetris.learn import CMAESFit, SoftmaxFit

    est = CMAESFit(population=12, iterations=3, seed=5)
    assert est.set_params(sigma=0.3).get_params() == {"population": 12, "sigma": 0.3,
                                                        "iterations": 3, "seed": 5}
    with pytest.raises(ValueError, match="unknown option"):
        SoftmaxFit().set_params(temp=2)
    env = gym.make("Tetris-v0", width=6, height=8)
    small = {"budget": 20_000, "pool_games": 3, "pool_pieces": 500}
    runs = [nsrl.run("api", TetrisRollouts(env, fit=fit, **small), 2,
                     rng=np.random.default_rng(0)).output.weights.tolist()
            for fit in ("softmax", SoftmaxFit(), CMAESFit(iterations=3, seed=5),
                        CMAESFit(iterations=3, seed=5))]
    assert runs[0] == runs[1] and runs[2] == runs[3]
    with pytest.raises(ValueError, match="fit should be one of"):
        TetrisRollouts(env, fit="adam")
