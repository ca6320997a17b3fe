"""Programs: one controller plays the batch engine's games; afterstate features of a board
equal a placement's; mixtures draw their components with their weights; loops and finite
sequences act phase by phase as NonStationary does in Tetris-v0."""

import random

import gymnasium as gym
import numpy as np
import pytest
from test_tetris_features import _random_grid, _state

import nsrl
from nsrl.greedy.tetris import to_program
from nsrl.greedy.tetris.policies import controller_of, tetris_policy
from nsrl.tetris import SHIPPED, States, features_of_placements, play_games, rollouts
from nsrl.tetris.features import SCALAR_FEATURES, feature_names
from nsrl.tetris.programs import (
    Program,
    component_actions,
    program_games,
    program_rollouts,
    program_states,
)


def _policy(name, width, height):
    c = SHIPPED[name]
    return tetris_policy(c.features, c.vector(width), width=width, height=height)


def _random_states(width, height, n_boards, seed):
    rs = random.Random(seed)
    grids = [_random_grid(rs, width, height) for _ in range(n_boards)]
    return States.of([_state(g, p) for g in grids for p in range(7)])


@pytest.mark.parametrize("name, width, height, overflow", [
    ("dt-10", 10, 10, "end"), ("dellacherie", 6, 8, "clear-first"), ("du", 7, 6, "end")])
def test_one_controller_plays_the_engines_games_and_rollouts(name, width, height, overflow):
    program = Program.of(SHIPPED[name], width)
    lines, pieces = program_games(program, 6, width=width, height=height, seed=4,
                                  overflow=overflow)
    games = play_games(SHIPPED[name], 6, width=width, height=height, seed=4, overflow=overflow)
    assert lines.tolist() == games.lines.tolist() and pieces.tolist() == games.pieces.tolist()
    states = _random_states(width, height, 4, seed=width)
    first = np.full(len(states), -1)
    seeds = np.arange(len(states))
    got = program_rollouts(states, first, program, 7, seeds, overflow=overflow)
    want = rollouts(states, first, SHIPPED[name], 7, seeds, overflow=overflow)
    assert got.returns.tolist() == want.returns.tolist()
    assert got.steps.tolist() == want.steps.tolist()
    assert (got.status == 1).tolist() == want.ended.tolist()
    assert (got.end_states.boards == want.end_states.boards).all()


@pytest.mark.parametrize("width, height, overflow", [(6, 8, "end"), (10, 10, "clear-first"),
                                                     (10, 20, "end")])
def test_the_afterstate_features_of_a_board_are_those_of_its_placement(width, height, overflow):
    """The critic's features of the board a placement leaves equal the placement's own."""
    names = "+".join(SCALAR_FEATURES + feature_names("bertsekas", width)[1:-2])
    states = _random_states(width, height, 6, seed=height)
    p = features_of_placements(states, names, overflow=overflow)
    rows, cols = np.nonzero(p.mask & ~p.ends)
    sub = States(states.boards[rows], states.pieces[rows], width)
    r = program_rollouts(sub, cols, Program.of(SHIPPED["dt-10"], width), 0,
                         np.zeros(len(rows), dtype=np.int64), overflow=overflow,
                         critic_features=names)
    assert (r.status == 0).all() and (r.steps == 1).all()
    np.testing.assert_allclose(r.first_phi, p.phi[rows, cols], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.critic_phi, p.phi[rows, cols], rtol=1e-12, atol=1e-12)
    assert r.returns.tolist() == p.lines[rows, cols].tolist()


def test_a_mixture_draws_each_component_with_its_weight():
    width, height = 10, 10
    a, b = _policy("dt-10", width, height), _policy("dellacherie", width, height)
    mix = nsrl.Mixture([(0.3, a), (0.7, b)])
    games = 4000
    times = [[1]] * games  # the board after the first placement
    got = program_states(to_program(mix, width), times, width=width, height=height, seed=9)
    after_a = program_states(to_program(a, width), times, width=width, height=height, seed=9)
    after_b = program_states(to_program(b, width), times, width=width, height=height, seed=9)
    is_a = (got.boards == after_a.boards).all(axis=1)
    is_b = (got.boards == after_b.boards).all(axis=1)
    assert (is_a | is_b).all()
    differ = ~(is_a & is_b)
    share = is_a[differ].mean()
    sd = np.sqrt(0.3 * 0.7 / differ.sum())
    assert differ.sum() > 1000 and abs(share - 0.3) < 5 * sd
    # The games do not depend on the processes, and a mixture of weight 1 is its component.
    two = program_games(to_program(mix, width), 8, width=width, height=height, seed=2, jobs=2)
    one = program_games(to_program(mix, width), 8, width=width, height=height, seed=2)
    assert two[0].tolist() == one[0].tolist()
    alone = program_games(to_program(nsrl.Mixture([(1.0, a)]), width), 5, width=width,
                          height=height, seed=3)
    assert alone[0].tolist() == play_games(SHIPPED["dt-10"], 5, width=width, height=height,
                                           seed=3).lines.tolist()


