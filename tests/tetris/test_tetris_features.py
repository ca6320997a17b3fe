"""Each feature on hand-made boards (values worked out in the comments), and the compiled
features equal to the plain-Python reference on seeded random boards."""

import math
import random

import numpy as np
import pytest

from nsrl.tetris import State, States, feature_names, features_of_placements
from nsrl.tetris import reference as ref
from nsrl.tetris.features import SCALAR_FEATURES
from nsrl.tetris.pieces import N_ORIENTATIONS, WIDTH

# Board A, 6 wide and 6 high, top row first. Column heights 3 2 4 1 3 1.
BOARD_A = ["......",
           "......",
           "..X...",
           "X.X.X.",
           "XXX.X.",
           "XX.XXX"]


def test_row_transitions_count_side_walls_as_filled():
    # Rows bottom up, walls added: 1|110111|1 -> 2; 1|111010|1 -> 4; 1|101010|1 -> 6;
    # 1|001000|1 -> 4; the two empty rows 1|000000|1 -> 2 each. 2 + 4 + 6 + 4 + 2 + 2 = 20.
    assert ref.row_transitions(ref.from_text(BOARD_A)) == 20


def test_column_transitions_count_the_floor_as_filled_and_the_sky_as_empty():
    # Columns bottom up, floor (filled) below, sky (empty) above: c0 1110.. -> 1, c1 11.. -> 1,
    # c2 0111.. -> floor/0, 0/1, 1/0 = 3, c3 1.. -> 1, c4 111.. -> 1, c5 1.. -> 1. Total 8.
    assert ref.column_transitions(ref.from_text(BOARD_A)) == 8


def test_holes_hole_depth_and_rows_with_holes():
    grid = ref.from_text(BOARD_A)
    # The one hole is (row 0, column 2); the 3 filled cells above it have an empty cell below;
    # one row (row 0) holds a hole.
    assert (ref.holes(grid), ref.hole_depth(grid), ref.rows_with_holes(grid)) == (1, 3, 1)


def test_wells_of_board_a_agree_between_the_two_definitions():
    # Well cells (empty, both sides filled, below the highest column, row 4): (2, c1),
    # (0, c2), (1, c3), (2, c3), (1, c5), (2, c5). Dellacherie: each counts 1 + empty cells
    # below: c1 1, c2 1, c3 2 + 1, c5 2 + 1 = 8. D-T: runs from the topmost well cell down:
    # c1 n=1 -> 1, c2 n=1 -> 1, c3 rows 2-1 n=2 -> 3, c5 n=2 -> 3 = 8.
    grid = ref.from_text(BOARD_A)
    assert ref.dellacherie_wells(grid) == ref.board_wells(grid) == 8


def test_wells_differ_inside_a_run_of_empty_cells():
    # Column 1 is empty; rows 3, 2 and 0 are well cells, row 1 is not (column 2 is empty there).
    # Dellacherie: row 3 -> 1 + 3, row 2 -> 1 + 2, row 0 -> 1; D-T: one run of 4 from row 3,
    # 1 + 2 + 3 + 4 = 10. Both: (3, c3) is a well cell above a filled one, 1.
    grid = ref.from_text(["....",
                          "X.X.",
                          "X.XX",
                          "X..X",
                          "X.XX"])
    assert (ref.dellacherie_wells(grid), ref.board_wells(grid)) == (4 + 3 + 1 + 1, 10 + 1)


def test_pattern_diversity_counts_the_differences_minus_2_to_2_that_occur():
    # Heights 3 2 4 1 3 1: differences -1, +2, -3, +2, -2 -> {-2, -1, 2}: 3.
    assert ref.pattern_diversity(ref.from_text(BOARD_A)) == 3
    assert ref.pattern_diversity(ref.from_text(["....", "XXX."])) == 2  # 0, 0, -1


