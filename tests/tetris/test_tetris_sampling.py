"""Tetris-v0 through nsrl's generic sampling layer: states as objects, masks, scores.

The generic path (the env one step at a time, a LinearScoringPolicy acting on observations with
the env's action mask) must play the games the compiled batch engine plays, line for line.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from nsrl.greedy.sampling import EnvSampler
from nsrl.greedy.sampling.quality import MonteCarlo
from nsrl.tetris import SHIPPED, State, play_games

W, H = 6, 8  # short games: the same code paths as 10 x 20


def env() -> gym.Env:
    return gym.make("Tetris-v0", width=W, height=H)


@pytest.mark.parametrize("controller", ["dt-10", "dellacherie"])
def test_the_env_and_a_scoring_policy_play_the_engine_s_games(controller: str) -> None:
    pi = env().unwrapped.scoring_policy(controller)
    mc = MonteCarlo(env(), games=4, seed=11)
    lines = [mc.episode(pi, i) for i in range(4)]
    engine = [int(play_games(SHIPPED[controller], 1, width=W, height=H, seed=11 + i).lines[0])
              for i in range(4)]
    assert lines == engine and max(lines) > 0  # games that clear lines, equal line for line


def test_rollouts_start_from_board_states_and_skip_illegal_placements() -> None:
    sampler = EnvSampler(env(), 1.0)
    states = sampler.start(3, np.random.default_rng(0))
    assert states.dtype == object and all(isinstance(s, State) for s in states)
    pi = env().unwrapped.scoring_policy("dt-10")
    out = sampler.q_rollouts(pi, states, np.random.default_rng(1), 1, 2)
    q = out.returns.reshape(3, 4 * W)
    masks = []
    for s in states:
        e = env()
        masks.append(e.reset(options={"state": s})[1]["action_mask"].astype(bool))
    masks = np.array(masks)
    assert np.isnan(q[~masks]).all() and np.isfinite(q[masks]).all()
    # two pieces (8 cells) on an empty 6-wide board clear at most one line
    assert set(q[masks].tolist()) <= {0.0, 1.0}
    assert all(isinstance(s, State) for s in out.states)


def test_a_scoring_policy_refuses_an_unknown_controller() -> None:
    with pytest.raises(ValueError, match="controller should be a Controller or one of"):
        env().unwrapped.scoring_policy("nope")
