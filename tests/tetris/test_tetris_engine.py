"""The batch engine: games against the reference controller move for move, independence of
seeds from batching and processes, rollouts, the tie rule and game-ending placements."""

import numpy as np
import pytest

from nsrl.tetris import (
    SHIPPED,
    Controller,
    State,
    States,
    features_of_placements,
    legal_actions,
    play_games,
    rollouts,
)
from nsrl.tetris import reference as ref
from nsrl.tetris.pieces_rng import pieces as stream


def _empty(width, height):
    return [[False] * width for _ in range(height)]


def _grid(state: State):
    return [[bool(row >> c & 1) for c in range(state.width)] for row in state.rows]


@pytest.mark.parametrize("name, width, height, overflow", [
    ("dt-10", 6, 8, "end"), ("dellacherie", 5, 7, "end"), ("dt-20", 6, 6, "clear-first"),
    ("du", 7, 6, "end")])
def test_games_equal_the_reference_controller_move_for_move(name, width, height, overflow):
    controller = SHIPPED[name]
    names, weights = controller.names(width), list(controller.vector(width))
    games = play_games(controller, 4, width=width, height=height, seed=3, overflow=overflow)
    for g in range(4):
        sequence = stream(3, g, 400).tolist()
        lines, made, _ = ref.play(_empty(width, height), sequence, names, weights, overflow)
        assert made < 400, "the reference game should end within the pieces drawn"
        assert (games.lines[g], games.pieces[g]) == (lines, made)


def test_a_game_does_not_depend_on_the_batch_or_on_jobs():
    c = SHIPPED["dellacherie"]
    five = play_games(c, 5, width=6, height=6, seed=11)
    three = play_games(c, 3, width=6, height=6, seed=11)
    two_jobs = play_games(c, 5, width=6, height=6, seed=11, jobs=2)
    assert five.lines[:3].tolist() == three.lines.tolist()
    assert five.pieces.tolist() == two_jobs.pieces.tolist()
    assert five.lines.tolist() == two_jobs.lines.tolist()
    assert five.games.tolist() == [0, 1, 2, 3, 4]
    other = play_games(c, 5, width=6, height=6, seed=12)
    assert other.pieces.tolist() != five.pieces.tolist()


def test_piece_streams_are_uniform_over_the_seven_pieces():
    counts = np.bincount(stream(0, 0, 70_000), minlength=7)
    # Each count is Binomial(70000, 1/7): sd ~ 93; 5 sd either side.
    assert np.all(np.abs(counts - 10_000) < 5 * 93)


def test_ties_go_to_the_first_placement_in_mdptetris_order():
    # All weights 0: every placement scores 0 and the first tried, (0, 0), is kept.
    zero = Controller("holes", {"holes": 0.0})
    r = rollouts(States.of([State.empty(6, 6, 2)]), np.array([-1]), zero, 0, np.array([0]))
    first = ref.drop(_empty(6, 6), 2, 0, 0)
    assert _grid(r.end_states[0]) == first.grid


def test_a_placement_that_ends_the_game_is_never_chosen_while_another_exists():
    # Landing high is rewarded, but on a 6-high board with column 0 five high the vertical I
    # there would end the game; the controller takes another placement.
    rows = (1, 1, 1, 1, 1, 0)
    reckless = Controller("landing_height", {"landing_height": 100.0})
    r = rollouts(States.of([State(6, rows, 0)]), np.array([-1]), reckless, 0, np.array([0]))
    assert not r.ended[0]
    placements = features_of_placements(States.of([State(6, rows, 0)]), "landing_height")
    assert placements.ends[0, 0] and not placements.ends[0, 1:].any()


def test_when_every_placement_ends_the_game_the_first_is_played():
    rows = (0b101111, 0b111101, 0b011111, 0b111110)  # every column filled to the top
    r = rollouts(States.of([State(6, rows, 1)]), np.array([-1]), SHIPPED["dt-10"], 3,
                 np.array([0]))
    assert r.ended[0] and r.steps[0] == 1 and r.end_states.pieces[0] == -1


def test_rollouts_follow_the_reference_after_the_first_action():
    rs = np.random.default_rng(5)
    controller = SHIPPED["dt-10"]
    names, weights = controller.names(6), list(controller.vector(6))
    start = [State.empty(6, 8, int(p)) for p in rs.integers(0, 7, size=6)]
    first = np.array([int(rs.choice(np.flatnonzero(legal_actions(s.piece, 6)))) for s in start])
    seeds = np.array([4, 4, 9, 9, 1, 2])
    r = rollouts(States.of(start), first, controller, 7, seeds)
    for i, s in enumerate(start):
        o, c = divmod(int(first[i]), 6)
        placed = ref.drop(_grid(s), s.piece, o, c)
        after = stream(int(seeds[i]), 0, 8).tolist()
        if placed.ended:
            lines, made, grid = placed.lines, 1, placed.grid
        else:
            more, made, grid = ref.play(placed.grid, after[:7], names, weights)
            lines, made = placed.lines + more, made + 1
        assert (r.returns[i], r.steps[i]) == (lines, made)
        if not r.ended[i]:
            assert _grid(r.end_states[i]) == grid and r.end_states.pieces[i] == after[7]


def test_rollouts_of_one_seed_see_the_same_pieces():
    # Common random numbers: from the same state with the same seed, whatever the first action,
    # the piece to place after k placements is the same while the games go on.
    start = States.of([State.empty(10, 20, 3)] * 3)
    r = rollouts(start, np.array([0, 5, 13]), SHIPPED["dt-10"], 9, np.array([8, 8, 8]))
    assert not r.ended.any() and len(set(r.end_states.pieces.tolist())) == 1


def test_the_controllers_first_action_equals_choosing_it():
    start = States.of([State.empty(10, 10, 5)])
    chosen = rollouts(start, np.array([-1]), SHIPPED["dt-20"], 0, np.array([0]))
    placements = features_of_placements(start, "dellacherie-thiery")
    scores = placements.phi[0] @ SHIPPED["dt-20"].vector(10)
    scores[~placements.mask[0] | placements.ends[0]] = -np.inf
    best = int(np.argmax(scores))  # the first of the best: numpy's argmax keeps the first
    forced = rollouts(start, np.array([best]), SHIPPED["dt-20"], 0, np.array([0]))
    assert chosen.end_states[0] == forced.end_states[0]


@pytest.mark.parametrize("bad, message", [
    (dict(games=0), "games should be an int >= 1"),
    (dict(jobs=0), "jobs should be an int >= 1"),
    (dict(width=3), "board width should be in [4, 31]"),
    (dict(overflow="spill"), "overflow should be one of end, clear-first"),
    (dict(seed=-1), "seed should be an int in [0, 2**63)"),
])
def test_bad_arguments_are_refused_with_the_fix(bad, message):
    args = dict(games=1, width=6, height=6, seed=0) | bad
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("*", r"\*")
                       .replace("(", r"\(").replace(")", r"\)")):
        play_games(SHIPPED["dellacherie"], **args)


def test_an_illegal_first_action_is_refused():
    with pytest.raises(ValueError, match="not a legal placement"):
        rollouts(States.of([State.empty(6, 6, 1)]), np.array([5]), SHIPPED["dt-10"], 1,
                 np.array([0]))  # the O has one orientation, 5 columns: 5 is off the board
