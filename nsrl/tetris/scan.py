"""Every placement of one piece, in the controller's order: the hot loop of the engine.

:func:`scan` tries each orientation, then each column from the left, on a board that
:func:`nsrl.tetris.kernels.prepare` has prepared. It either keeps the linear controller's best
placement (``mode`` CHOOSE) or writes the features of every placement (``mode`` FEATURES).
A placement that removes no line (most of them) is scored here, in one function: the sums of
the board corrected on the rows and columns the piece touches. Array accesses stay in this
function and the helpers take numbers only, which keeps numba's reference counting out of the
loop; the rare placements that remove lines or end the game are set aside and done after the
loop, and the best placement is picked from the scores at the end, in the same order. Each of
these choices was measured (together about 3x fewer nanoseconds per placement).
"""

from __future__ import annotations

import numba
import numpy as np

from nsrl.tetris.bits import popcount
from nsrl.tetris.kernels import _COLUMN_BITS as _COLUMN_BITS_3D
from nsrl.tetris.kernels import (
    _COLUMN_CELLS,
    _INSIDE_DIFFERENCES,
    GAME_OVER_SCORE,
    NEED_DIVERSITY,
    NEED_DWELLS,
    NEED_HEIGHTS,
    NEED_RBF,
    NEED_WELLS,
    RULE_END,
    S_COLT,
    S_DEPTH,
    S_DIFFS,
    S_DWELLS,
    S_HOLE_ROWS,
    S_HOLES,
    S_ROWT,
    S_SUM_H,
    S_TOP,
    S_WELLS,
    TIE_MARGIN,
    _dwells,
    _place_clearing,
    _rbf,
    _row_transitions,
    _wells,
    diff_count,
    diversity,
    layout,
)
from nsrl.tetris.pieces import BOTTOM, HEIGHT, N_ORIENTATIONS, ROW_BITS, TOP, WIDTH

CHOOSE, FEATURES = 0, 1

# numba adds a negative-index fix-up to every read with a signed index; the loop's indices
# are never negative, and an unsigned one skips it (about a fifth of the instructions).
_U = numba.uint64
# The piece tables, flat: entry (p * 4 + o) * 4 + k is column (or row) k of orientation o.
_BOTTOM = BOTTOM.reshape(-1)
_TOP = TOP.reshape(-1)
_ROW_BITS = ROW_BITS.reshape(-1)
_CELLS = _COLUMN_CELLS.reshape(-1)
_COLUMN_BITS = _COLUMN_BITS_3D.reshape(-1)


