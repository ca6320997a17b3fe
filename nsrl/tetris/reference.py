"""The rules and every feature in plain Python, cell by cell: slow, written to be read.

The compiled kernels (:mod:`nsrl.tetris.kernels`) must give the same numbers; the tests check
it on hand-made and random boards. A board here is a list of rows, bottom row first, each a
list of booleans (True: filled), ``height`` rows of ``width`` cells.

Examples:
    >>> grid = from_text(["....", "....", "X...", "XX.X"])  # top row first
    >>> placed = drop(grid, piece=0, orientation=0, column=2)  # a vertical I into the gap
    >>> placed.lines, placed.landing_row, placed.ended
    (1, 0, False)
    >>> to_text(placed.grid), features(placed, ["landing_height", "eroded_piece_cells"])
    (['....', '..X.', '..X.', 'X.X.'], [1.5, 1.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nsrl.tetris.pieces import SHAPES

Grid = list[list[bool]]

OVERFLOW_RULES = ("end", "clear-first")
"""``"end"``: a piece that sticks out of the top ends the game and its lines are not counted
(MdpTetris's evaluation tool); ``"clear-first"``: its full lines are removed first and the game
ends only if something still sticks out (MdpTetris's learning tools)."""


def from_text(rows_top_first: list[str]) -> Grid:
    """A board from text, top row first ('X' filled, anything else empty)."""
    return [[ch == "X" for ch in row] for row in reversed(rows_top_first)]


def to_text(grid: Grid) -> list[str]:
    """The board as text, top row first."""
    return ["".join("X" if cell else "." for cell in row) for row in reversed(grid)]


def column_height(grid: Grid, c: int) -> int:
    """One above the highest filled cell of column ``c`` (0 if the column is empty)."""
    return max((r + 1 for r in range(len(grid)) if grid[r][c]), default=0)


@dataclass
class Placed:
    """A placement and its afterstate: ``grid`` once full lines are removed."""

    grid: Grid
    piece: int
    orientation: int
    landing_row: int   # the row of the piece's lowest cells, before lines are removed
    lines: int         # lines removed (0 when the piece ends the game under rule "end")
    eroded_cells: int  # cells of the piece itself in the removed lines
    ended: bool


def drop(grid: Grid, piece: int, orientation: int, column: int, overflow: str = "end") -> Placed:
    """Drop a piece straight down with the left of its box at ``column``; remove full lines."""
    height, width = len(grid), len(grid[0])
    shape = SHAPES[piece][orientation]
    if not 0 <= column <= width - len(shape[0]):
        raise ValueError(f"column {column} is off the board for this orientation")
    # Room above the top for a piece that sticks out (a piece is at most 4 high).
    board = [list(row) for row in grid] + [[False] * width for _ in range(4)]

    def fits(row: int) -> bool:
        return all(not (shape[i][k] and board[row + i][column + k])
                   for i in range(len(shape)) for k in range(len(shape[0])))

    row = max(column_height(grid, column + k) for k in range(len(shape[0])))
    while row > 0 and fits(row - 1):  # from just above the stack, down while it fits
        row -= 1
    for i in range(len(shape)):
        for k in range(len(shape[0])):
            if shape[i][k]:
                board[row + i][column + k] = True
    sticks_out = row + len(shape) > height
    lines = eroded = 0
    if not sticks_out or overflow == "clear-first":
        kept = []
        for r, cells in enumerate(board):
            if all(cells):
                lines += 1
                if row <= r < row + len(shape):
                    eroded += sum(shape[r - row])
            else:
                kept.append(cells)
        board = kept + [[False] * width for _ in range(lines)]
    ended = any(any(cells) for cells in board[height:])
    return Placed([list(cells) for cells in board[:height]], piece, orientation, row, lines,
                  eroded, ended)


def _heights(grid: Grid) -> list[int]:
    return [column_height(grid, c) for c in range(len(grid[0]))]


def row_transitions(grid: Grid) -> int:
    """Filled/empty changes along each row, the side walls counting as filled."""
    total = 0
    for row in grid:
        cells = [True, *row, True]
        total += sum(a != b for a, b in zip(cells, cells[1:], strict=False))
    return total


def column_transitions(grid: Grid) -> int:
    """Filled/empty changes up each column, from the floor (filled) to above the top (empty)."""
    total = 0
    for c in range(len(grid[0])):
        cells = [True, *(row[c] for row in grid), False]
        total += sum(a != b for a, b in zip(cells, cells[1:], strict=False))
    return total


def holes(grid: Grid) -> int:
    """Empty cells with a filled cell somewhere above them in their column."""
    return sum(not grid[r][c] for c, h in enumerate(_heights(grid)) for r in range(h))


def hole_depth(grid: Grid) -> int:
    """Filled cells with an empty cell somewhere below them in their column, each once."""
    return sum(grid[r][c] and not all(grid[s][c] for s in range(r))
               for c in range(len(grid[0])) for r in range(len(grid)))


def rows_with_holes(grid: Grid) -> int:
    """Rows holding at least one hole."""
    heights = _heights(grid)
    return sum(any(not row[c] and r < heights[c] for c in range(len(row)))
               for r, row in enumerate(grid))


def _well_cell(grid: Grid, r: int, c: int) -> bool:
    """Empty, with both neighbours on its row filled (a side wall counts as filled)."""
    width = len(grid[0])
    left = c == 0 or grid[r][c - 1]
    right = c == width - 1 or grid[r][c + 1]
    return not grid[r][c] and left and right


def _empty_below(grid: Grid, r: int, c: int) -> int:
    """Empty cells right below (r, c) in its column, down to a filled cell or the floor."""
    n = 0
    while r - 1 - n >= 0 and not grid[r - 1 - n][c]:
        n += 1
    return n


def dellacherie_wells(grid: Grid) -> int:
    """Dellacherie's wells (MdpTetris id 6): each well cell counts 1 + the empty cells below it.

    Only rows below the highest column are looked at.
    """
    top = max(_heights(grid))
    return sum(1 + _empty_below(grid, r, c)
               for c in range(len(grid[0])) for r in range(top) if _well_cell(grid, r, c))


def board_wells(grid: Grid) -> int:
    """The D-T wells (MdpTetris id -6), cheaper than Dellacherie's.

    Down each column from the highest column's top, a well cell starts a run that takes every
    empty cell below it (well cell or not); a run of n cells counts 1 + 2 + ... + n, and the
    search goes on below the filled cell that ends it.
    """
    top = max(_heights(grid))
    total = 0
    for c in range(len(grid[0])):
        r = top - 1
        while r >= 0:
            if _well_cell(grid, r, c):
                n = 1 + _empty_below(grid, r, c)
                total += n * (n + 1) // 2
                r -= n  # the filled cell (or floor) below the run is skipped next
            r -= 1
    return total


def pattern_diversity(grid: Grid) -> int:
    """How many of the differences -2, -1, 0, 1, 2 occur between neighbouring column heights."""
    h = _heights(grid)
    return len({b - a for a, b in zip(h, h[1:], strict=False)} & {-2, -1, 0, 1, 2})


def rbf(grid: Grid, i: int) -> float:
    """exp(-(c - i h / 4)^2 / (2 (h / 5)^2)), c the mean column height, h the board's height."""
    h, c = len(grid), sum(_heights(grid)) / len(grid[0])
    return math.exp(-((c - i * h / 4) ** 2) / (2 * (h / 5) ** 2))


def feature(placed: Placed, name: str) -> float:
    """One feature of a placement (see :mod:`nsrl.tetris.features` for the names)."""
    grid = placed.grid
    if name == "landing_height":  # the middle of the piece, before lines are removed
        return placed.landing_row + (len(SHAPES[placed.piece][placed.orientation]) - 1) / 2
    if name == "eroded_piece_cells":
        return float(placed.lines * placed.eroded_cells)
    if name == "constant":
        return 1.0
    if name == "max_height":
        return float(max(_heights(grid)))
    if name.startswith("rbf_"):
        return rbf(grid, int(name[4:]))
    if name.startswith("height_diff_"):
        j = int(name[12:])
        return float(abs(column_height(grid, j) - column_height(grid, j + 1)))
    if name.startswith("height_"):
        return float(column_height(grid, int(name[7:])))
    functions = {"row_transitions": row_transitions, "column_transitions": column_transitions,
                 "holes": holes, "board_wells": board_wells, "hole_depth": hole_depth,
                 "rows_with_holes": rows_with_holes, "pattern_diversity": pattern_diversity,
                 "dellacherie_wells": dellacherie_wells}
    return float(functions[name](grid))


def features(placed: Placed, names: list[str] | tuple[str, ...]) -> list[float]:
    """The features ``names`` of a placement, in order."""
    return [feature(placed, n) for n in names]


def choose(grid: Grid, piece: int, names: tuple[str, ...], weights: list[float],
           overflow: str = "end") -> tuple[int, int]:
    """A linear controller's placement (orientation, column), as MdpTetris decides it.

    Placements are tried by orientation, then column from the left. A placement that ends the
    game scores -1e100; another scores the sum of weight x feature, added in the order of
    ``names``. A later placement replaces the best so far only if it scores more by more than
    1e-30; if every placement ends the game, (0, 0) is played.
    """
    width = len(grid[0])
    best, best_move = -1e100, (0, 0)
    for o, shape in enumerate(SHAPES[piece]):
        for c in range(width - len(shape[0]) + 1):
            placed = drop(grid, piece, o, c, overflow)
            score = -1e100
            if not placed.ended:
                score = 0.0
                for value, weight in zip(features(placed, names), weights, strict=True):
                    score += value * weight
            if score - best > 1e-30:
                best, best_move = score, (o, c)
    return best_move


def play(grid: Grid, pieces: list[int], names: tuple[str, ...], weights: list[float],
         overflow: str = "end") -> tuple[int, int, Grid]:
    """Play ``pieces`` in turn from ``grid``; (lines, placements made, last board).

    Stops at the placement that ends the game (counted) or when the pieces run out.
    """
    lines = 0
    for made, piece in enumerate(pieces, start=1):
        placed = drop(grid, piece, *choose(grid, piece, names, weights, overflow), overflow)
        lines += placed.lines
        grid = placed.grid
        if placed.ended:
            return lines, made, grid
    return lines, len(pieces), grid