def test_a_loop_plays_phase_by_phase_as_tetris_v0_does():
    width, height = 8, 8
    pis = [_policy("dt-10", width, height), nsrl.Constant(0), _policy("du", width, height)]
    loop = nsrl.NonStationary(pis, loop=True)
    lines, pieces = program_games(to_program(loop, width), 3, width=width, height=height, seed=5)
    env = gym.make("Tetris-v0", width=width, height=height).unwrapped
    for g in range(3):
        obs, info = env.reset(seed=5) if g == 0 else env.reset()
        t, total, over = 0, 0, False
        while not over:
            a = int(loop.act(obs[None], phase=t, mask=info["action_mask"][None])[0])
            obs, r, over, _, info = env.step(a)
            t, total = t + 1, total + int(r)
        assert (total, t) == (lines[g], pieces[g])


def test_a_finite_sequence_stops_its_rollouts_after_its_last_policy():
    width, height = 10, 10
    seq = nsrl.NonStationary([_policy("dt-10", width, height)] * 3, loop=False)
    states = _random_states(width, height, 2, seed=1)
    r = program_rollouts(states, np.zeros(len(states), dtype=np.int64), to_program(seq, width),
                         10, np.arange(len(states)))
    ran_out = r.status == 2
    assert ran_out.any() and (r.steps[ran_out] == 4).all() and (r.steps[~ran_out] <= 4).all()
    empty = to_program(nsrl.NonStationary.empty(), width)  # PSDP's sigma_0
    r0 = program_rollouts(states, np.zeros(len(states), dtype=np.int64), empty, 10,
                          np.arange(len(states)))
    assert (r0.steps == 1).all() and ((r0.status == 2) | (r0.status == 1)).all()


def test_constant_and_components_choose_as_the_controllers_do():
    width, height = 10, 10
    states = _random_states(width, height, 3, seed=2)
    pi = _policy("dellacherie", width, height)
    mix = nsrl.Mixture([(0.5, nsrl.Constant(0)), (0.5, pi)])
    actions = component_actions(states, to_program(mix, width))
    assert (actions[:, 0] == 0).all()
    obs_policy = pi.act(np.array([_obs(s, height) for s in states.to_list()]),
                        mask=np.array([_mask(s) for s in states.to_list()]))
    assert actions[:, 1].tolist() == obs_policy.tolist()
    assert controller_of(pi) == SHIPPED["dellacherie"]


def _obs(state, height):
    env = gym.make("Tetris-v0", width=state.width, height=height).unwrapped
    obs, _ = env.reset(options={"state": state})
    return obs


def _mask(state):
    from nsrl.tetris import legal_actions

    return legal_actions(state.piece, state.width)


def test_bad_programs_are_refused_in_one_line():
    with pytest.raises(TypeError, match="LinearScoringPolicy on Tetris"):
        to_program(nsrl.Deterministic([0, 1]), 10)
    with pytest.raises(ValueError, match="sum to 1"):
        Program.build("holes", 10, [np.zeros(1)], [[(0.5, 0)]], [0], True)
    with pytest.raises(ValueError, match="not a legal placement"):
        program_rollouts(_random_states(10, 10, 1, 0), np.full(7, 39),
                         Program.of(SHIPPED["dt-10"], 10), 1, np.zeros(7, dtype=np.int64))


def test_the_fits_choice_is_the_engines():
    """The classifier's loss is read on the placements the engine would play."""
    from nsrl.tetris.learn import CSCProblem

    states = _random_states(10, 10, 8, seed=5)
    p = features_of_placements(states, "dellacherie-thiery")
    problem = CSCProblem(p.phi, p.mask.astype(bool), p.ends.astype(bool),
                         np.where(p.mask, 0.0, np.nan), p.names)
    for name in ("dt-10", "dt-20"):
        w = SHIPPED[name].vector(10)
        engine = component_actions(states, Program.of(SHIPPED[name], 10))[:, 0]
        assert problem.choose(w).tolist() == engine.tolist()


def test_the_populations_losses_are_the_chosen_placements_costs():
    """CMA-ES's loss of each candidate is the mean cost of the placement ``choose`` plays.

    Random costs, states with game-ending placements, and candidates that tie everywhere
    (w = 0: the first legal placement) or on duplicated features: the compiled loop over
    the population reads the same placement as the engine's rule, bit for bit.
    """
    from nsrl.tetris.learn import CSCProblem

    states = _random_states(10, 10, 200, seed=6)
    p = features_of_placements(states, "dellacherie-thiery")
    legal = p.mask.astype(bool)
    q = np.where(legal, np.random.default_rng(0).integers(0, 5, legal.shape), np.nan)
    problem = CSCProblem(p.phi, legal, p.ends.astype(bool), q, p.names)
    assert problem.ends.any() and (problem.costs > 0).any()
    rng = np.random.default_rng(1)
    population = np.vstack([rng.normal(size=(40, 9)), np.zeros((1, 9)),
                            SHIPPED["dt-10"].vector(10), -SHIPPED["dt-20"].vector(10),
                            np.eye(9)[:3]])
    rows = np.arange(len(states))
    expected = [problem.costs[rows, problem.choose(w)].mean() for w in population]
    assert problem.losses(population).tolist() == expected
    assert len(set(expected)) > 10  # the candidates differ: the check can fail
