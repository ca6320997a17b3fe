"""Tetris-v0: Gymnasium's checker, the same games as the batch engine, states restored."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import nsrl  # noqa: F401  (registers the ids)
from nsrl.tetris import SHIPPED, State, States, play_games, rollouts


@pytest.mark.parametrize("size", [dict(board="small"), dict(board="large"),
                                  dict(width=6, height=8)])
def test_the_env_passes_gymnasiums_checker(size):
    env = gym.make("Tetris-v0", render_mode="rgb_array", **size)
    check_env(env.unwrapped, skip_render_check=False)


def test_random_actions_of_the_space_are_legal():
    env = gym.make("Tetris-v0", width=6, height=8)
    _, info = env.reset(seed=0)
    env.action_space.seed(0)
    terminated = False
    while not terminated:
        action = env.action_space.sample()
        assert info["action_mask"][action] == 1
        _, _, terminated, _, info = env.step(action)


def test_the_env_plays_the_games_of_the_batch_engine():
    # The same controller through the env (one placement a step, choosing from the engine's
    # evaluation) and through play_games: the same lines and pieces, game for game.
    env = gym.make("Tetris-v0", width=8, height=8)
    controller = SHIPPED["dt-10"]
    batch = play_games(controller, 4, width=8, height=8, seed=21)
    obs, info = env.reset(seed=21)
    for g in range(4):
        total, steps, terminated = 0.0, 0, False
        while not terminated:
            action = env.unwrapped.game.choose(controller)
            assert info["action_mask"][action] == 1
            obs, reward, terminated, truncated, info = env.step(action)
            total, steps = total + reward, steps + 1
            assert not truncated
        assert (total, steps) == (batch.lines[g], batch.pieces[g])
        assert (info["lines"], info["pieces"]) == (batch.lines[g], batch.pieces[g])
        obs, info = env.reset()  # the next game of the same seed


def test_reset_to_a_state_restores_it_and_follows_the_rollout_pieces():
    env = gym.make("Tetris-v0", width=6, height=8)
    _, info = env.reset(seed=1)
    for _ in range(5):
        _, _, _, _, info = env.step(env.unwrapped.game.choose(SHIPPED["dt-10"]))
    saved = info["state"]
    assert hash(saved) == hash(State(saved.width, saved.rows, saved.piece))
    _, info = env.reset(seed=7, options={"state": saved})
    assert info["state"] == saved
    # From the saved state with seed 7 the env sees rollouts(..., seeds=[7])'s pieces.
    r = rollouts(States.of([saved]), np.array([2]), SHIPPED["dellacherie"], 0, np.array([7]))
    _, reward, _, _, info = env.step(2)
    assert info["state"] == r.end_states[0] and reward == r.returns[0]


def test_the_observation_is_the_board_and_the_piece():
    env = gym.make("Tetris-v0", board="small")
    obs, info = env.reset(seed=0)
    assert obs.shape == (107,) and obs.dtype == np.float32
    assert obs[:100].sum() == 0 and obs[100 + info["state"].piece] == 1
    obs, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert obs[:100].sum() == 4  # the four cells of the first piece


def test_an_illegal_action_or_a_step_after_the_end_is_refused():
    env = gym.make("Tetris-v0", width=6, height=6)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="not a legal placement"):
        env.step(illegal)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert info["action_mask"].sum() == 0 and info["state"].over
    with pytest.raises(ValueError, match="the game is over"):
        env.unwrapped.step(0)


def test_named_boards_and_render_modes():
    env = gym.make("Tetris-v0", board="large", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape == (20 * 16, 15 * 16, 3)
    text = gym.make("Tetris-v0", board="small", render_mode="ansi")
    text.reset(seed=0)
    assert text.render().count("|") == 20
    assert gym.spec("Tetris-v0").max_episode_steps is None
    with pytest.raises(ValueError, match="board should be 'small'"):
        gym.make("Tetris-v0", board="huge")
    # the board in its repr (what `nsrl reproduce --check` prints of a shard's env)
    assert repr(text.unwrapped) == "TetrisEnv(width=10, height=10, overflow='end')"


def test_the_env_gives_the_features_of_every_placement():
    env = gym.make("Tetris-v0", board="small")
    _, info = env.reset(seed=3)
    p = env.unwrapped.placements("dellacherie-thiery")
    assert (p.mask[0] == info["action_mask"].astype(bool)).all() and p.phi.shape == (1, 40, 9)
