"""Compiled kernels: a board's placements, their features, the controller's choice, a move.

A game's board lives in one int64 work array (:func:`layout`): the rows as words of bits (bit
c: column c; rows 0..H+3, the four above the top hold a piece that sticks out), the same cells
as columns (bit r: row r), the column heights, and what every placement of the next piece
shares (per row and per column parts of the features, their sums), computed once per piece by
:func:`prepare`. A placement that removes no line changes only the rows and columns the piece
touches, so its features are those sums corrected there (:func:`_place_simple`); one that
removes lines is recomputed from its columns (:func:`_place_clearing`).

Feature vectors follow :data:`nsrl.tetris.features.SCALAR_FEATURES`, then the column heights,
then their absolute differences; ``need`` (a bit set, :func:`need_bits`) says which of the
costlier ones to compute.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from nsrl.tetris.bits import bit_length, popcount, trailing_zeros
from nsrl.tetris.pieces import BOTTOM, HEIGHT, N_ORIENTATIONS, ROW_BITS, ROW_CELLS, TOP, WIDTH

# Bits of ``need``.
NEED_WELLS, NEED_DWELLS, NEED_DEPTH, NEED_ROWS, NEED_DIVERSITY, NEED_HEIGHTS, NEED_RBF = (
    1, 2, 4, 8, 16, 32, 64)
_NEEDS = {"board_wells": NEED_WELLS, "dellacherie_wells": NEED_DWELLS, "hole_depth": NEED_DEPTH,
          "rows_with_holes": NEED_ROWS, "pattern_diversity": NEED_DIVERSITY}

ENDED = -1   # what a placement that ends the game returns instead of its lines
RULE_END, RULE_CLEAR_FIRST = 0, 1  # the overflow rules (reference.OVERFLOW_RULES)
GAME_OVER_SCORE = -1e100  # MdpTetris's score of a placement that ends the game
TIE_MARGIN = 1e-30  # a later placement wins only if it scores more by more than this

# Scalar slots of the work array (after the per-row and per-column parts).
(S_ROWT, S_COLT, S_HOLES, S_DEPTH, S_WELLS, S_DWELLS, S_HOLE_ROWS, S_TOP, S_SUM_H,
 S_DIFFS) = range(10)
N_SLOTS = 10

_COLUMN_BITS = np.zeros(BOTTOM.shape, dtype=np.int64)  # each box column's cells, as row bits
for _p in range(BOTTOM.shape[0]):
    for _o in range(N_ORIENTATIONS[_p]):
        for _k in range(WIDTH[_p, _o]):
            _n = TOP[_p, _o, _k] - BOTTOM[_p, _o, _k]
            _COLUMN_BITS[_p, _o, _k] = ((1 << _n) - 1) << BOTTOM[_p, _o, _k]
_COLUMN_CELLS = TOP - BOTTOM


def _inside_differences() -> np.ndarray:
    """Per orientation, the packed counts (diff_count) of the differences inside the piece.

    A placement that removes no line leaves these between the piece's own columns.
    """
    table = np.zeros(BOTTOM.shape[:2], dtype=np.int64)
    for p in range(BOTTOM.shape[0]):
        for o in range(N_ORIENTATIONS[p]):
            for k in range(WIDTH[p, o] - 1):
                diff = int(TOP[p, o, k + 1] - TOP[p, o, k])
                table[p, o] += (1 << (8 * (diff + 2))) if -2 <= diff <= 2 else 0
    return table.reshape(-1)


_INSIDE_DIFFERENCES = _inside_differences()


def need_bits(index: list[int] | np.ndarray, width: int) -> int:
    """The ``need`` bit set of a feature vector's entries ``index`` (kernel positions)."""
    from nsrl.tetris.features import N_SCALAR, SCALAR_FEATURES

    need = 0
    for k in index:
        if k < N_SCALAR:
            name = SCALAR_FEATURES[k]
            need |= _NEEDS.get(name, 0) | (NEED_RBF if name.startswith("rbf_") else 0)
        else:
            need |= NEED_HEIGHTS
    return need


@numba.njit(cache=True)
def layout(width: int, height: int) -> tuple:  # pragma: no cover - compiled
    """Offsets of the parts of the work array, then its size.

    The parts: rows, columns, heights, row transitions, column holes, wells (both kinds),
    prefix sums of the height-difference counts, scalar slots, scratch columns, the
    placements left for later (one per action).
    """
    rows = 0
    cols = rows + height + 4
    hts = cols + width
    rowt = hts + width
    chole = rowt + height + 4
    wells = chole + width
    dwells = wells + width
    prefix = dwells + width
    slots = prefix + width
    tmp = slots + N_SLOTS
    pending = tmp + width
    size = pending + 4 * width
    return rows, cols, hts, rowt, chole, wells, dwells, prefix, slots, tmp, pending, size


