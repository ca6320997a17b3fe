"""DPI and CBMPI on Tetris: facts of the schemes (NSPI(1) is API; CPI(alpha) is API(alpha) on
the behaviour states), m = 0 rollouts are the placements' lines, reproducible runs, every
scheme of the paper runs, and bad options are refused in one line."""

import gymnasium as gym
import numpy as np
import pytest

import nsrl
from nsrl.engine import OperatorSpec
from nsrl.greedy.tetris import TetrisRollouts, TetrisScore, tetris_policy
from nsrl.tetris import States, features_of_placements
from nsrl.tetris.controllers import SHIPPED

BOARD = {"width": 6, "height": 8}
SMALL = {"budget": 30_000, "pool_games": 4, "pool_pieces": 2_000, "value_games": 4}


def _env():
    return gym.make("Tetris-v0", **BOARD)


def _run(scheme, iterations=3, seed=0, **options):
    op = TetrisRollouts(_env(), **{**SMALL, **options})
    hist = nsrl.run(scheme, op, iterations, rng=np.random.default_rng(seed),
                    estimate=TetrisScore(_env(), games=6, seed=1))
    return hist, op


def test_nspi_1_is_api_and_runs_repeat():
    api, op_api = _run("api")
    nspi, op_nspi = _run("nspi(1)")
    again, _ = _run("api")
    assert api.scores.tolist() == nspi.scores.tolist() == again.scores.tolist()
    assert op_api.records[-1].fit.weights.tolist() == op_nspi.records[-1].fit.weights.tolist()
    assert np.isnan(api.losses).all() and (api.games == 6).all()
    other, _ = _run("api", seed=1)
    assert other.samples.tolist() != api.samples.tolist()


def test_cpi_alpha_is_api_alpha_on_the_behaviour_states():
    a, _ = _run("api(0.3)")
    c, _ = _run("cpi(0.3)")
    assert a.scores.tolist() == c.scores.tolist() and a.memory.tolist() == [2, 3, 4]


def test_with_m_0_the_q_are_the_placements_lines():
    op = TetrisRollouts(_env(), m=0, critic="none", **SMALL)
    op.greedy(nsrl.Constant(0), nsrl.greedy.Nu(), np.random.default_rng(0))
    problem = op.last_problem
    assert problem is not None
    lines = features_of_placements(_states_of(problem, op), "holes").lines
    assert np.array_equal(problem.q[problem.legal], lines[problem.legal].astype(float))


def _states_of(problem, op):
    """The states of the last call: the pool's rows whose placements' features match."""
    pool = op._pool
    p = features_of_placements(pool, op.features)
    index = {p.phi[i].tobytes() + p.mask[i].tobytes(): i for i in range(len(pool))}
    rows = [index[problem.phi[i].tobytes() + problem.legal[i].astype(np.int8).tobytes()]
            for i in range(len(problem.phi))]
    return States(pool.boards[rows], pool.pieces[rows], pool.width)


def test_cbmpi_fits_a_critic_and_every_scheme_of_the_paper_runs():
    for scheme in ("api", "api(0.1)", "cpi(0.1)", "cpi+", "psdp", "nspi(2)"):
        hist, op = _run(scheme, iterations=2, m=2)
        assert np.isfinite(hist.scores).all() and (hist.samples > 0).all(), scheme
        assert op.records[-1].critic_weights is not None or scheme == "psdp"
        assert op.samples_used >= hist.samples[-1]
    psdp, _ = _run("psdp", iterations=3)
    assert psdp.memory.tolist() == [1, 2, 3]


def test_cpi_stops_at_its_first_step_on_tetris():
    """gamma = 1: Kakade and Langford's step (1 - gamma)(A - eps/3)/(4R) is 0."""
    hist, _ = _run("cpi", iterations=3)
    assert hist.steps.tolist() == [0.0, 0.0, 0.0] and hist.memory.tolist() == [1, 1, 1]


def test_the_states_of_the_policys_own_games_for_rho_the_occupancy():
    hist, op = _run("cpi(0.5)", iterations=2, rollout_states="occupancy")
    rollouts = sum(r.samples for r in op.records)
    assert hist.samples[-1] == op.samples_used > rollouts  # the target's games count too


def test_registered_operators_and_refusals():
    op = OperatorSpec("dpi", budget=50_000).make(_env())
    assert isinstance(op, TetrisRollouts) and op.critic == "none" and op.m == 10
    assert OperatorSpec("cbmpi").make(_env()).critic == "linear"
    with pytest.raises(ValueError, match="below one state's rollouts"):
        TetrisRollouts(_env(), budget=10)
    with pytest.raises(ValueError, match="critic should be one of"):
        TetrisRollouts(_env(), critic="lstd")
    with pytest.raises(TypeError, match="Tetris-v0 env"):
        TetrisRollouts(gym.make("CartPole-v1"))
    with pytest.raises(ValueError, match="unknown feature set"):
        TetrisRollouts(_env(), features="nope")


def test_cpi_plus_with_a_smallest_step_searches_on_tetris():
    plain, _ = _run("cpi+", iterations=2)
    assert plain.steps.tolist() == [0.0, 0.0]  # gamma = 1: CPI's own step is 0
    op = TetrisRollouts(_env(), **SMALL)
    hist = nsrl.run(nsrl.make_scheme("cpi+", alpha_min=0.25), op, 3,
                    rng=np.random.default_rng(0))
    assert set(hist.steps.tolist()) <= {0.25, 0.5, 1.0}
    assert op.samples_used > sum(r.samples for r in op.records)  # the candidates' games


def test_the_critic_decay_scales_the_critics_value_at_the_cut():
    """Two calls on one fixed target (DU): call 2's Q are R + d T, where its returns R and the
    tail T of call 1's critic are the same for every d (call 1 has no critic yet)."""
    du = SHIPPED["du"]
    target = tetris_policy(du.features, du.vector(BOARD["width"]), **BOARD)
    q = {}
    for decay in (1.0, 0.5, 0.25):
        op = TetrisRollouts(_env(), m=2, critic_decay=decay, **SMALL)
        rng = np.random.default_rng(3)
        for _ in range(2):
            op.greedy(target, nsrl.greedy.Nu(), rng)
        q[decay] = op.last_problem.q[op.last_problem.legal]
    tail = 2 * (q[1.0] - q[0.5])
    assert np.abs(tail).max() > 1.0  # the critic adds lines somewhere
    np.testing.assert_allclose(q[0.5] - q[0.25], tail / 4, atol=1e-9)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="critic_decay should be a number in"):
            TetrisRollouts(_env(), critic_decay=bad)
