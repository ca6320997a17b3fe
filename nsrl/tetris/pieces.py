r"""The seven tetrominoes in MdpTetris's order, each orientation as arrays the kernels read.

MdpTetris's piece file gives each piece in one orientation; the others follow by turning the
previous one a quarter: cell (row r, column k) of the new orientation is cell
(old height - 1 - k, r) of the old one (rows counted from the bottom). The first orientations
below are the file's, drawn top row first; the order of the pieces (I, O, T, Z, S, J, L, by
their shapes) and of the orientations is the order in which a controller tries them.

Examples:
    >>> PIECE_NAMES[2], int(N_ORIENTATIONS[2]), [draw(2, o) for o in range(2)]
    ('T', 4, ['X.\nXX\nX.', '.X.\nXXX'])
    >>> int(N_ORIENTATIONS.sum()), int(HEIGHT.max())
    (19, 4)
"""

from __future__ import annotations

import numpy as np

PIECE_NAMES = ("I", "O", "T", "Z", "S", "J", "L")

# The first orientation of each piece, top row first ('X' filled), as MdpTetris's piece file
# draws it (the vertical I, the T pointing left... ).
_FIRST = (
    ("X", "X", "X", "X"),
    ("XX", "XX"),
    ("X.", "XX", "X."),
    (".X", "XX", "X."),
    ("X.", "XX", ".X"),
    ("X..", "XXX"),
    ("XXX", "X.."),
)
_COUNTS = (2, 1, 4, 2, 2, 4, 4)  # orientations of each piece

N_PIECES = len(PIECE_NAMES)
MAX_ORIENTATIONS = 4
MAX_SIZE = 4  # a tetromino's bounding box is at most 4 cells high or wide


def _cells(rows_top_first: tuple[str, ...]) -> list[list[bool]]:
    """A shape as a list of rows, bottom row first."""
    return [[ch == "X" for ch in row] for row in reversed(rows_top_first)]


def _turn(shape: list[list[bool]]) -> list[list[bool]]:
    """The next orientation: new cell (r, k) is old cell (old height - 1 - k, r)."""
    old_height, old_width = len(shape), len(shape[0])
    return [[shape[old_height - 1 - k][r] for k in range(old_height)] for r in range(old_width)]


def _orientations() -> list[list[list[list[bool]]]]:
    shapes = []
    for first, count in zip(_FIRST, _COUNTS, strict=True):
        turns = [_cells(first)]
        for _ in range(count - 1):
            turns.append(_turn(turns[-1]))
        shapes.append(turns)
    return shapes


SHAPES = _orientations()
"""``SHAPES[piece][orientation]``: the cells as rows of booleans, bottom row first."""

N_ORIENTATIONS = np.array(_COUNTS, dtype=np.int64)
HEIGHT = np.zeros((N_PIECES, MAX_ORIENTATIONS), dtype=np.int64)
WIDTH = np.zeros((N_PIECES, MAX_ORIENTATIONS), dtype=np.int64)
ROW_BITS = np.zeros((N_PIECES, MAX_ORIENTATIONS, MAX_SIZE), dtype=np.int64)
"""Bit k of ``ROW_BITS[p, o, i]``: the piece fills column k of its box on its row i."""
ROW_CELLS = np.zeros((N_PIECES, MAX_ORIENTATIONS, MAX_SIZE), dtype=np.int64)
BOTTOM = np.zeros((N_PIECES, MAX_ORIENTATIONS, MAX_SIZE), dtype=np.int64)
"""Row (in the box) of the lowest cell of each column of the box."""
TOP = np.zeros((N_PIECES, MAX_ORIENTATIONS, MAX_SIZE), dtype=np.int64)
"""One above the row of the highest cell of each column (a column's cells are contiguous)."""

for _p, _turns in enumerate(SHAPES):
    for _o, _shape in enumerate(_turns):
        HEIGHT[_p, _o], WIDTH[_p, _o] = len(_shape), len(_shape[0])
        for _i, _row in enumerate(_shape):
            ROW_BITS[_p, _o, _i] = sum(1 << k for k, full in enumerate(_row) if full)
            ROW_CELLS[_p, _o, _i] = sum(_row)
        for _k in range(len(_shape[0])):
            _filled = [i for i, row in enumerate(_shape) if row[_k]]
            BOTTOM[_p, _o, _k], TOP[_p, _o, _k] = min(_filled), max(_filled) + 1
            assert TOP[_p, _o, _k] - BOTTOM[_p, _o, _k] == len(_filled)  # contiguous columns

for _array in (N_ORIENTATIONS, HEIGHT, WIDTH, ROW_BITS, ROW_CELLS, BOTTOM, TOP):
    _array.flags.writeable = False


def draw(piece: int, orientation: int) -> str:
    """The orientation as text, top row first ('X' filled, '.' empty).

    Examples:
        >>> print(draw(0, 1))
        XXXX
    """
    shape = SHAPES[piece][orientation]
    return "\n".join("".join("X" if full else "." for full in row) for row in reversed(shape))