@numba.njit(inline="always", cache=True)
def _row_transitions(row: int, width: int) -> int:  # pragma: no cover - compiled
    walled = (row << 1) | 1 | (1 << (width + 1))
    return popcount((walled ^ (walled >> 1)) & ((1 << (width + 1)) - 1))


@numba.njit(inline="always", cache=True)
def _column_transitions(col: int, height: int) -> int:  # pragma: no cover - compiled
    return popcount((col ^ ((col << 1) | 1)) & ((1 << (height + 1)) - 1))


@numba.njit(inline="always", cache=True)
def _depth(col: int) -> int:  # pragma: no cover - compiled
    """Filled cells above the column's lowest empty cell."""
    return popcount(col) - trailing_zeros(~col)


@numba.njit(inline="always", cache=True)
def _wells(col: int, left: int, right: int, below_top: int) -> int:  # pragma: no cover
    """D-T wells of one column: each run from a well cell down to a filled cell counts n(n+1)/2.

    The topmost run is done without a branch (whether a column has a well is random, and a
    mispredicted branch costs more than the run); a loop takes the rare others.
    """
    well = ~col & left & right & below_top
    top = max(bit_length(well) - 1, 0)
    low = bit_length(col & ((1 << top) - 1))
    n = (top - low + 1) * (well != 0)
    total = (n * (n + 1)) >> 1
    well &= (1 << low) - 1
    while well != 0:
        top = bit_length(well) - 1
        low = bit_length(col & ((1 << top) - 1))
        n = top - low + 1
        total += (n * (n + 1)) >> 1
        well &= (1 << low) - 1
    return total


@numba.njit(inline="always", cache=True)
def _dwells(col: int, left: int, right: int, below_top: int) -> int:  # pragma: no cover
    """Dellacherie's wells of one column: each well cell counts 1 + the empty cells below it."""
    well = ~col & left & right & below_top
    total = 0
    while well != 0:
        top = bit_length(well) - 1
        total += top - bit_length(col & ((1 << top) - 1)) + 1
        well ^= 1 << top
    return total


@numba.njit(inline="always", cache=True)
def _neighbour(ws: np.ndarray, base: int, j: int, width: int) -> int:  # pragma: no cover
    """Column j of the part at ``base``, a side wall (all filled) off the board."""
    return ws[base + j] if 0 <= j < width else -1


@numba.njit(inline="always", cache=True)
def _with_piece(col: int, j: int, p: int, o: int, c: int, pw: int,
                d: int) -> int:  # pragma: no cover - compiled
    """Column word ``col`` (column j) with the cells of piece (p, o) dropped at (c, d)."""
    if c <= j < c + pw:
        return col | (_COLUMN_BITS[p, o, j - c] << d)
    return col


@numba.njit(inline="always", cache=True)
def _rbf(phi: np.ndarray, mean: float, height: int) -> None:  # pragma: no cover - compiled
    spread = 2.0 * (height / 5.0) ** 2
    for i in range(5):
        phi[12 + i] = math.exp(-((mean - i * height / 4.0) ** 2) / spread)


@numba.njit(cache=True)
def prepare(ws: np.ndarray, width: int, height: int, need: int) -> None:  # pragma: no cover
    """Compute what every placement of the next piece shares, from the rows and columns."""
    rows, cols, hts, rowt, chole, wells, dwells, prefix, slots, _, _, _ = layout(width,
                                                                                height)
    total = 0
    for r in range(height + 4):  # the 4 rows above the top too (empty: 2 each, not summed)
        ws[rowt + r] = _row_transitions(ws[rows + r], width)
        total += ws[rowt + r] if r < height else 0
    ws[slots + S_ROWT] = total
    colt = holes = depth = hole_rows = top = sum_h = 0
    for j in range(width):
        col = ws[cols + j]
        h = bit_length(col)
        ws[hts + j] = h
        colt += _column_transitions(col, height)
        holes += h - popcount(col)
        ws[chole + j] = 1 if h > popcount(col) else 0
        depth += _depth(col)
        hole_rows |= ~col & ((1 << h) - 1)
        top = max(top, h)
        sum_h += h
    ws[slots + S_COLT] = colt
    ws[slots + S_HOLES] = holes
    ws[slots + S_DEPTH] = depth
    ws[slots + S_HOLE_ROWS] = hole_rows
    ws[slots + S_TOP] = top
    ws[slots + S_SUM_H] = sum_h
    below_top = (1 << top) - 1
    sum_w = sum_d = 0
    for j in range(width):
        left, right = _neighbour(ws, cols, j - 1, width), _neighbour(ws, cols, j + 1, width)
        ws[wells + j] = _wells(ws[cols + j], left, right, below_top) if need & NEED_WELLS else 0
        ws[dwells + j] = _dwells(ws[cols + j], left, right, below_top) if need & NEED_DWELLS else 0
        sum_w += ws[wells + j]
        sum_d += ws[dwells + j]
    ws[slots + S_WELLS] = sum_w
    ws[slots + S_DWELLS] = sum_d
    diffs = 0
    for j in range(width):  # prefix[j]: the counts of the differences of pairs before j
        ws[prefix + j] = diffs
        if j < width - 1:
            diffs += diff_count(ws[hts + j + 1] - ws[hts + j])
    ws[slots + S_DIFFS] = diffs