@numba.njit(cache=True)
def scan(ws: np.ndarray, p: int, width: int, height: int, rule: int, need: int,
         index: np.ndarray, weights: np.ndarray, phi: np.ndarray, scores: np.ndarray, mode: int,
         out_phi: np.ndarray, out_ends: np.ndarray,
         out_lines: np.ndarray) -> int:  # pragma: no cover - compiled
    """Try every placement ``a = o * width + c`` of piece p; the controller's choice.

    CHOOSE: a placement scores ``sum_k phi[index[k]] * weights[k]``, added in that order; a
    later one wins only if it beats the best by more than TIE_MARGIN; one that ends the game
    scores GAME_OVER_SCORE, so (0, 0) is played only if every placement ends it. FEATURES:
    ``out_phi[a, k] = phi[index[k]]``, ``out_ends[a]``, ``out_lines[a]`` for every placement.
    ``scores`` (4 * width floats) is scratch space.
    """
    rows, cols, hts, rowt, chole, wells, dwells, prefix, slots, _, pending, _ = layout(
        width, height)
    full_row = (1 << width) - 1
    n_pending = 0
    for o in range(N_ORIENTATIONS[p]):
        ph, pw = HEIGHT[p, o], WIDTH[p, o]
        box = (p * 4 + o) * 4  # where the orientation's columns and rows start in the tables
        for c in range(width - pw + 1):
            a = o * width + c
            # Loops run 4 times, the size of any box, so that they unroll without branches: a
            # box column past the piece's width repeats its last one and counts for nothing,
            # a row above its height adds no cell (the row transitions of rows above the top
            # are kept too, so that it changes nothing).
            d = 0  # the box's bottom row: the piece rests on the highest column under it
            for k in range(4):
                last = min(k, pw - 1)
                d = max(d, ws[_U(hts + c + last)] - _BOTTOM[_U(box + last)])
            # Row transitions: only the rows the piece is in change.
            rowt_sum, full = ws[_U(slots + S_ROWT)], 0
            for i in range(4):
                row = ws[_U(rows + d + i)] | (_ROW_BITS[_U(box + i)] << c)
                full |= (1 << i) * (row == full_row)
                rowt_sum += _row_transitions(row, width) - ws[_U(rowt + d + i)]
            if full != 0 or d + ph > height:
                ws[_U(pending + n_pending)] = a | (d << 8) | (full << 16)
                n_pending += 1
                continue
            # Columns: empty cells under the piece become holes (no branches: it is random).
            colt, holes = ws[_U(slots + S_COLT)], ws[_U(slots + S_HOLES)]
            depth, hole_rows = ws[_U(slots + S_DEPTH)], ws[_U(slots + S_HOLE_ROWS)]
            sum_h = ws[_U(slots + S_SUM_H)]
            for k in range(4):
                last = min(k, pw - 1)
                inside = k < pw
                h = ws[_U(hts + c + last)]
                low = d + _BOTTOM[_U(box + last)]
                covered = (low > h) & inside
                sum_h += (d + _TOP[_U(box + last)] - h) * inside
                colt += 2 * covered
                holes += (low - h) * inside
                depth += _CELLS[_U(box + last)] * (covered | (ws[_U(chole + c + last)] & inside))
                hole_rows |= (((1 << low) - 1) ^ ((1 << h) - 1)) * inside
            top = max(ws[_U(slots + S_TOP)], d + ph)
            phi[0] = d + (ph - 1) / 2.0
            phi[1] = 0.0
            phi[2] = rowt_sum
            phi[3] = colt
            phi[4] = holes
            phi[6] = depth
            phi[7] = popcount(hole_rows)
            phi[10] = top
            phi[11] = 1.0
            if need & (NEED_WELLS | NEED_DWELLS):
                # Wells change in the piece's columns and their two neighbours.
                below_top = (1 << top) - 1
                sum_w, sum_d = ws[_U(slots + S_WELLS)], ws[_U(slots + S_DWELLS)]
                left = -1 if c < 2 else ws[_U(cols + c - 2)]
                col = -1 if c < 1 else ws[_U(cols + c - 1)]
                for k in range(pw + 2):  # column j = c - 1 + k; its right one is box column k
                    j = c - 1 + k
                    right = -1
                    if j + 1 < width:
                        right = ws[_U(cols + j + 1)] | (
                            _COLUMN_BITS[_U(box + min(k, 3))] << d) * (k < pw)
                    if j >= 0 and j < width:
                        if need & NEED_WELLS:
                            sum_w += _wells(col, left, right, below_top) - ws[_U(wells + j)]
                        if need & NEED_DWELLS:
                            sum_d += _dwells(col, left, right, below_top) - ws[_U(dwells + j)]
                    left, col = col, right
                phi[5] = sum_w
                phi[9] = sum_d
            if need & NEED_DIVERSITY:
                # The pairs from (c - 1, c) to (c + pw - 1, c + pw) change: those between the
                # piece's columns take the orientation's own differences, the two at its
                # sides are new; the old ones go, read from the prefix sums.
                low, high = max(c - 1, 0), min(c + pw, width - 1)
                diffs = (ws[_U(slots + S_DIFFS)] - ws[_U(prefix + high)] + ws[_U(prefix + low)]
                         + _INSIDE_DIFFERENCES[_U(p * 4 + o)])
                if c > 0:
                    diffs += diff_count(d + _TOP[_U(box)] - ws[_U(hts + c - 1)])
                if c + pw < width:
                    diffs += diff_count(ws[_U(hts + c + pw)] - d - _TOP[_U(box + pw - 1)])
                phi[8] = diversity(diffs)
            if need & NEED_RBF:
                _rbf(phi, sum_h / width, height)
            if need & NEED_HEIGHTS:
                for j in range(width):
                    phi[17 + j] = ws[hts + j]
                for k in range(pw):
                    phi[17 + c + k] = d + _TOP[box + k]
                for j in range(width - 1):
                    phi[17 + width + j] = abs(phi[17 + j] - phi[18 + j])
            if mode == CHOOSE:
                score = 0.0
                for k in range(index.shape[0]):
                    score += phi[_U(index[_U(k)])] * weights[_U(k)]
                scores[_U(a)] = score
            else:
                out_ends[a], out_lines[a] = False, 0
                for k in range(index.shape[0]):
                    out_phi[a, k] = phi[index[k]]
    for q in range(n_pending):  # placements that remove lines or stick out of the top
        code = ws[pending + q]
        a, d, full = code & 255, (code >> 8) & 255, code >> 16
        o, c = a // width, a % width
        ph, lines = HEIGHT[p, o], popcount(full)
        ended = d + ph > height and (rule == RULE_END or full == 0
                                     or max(ws[slots + S_TOP], d + ph) - lines > height)
        if not ended:
            _place_clearing(ws, p, o, c, d, full, width, height, need, phi)
        if mode == CHOOSE:
            score = GAME_OVER_SCORE
            if not ended:
                score = 0.0
                for k in range(index.shape[0]):
                    score += phi[index[k]] * weights[k]
            scores[a] = score
        else:
            out_ends[a], out_lines[a] = ended, 0 if ended else lines
            if not ended:
                for k in range(index.shape[0]):
                    out_phi[a, k] = phi[index[k]]
    best, best_action = GAME_OVER_SCORE, 0
    if mode == CHOOSE:  # MdpTetris's order: a later placement must score more by the margin
        for o in range(N_ORIENTATIONS[p]):
            for c in range(width - WIDTH[p, o] + 1):
                if scores[o * width + c] - best > TIE_MARGIN:
                    best, best_action = scores[o * width + c], o * width + c
    return best_action