def test_rbf_heights_peak_where_the_mean_height_is_i_h_over_4():
    grid = ref.from_text(["....", "....", "XXX.", "XXX."])  # mean height 6/4 = 1.5, h = 4
    for i in range(5):
        expected = math.exp(-((1.5 - i) ** 2) / (2 * 0.8**2))  # h/4 = 1, h/5 = 0.8
        assert ref.rbf(grid, i) == pytest.approx(expected)


def test_landing_height_and_eroded_cells_describe_the_placement():
    # A vertical I in column 3 lands on the floor (row 0): landing height 0 + (4 - 1) / 2.
    # Two rows fill, with 2 of the I's cells in them: eroded piece cells 2 lines x 2 = 4.
    grid = ref.from_text(["....", "....", "....", "....", "XXX.", "XXX."])
    placed = ref.drop(grid, 0, 0, 3)
    assert placed.lines == 2
    assert ref.features(placed, ["landing_height", "eroded_piece_cells"]) == [1.5, 4.0]
    assert ref.to_text(placed.grid)[-2:] == ["...X", "...X"]  # what stays of the I


@pytest.mark.parametrize("overflow, lines, ended", [("end", 0, True), ("clear-first", 1, False)])
def test_a_piece_sticking_out_of_the_top(overflow, lines, ended):
    # Column 0 is 1 high: a vertical I there fills rows 1-4 of a 4-high board, completing
    # row 1. 'end' stops the game without counting the line; 'clear-first' removes it first,
    # and the I then fits (rows 1-3).
    grid = ref.from_text(["....", ".X..", ".XXX", "XX.X"])
    placed = ref.drop(grid, 0, 0, 0, overflow)
    assert (placed.lines, placed.ended) == (lines, ended)
    boards = States.of([State(4, tuple(int(sum(1 << c for c, x in enumerate(row) if x))
                                       for row in grid), 0)])
    compiled = features_of_placements(boards, "holes", overflow=overflow)
    assert (compiled.lines[0, 0], compiled.ends[0, 0]) == (lines, ended)


def _random_grid(rs: random.Random, width: int, height: int) -> list[list[bool]]:
    """Columns of random heights with random holes under their tops; no full row."""
    grid = [[False] * width for _ in range(height)]
    for c in range(width):
        top = rs.randint(0, height - 1)
        for r in range(top):
            grid[r][c] = rs.random() < 0.75
        if top:
            grid[top - 1][c] = True
    for row in grid:
        if all(row):
            row[rs.randrange(width)] = False
    return grid


def _state(grid: list[list[bool]], piece: int) -> State:
    return State(len(grid[0]), tuple(sum(1 << c for c, x in enumerate(row) if x) for row in grid),
                 piece)


@pytest.mark.parametrize("width, height, overflow", [(4, 4, "end"), (6, 8, "clear-first"),
                                                     (10, 10, "end"), (10, 20, "clear-first"),
                                                     (7, 5, "end"), (31, 58, "end")])
def test_compiled_features_equal_the_reference_on_random_boards(width, height, overflow):
    rs = random.Random(width * 100 + height)
    names = SCALAR_FEATURES + feature_names("bertsekas", width)[1:-2]  # heights, differences
    grids = [_random_grid(rs, width, height) for _ in range(12)]
    states = States.of([_state(g, p) for g in grids for p in range(7)])
    got = features_of_placements(states, "+".join(names), overflow=overflow)
    for i, state in enumerate(states.to_list()):
        grid, p = grids[i // 7], state.piece
        for o in range(N_ORIENTATIONS[p]):
            for c in range(width - WIDTH[p, o] + 1):
                a = o * width + c
                placed = ref.drop(grid, p, o, c, overflow)
                assert got.mask[i, a] and got.ends[i, a] == placed.ended
                if not placed.ended:
                    assert got.lines[i, a] == placed.lines
                    np.testing.assert_allclose(got.phi[i, a], ref.features(placed, names),
                                               rtol=1e-12, err_msg=f"state {i}, action {a}")
        assert got.mask[i].sum() == sum(width - WIDTH[p, o] + 1 for o in range(N_ORIENTATIONS[p]))