@numba.njit(inline="always", cache=True)
def diff_count(diff: int) -> int:  # pragma: no cover - compiled
    """One height difference, as a count in a word holding those of -2..2 a byte each.

    One word to copy and update instead of five counters (a board is at most 31 wide).
    """
    return (1 << (8 * (diff + 2))) if -2 <= diff <= 2 else 0


@numba.njit(inline="always", cache=True)
def diversity(diffs: int) -> int:  # pragma: no cover - compiled
    """How many of the five counts packed by :func:`diff_count` are not zero."""
    folded = diffs | (diffs >> 4)
    folded |= folded >> 2
    folded |= folded >> 1
    return popcount(folded & 0x0101010101)


@numba.njit(cache=True)
def _place_clearing(ws: np.ndarray, p: int, o: int, c: int, d: int, full: int, width: int,
                    height: int, need: int, phi: np.ndarray) -> None:  # pragma: no cover
    """Features of a placement that removes lines: its columns, rebuilt without them."""
    rows, cols, _, rowt, _, _, _, _, slots, tmp, _, _ = layout(width, height)
    ph, pw = HEIGHT[p, o], WIDTH[p, o]
    # Rows that stay keep their transitions; each removed one makes room for an empty row (2).
    rowt_sum, lines, eroded, inside = ws[slots + S_ROWT], 0, 0, 0
    for i in range(ph):
        if d + i < height:
            rowt_sum -= ws[rowt + d + i]
            inside += 1
        if full >> i & 1:
            lines += 1
            eroded += ROW_CELLS[p, o, i]
        else:
            rowt_sum += _row_transitions(ws[rows + d + i] | (ROW_BITS[p, o, i] << c), width)
    rowt_sum += 2 * (inside - ph + lines)
    colt = holes = depth = hole_rows = top = sum_h = 0
    for j in range(width):
        col = _with_piece(ws[cols + j], j, p, o, c, pw, d)
        for i in range(ph - 1, -1, -1):  # from the top, so lower row numbers stay valid
            if full >> i & 1:
                low = (1 << (d + i)) - 1
                col = (col & low) | ((col >> 1) & ~low)
        ws[tmp + j] = col
        h = bit_length(col)
        colt += _column_transitions(col, height)
        holes += h - popcount(col)
        depth += _depth(col)
        hole_rows |= ~col & ((1 << h) - 1)
        top = max(top, h)
        sum_h += h
    phi[0] = d + (ph - 1) / 2.0
    phi[1] = lines * eroded
    phi[2] = rowt_sum
    phi[3] = colt
    phi[4] = holes
    phi[6] = depth
    phi[7] = popcount(hole_rows)
    phi[10] = top
    phi[11] = 1.0
    if need & (NEED_WELLS | NEED_DWELLS):
        below_top = (1 << top) - 1
        sum_w = sum_d = 0
        for j in range(width):
            left, right = _neighbour(ws, tmp, j - 1, width), _neighbour(ws, tmp, j + 1, width)
            if need & NEED_WELLS:
                sum_w += _wells(ws[tmp + j], left, right, below_top)
            if need & NEED_DWELLS:
                sum_d += _dwells(ws[tmp + j], left, right, below_top)
        phi[5] = sum_w
        phi[9] = sum_d
    if need & NEED_DIVERSITY:
        diffs = 0
        for j in range(width - 1):
            diffs += diff_count(bit_length(ws[tmp + j + 1]) - bit_length(ws[tmp + j]))
        phi[8] = diversity(diffs)
    if need & NEED_RBF:
        _rbf(phi, sum_h / width, height)
    if need & NEED_HEIGHTS:
        for j in range(width):
            phi[17 + j] = bit_length(ws[tmp + j])
        for j in range(width - 1):
            phi[17 + width + j] = abs(phi[17 + j] - phi[18 + j])
