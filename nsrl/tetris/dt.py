"""A CHOOSE-only kernel for the D-T features: the controller's placement, found by bounds.

Used by :func:`nsrl.tetris.moves.play` and :func:`nsrl.tetris.moves.rollouts` when the
feature set is exactly the 9 D-T features in their order (:func:`is_dt`); it picks the
placement the generic :func:`nsrl.tetris.scan.scan` picks (tie rule included), with less work:

1. Pass 1: every placement gets an upper bound of its score from its cheapest parts (the
   landing row, the row transitions and the holes exact; the other features bounded), in a
   loop over the placements without data-dependent branches. Placements that remove lines
   get their bound in pass 2.
2. Pass 2: the placement of the highest bound is scored exactly; then, in order, every
   placement whose bound reaches the best exact score found so far is bounded more closely
   (every feature but the wells exact) and, if that bound reaches it too, scored exactly.
3. The choice is the first placement of the best exact score, provided every other exact
   score is below it by more than 4 TIE_MARGIN; otherwise (scores within 4e-30 of each other
   but not equal: weights near 0, say) every placement is scored exactly and the generic
   running-best rule applied, in order.

Why the first placement of the best score is the generic rule's choice: that rule keeps a
running best and lets a later placement replace it only if it scores more by more than
TIE_MARGIN. If every score either equals the maximum M or lies below M - 2 TIE_MARGIN, the
running best before the first placement scoring M is below M - 2 TIE_MARGIN (or is the
initial GAME_OVER_SCORE), so that placement replaces it, and nothing after it scores more.
A placement left out in pass 2 has a bound below an exact score by more than ``err`` (the
bound's and the score's rounding errors, from the weights and the board's size, plus 1e-28),
so its own score is below M - 2 TIE_MARGIN too. An exact score is added up as the generic
scan adds it (:func:`_dt_score`), so it is the same number.

A placement that removes lines from a board without holes is scored from the afterstate
before the lines go: removing full rows from columns without holes lowers every column by
the lines removed, so only the row transitions change (2 a line: the rows that stay keep
theirs and each removed one makes room for an empty row). With a hole somewhere (under the
piece included) the columns' features change too, and the afterstate is rebuilt from its
columns as :func:`nsrl.tetris.kernels._place_clearing` does, after a bound (column
transitions and hole depth drop by at most the lines in each holed column, the wells do not
drop, the holes and rows with holes do not grow) has failed to leave it out.

The board's per-row and per-column parts (the fast state, :func:`fast_layout`) are computed
once per game by :func:`fast_prepare` and updated by :func:`advance` after a placement that
removes no line (most of them); after one that does, they are computed again.

numba adds reference counting (atomic operations) where an array is passed to an inlined
helper or to a function it cannot inline; the loops here index their arrays directly and the
helpers take numbers.
"""

from __future__ import annotations

import numba
import numpy as np

from nsrl.tetris.bits import bit_length, popcount
from nsrl.tetris.kernels import (
    _COLUMN_BITS,
    _INSIDE_DIFFERENCES,
    GAME_OVER_SCORE,
    RULE_END,
    TIE_MARGIN,
    _column_transitions,
    _depth,
    _row_transitions,
    _wells,
    diff_count,
    diversity,
    layout,
)
from nsrl.tetris.pieces import BOTTOM, HEIGHT, N_ORIENTATIONS, ROW_BITS, ROW_CELLS, TOP, WIDTH

_U = numba.uint64
N_DT = 9  # the D-T features, kernel positions 0..8 in order


def _tables() -> tuple:
    """Per orientation (entry p * 4 + o) and per box column or row (entry (p * 4 + o) * 4 + k)."""
    n = BOTTOM.shape[0] * 4
    sb = np.zeros(n, dtype=np.int64)        # the bottoms of the columns, summed
    mp = np.zeros(n, dtype=np.int64)        # row-transition masks, 16 bits a row (see _bounds)
    m = np.zeros(n * 4, dtype=np.int64)     # the same, one row each
    cp = np.zeros(n, dtype=np.int64)        # cells of each row, a byte each
    land = np.zeros(n, dtype=np.float64)    # (height - 1) / 2
    off = np.zeros(n * 4, dtype=np.int64)   # box column min(k, width - 1)
    bo = np.zeros(n * 4, dtype=np.int64)    # its bottom
    for p in range(BOTTOM.shape[0]):
        for o in range(N_ORIENTATIONS[p]):
            po = p * 4 + o
            pw, ph = int(WIDTH[p, o]), int(HEIGHT[p, o])
            land[po] = (ph - 1) / 2.0
            sb[po] = int(BOTTOM[p, o, :pw].sum())
            for k in range(4):
                off[po * 4 + k] = min(k, pw - 1)
                bo[po * 4 + k] = BOTTOM[p, o, min(k, pw - 1)]
            for i in range(ph):
                bits = int(ROW_BITS[p, o, i])
                x, y = (bits & -bits).bit_length() - 1, bits.bit_length() - 1
                assert bits == (1 << (y + 1)) - (1 << x)  # each row of a piece is one run
                # The cells left of the run (x - 1) and right of it (y + 1), in a row word
                # with the side walls as bits 0 and width + 1 (column k is bit k + 1).
                m[po * 4 + i] = (1 << x) | (1 << (y + 2))
                mp[po] |= m[po * 4 + i] << (16 * i)
                cp[po] |= int(ROW_CELLS[p, o, i]) << (8 * i)
    for t in (sb, mp, m, cp, land, off, bo):
        t.flags.writeable = False
    return sb, mp, m, cp, land, off, bo


_SB, _MP, _M, _CP, _LAND, _OFF, _BO = _tables()
_PW = WIDTH.reshape(-1)
_PH = HEIGHT.reshape(-1)
_B = BOTTOM.reshape(-1)
_T = TOP.reshape(-1)
_CELLS = (TOP - BOTTOM).reshape(-1)
_CB = _COLUMN_BITS.reshape(-1)
_ROW_BITS = ROW_BITS.reshape(-1)
_ROW_CELLS = ROW_CELLS.reshape(-1)

# Scalar slots of the fast state.
(F_ROWT, F_COLT, F_HOLES, F_WELLS, F_DEPTH, F_HR, F_TOP, F_DIFFS, F_HOLE_COLS,
 F_N_HOLE_COLS) = range(10)
N_F = 10
_NO_HEIGHT = -1000  # the height beside the board: no difference in -2..2 with it


@numba.njit(cache=True)
def fast_layout(width: int, height: int) -> tuple:  # pragma: no cover - compiled
    """Offsets of the parts of the fast state (an int64 array), then its size.

    Walled rows (a row word shifted left by one, the side walls as bits 0 and width + 1),
    packed rows (4 walled rows from row r, 16 bits each, boards up to 14 wide), packed empty
    counts (of rows r..r+3, a byte each), prefix sums of the heights, padded prefix sums of
    the wells (entry t: the wells of columns before t - 1), prefix sums of the
    height-difference counts, whether each column has a hole, each column's wells, the
    column words with two walls (-1) on the left and four on the right, the heights with
    _NO_HEIGHT on each side, the scalar slots, scratch columns.
    """
    wr = 0
    pr = wr + height + 4
    qr = pr + height + 1
    hp = qr + height + 1
    wa = hp + width + 1
    dp = wa + width + 3
    ch = dp + width
    wl = ch + width
    cp = wl + width
    hh = cp + width + 6
    sl = hh + width + 2
    tm = sl + N_F
    size = tm + width
    return wr, pr, qr, hp, wa, dp, ch, wl, cp, hh, sl, tm, size


@numba.njit(cache=True)
def scratch(width: int, height: int) -> tuple:  # pragma: no cover - compiled
    """The arrays :func:`choose` and :func:`advance` work in: fast state, bounds, kept ones."""
    return (np.zeros(fast_layout(width, height)[-1], dtype=np.int64), np.empty(8 * width),
            np.empty(4 * width + 1, dtype=np.int64))


@numba.njit(inline="always", cache=True)
def _empty_cells(row: int, width: int) -> int:  # pragma: no cover - compiled
    return width - popcount(row)


@numba.njit(cache=True)
def fast_prepare(ws: np.ndarray, fs: np.ndarray, width: int,
                 height: int) -> None:  # pragma: no cover - compiled
    """The fast state of the board in ``ws`` (rows, columns, heights)."""
    rows, cols, hts, _, _, _, _, _, _, _, _, _ = layout(width, height)
    wr, pr, qr, hp, wa, dp, ch, wl, cp, hh, sl, tm, _ = fast_layout(width, height)
    total = 0
    sides = 1 | (1 << (width + 1))
    for r in range(height + 4):
        row = ws[_U(rows + r)]
        fs[_U(wr + r)] = (row << 1) | sides
        total += _row_transitions(row, width) * (r < height)
    fs[sl + F_ROWT] = total
    colt = holes = depth = hole_rows = top = diffs = 0
    hole_cols = np.int64(0)
    fs[hp] = 0
    fs[cp] = fs[cp + 1] = -1
    for j in range(width, width + 4):
        fs[_U(cp + 2 + j)] = -1
    fs[hh] = fs[hh + width + 1] = _NO_HEIGHT
    for j in range(width):
        col = ws[_U(cols + j)]
        h = ws[_U(hts + j)]
        fs[_U(cp + 2 + j)] = col
        fs[_U(hh + 1 + j)] = h
        colt += _column_transitions(col, height)
        n_holes = h - popcount(col)
        holes += n_holes
        fs[_U(ch + j)] = n_holes > 0
        hole_cols |= np.int64(n_holes > 0) << j
        depth += _depth(col)
        hole_rows |= ~col & ((1 << h) - 1)
        top = max(top, h)
        fs[_U(hp + j + 1)] = fs[_U(hp + j)] + h
        fs[_U(dp + j)] = diffs
        diffs += diff_count(ws[_U(hts + j + 1)] - h) * (j < width - 1)
    fs[sl + F_COLT] = colt
    fs[sl + F_HOLES] = holes
    fs[sl + F_DEPTH] = depth
    fs[sl + F_HR] = hole_rows
    fs[sl + F_TOP] = top
    fs[sl + F_HOLE_COLS] = hole_cols
    fs[sl + F_N_HOLE_COLS] = popcount(hole_cols)
    fs[sl + F_DIFFS] = diffs
    fs[wa] = 0
    fs[wa + 1] = 0
    for j in range(width):
        fs[_U(wl + j)] = _wells(fs[_U(cp + 2 + j)], fs[_U(cp + 1 + j)], fs[_U(cp + 3 + j)], -1)
        fs[_U(wa + j + 2)] = fs[_U(wa + j + 1)] + fs[_U(wl + j)]
    fs[sl + F_WELLS] = fs[wa + width + 1]
    fs[wa + width + 2] = fs[wa + width + 1]
    # Packed rows and empty counts (each from rows r..r+3), rolled down from the top.
    high = min(top, height)
    e = (_empty_cells(ws[_U(rows + high + 1)], width)
         | (_empty_cells(ws[_U(rows + high + 2)], width) << 8)
         | (_empty_cells(ws[_U(rows + high + 3)], width) << 16))
    packed = (fs[_U(wr + high + 1)] | (fs[_U(wr + high + 2)] << 16)
              | (fs[_U(wr + high + 3)] << 32))
    for r in range(high, -1, -1):
        e = ((e << 8) | _empty_cells(ws[_U(rows + r)], width)) & 0xFFFFFFFF
        fs[_U(qr + r)] = e
        packed = (packed << 16) | fs[_U(wr + r)]  # the row 4 above leaves the word
        fs[_U(pr + r)] = packed


@numba.njit(inline="always", cache=True)
def _zero_bytes(x: int) -> int:  # pragma: no cover - compiled
    """0x80 in each of the 4 low bytes of x that is 0 (exact, byte by byte)."""
    return ~(((x & 0x7F7F7F7F) + 0x7F7F7F7F) | x | 0x7F7F7F7F) & 0x80808080


@numba.njit(inline="always", cache=True)
def _dt_score(landing: float, eroded: float, rowt: int, colt: int, holes: int, wells: int,
              depth: int, hole_rows: int, div: int, w0: float, w1: float, w2: float, w3: float,
              w4: float, w5: float, w6: float, w7: float,
              w8: float) -> float:  # pragma: no cover - compiled
    """The score as the generic scan adds it: from 0, feature by feature, in order."""
    score = 0.0
    score += landing * w0
    score += eroded * w1
    score += float(rowt) * w2
    score += float(colt) * w3
    score += float(holes) * w4
    score += float(wells) * w5
    score += float(depth) * w6
    score += float(hole_rows) * w7
    score += float(div) * w8
    return score


@numba.njit(cache=True)
def choose(ws: np.ndarray, fs: np.ndarray, p: int, width: int, height: int, rule: int,
           w: np.ndarray, ub: np.ndarray, keep: np.ndarray) -> int:  # pragma: no cover
    """The D-T controller's placement ``o * width + c`` of piece p (weights ``w``).

    ``fs``: the board's fast state (:func:`fast_prepare`); ``ub`` (8 * width floats) and
    ``keep`` (4 * width + 1 ints): scratch. The arrays are only indexed here (passing them
    to an inlined helper would add numba's reference counting to the loops).
    """
    rows, cols, _, _, _, _, _, _, _, _, _, _ = layout(width, height)
    wr, pr, qr, hp, wa, dp, ch, wl, cp, hh, sl, tm, _ = fast_layout(width, height)
    full_row = (1 << width) - 1
    w0, w1, w2, w3, w4, w5, w6, w7, w8 = w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]
    s_rowt, s_colt, s_holes = fs[sl + F_ROWT], fs[sl + F_COLT], fs[sl + F_HOLES]
    s_wells, s_depth, s_hr = fs[sl + F_WELLS], fs[sl + F_DEPTH], fs[sl + F_HR]
    s_diffs, hole_cols = fs[sl + F_DIFFS], fs[sl + F_HOLE_COLS]
    pc_hr = popcount(s_hr)
    # Rounding: a bound and a score are sums of at most 16 terms, each a weight times a
    # number of magnitude below fmax (or of such terms' sums): within 16 x 2^-53 x
    # sum |w| fmax of their real values; err is 16 times that, plus 1e-28 for the margin.
    fmax = float((width + 6) * (height + 5) * (height + 5))
    err = 256.0 * 2.0 ** -53 * fmax * (abs(w0) + abs(w1) + abs(w2) + abs(w3) + abs(w4)
                                       + abs(w5) + abs(w6) + abs(w7) + abs(w8)) + 1e-28
    big_wells = (width + 6) * (height + 4) * (height + 5) // 2
    # Pass 1's bound, for a placement removing no line: the landing height, row transitions
    # and holes exact; column transitions at least s_colt (+2 with a new hole: g3) or at most
    # s_colt + 8; wells at least those of the columns the piece leaves alone (or at most
    # those + big_wells); hole depth within s_depth (+1 with a new hole) .. s_depth + 4;
    # rows with holes within pc_hr (+1 with a new hole on a board without one) .. pc_hr +
    # the new holes; diversity within 0 .. 5.
    const = (float(s_depth + (0 if w6 <= 0 else 4)) * w6
             + float(min(5, width - 1) if w8 > 0 else 0) * w8
             + float(s_rowt) * w2 + float(s_holes) * w4 + float(pc_hr) * w7
             + float(s_wells + (big_wells if w5 > 0 else 0)) * w5
             + float(s_colt + (0 if w3 <= 0 else 8)) * w3)
    g3 = ((2.0 * w3 if w3 <= 0 else 0.0) + (w6 if w6 <= 0 else 0.0)
          + (w7 if w7 <= 0 and s_hr == 0 else 0.0))
    g4 = w4 + (w7 if w7 > 0 else 0.0)
    narrow = width <= 14
    inf = np.inf
    n_o = N_ORIENTATIONS[p]
    # Pass 1: every placement's bound (infinite for one that removes lines or sticks out of
    # the top: bounded in pass 2); the highest.
    top_u = -inf
    m2 = -2.0 * w2
    for o in range(n_o):
        po = p * 4 + o
        box = po * 4
        pw, ph, cells, rmask = _PW[_U(po)], _PH[_U(po)], _CP[_U(po)], _MP[_U(po)]
        off0, off1, off2, off3 = (_OFF[_U(box)], _OFF[_U(box + 1)], _OFF[_U(box + 2)],
                                  _OFF[_U(box + 3)])
        bo0, bo1, bo2, bo3 = _BO[_U(box)], _BO[_U(box + 1)], _BO[_U(box + 2)], _BO[_U(box + 3)]
        sb = _SB[_U(po)]
        base = const + _LAND[_U(po)] * w0 + float(2 * ph) * w2 + float(sb) * g4
        for c in range(width - pw + 1):
            h = hh + 1 + c
            d = max(max(max(fs[_U(h + off0)] - bo0, fs[_U(h + off1)] - bo1),
                        max(fs[_U(h + off2)] - bo2, fs[_U(h + off3)] - bo3)), 0)
            if narrow:
                rc = popcount(fs[_U(pr + d)] & (rmask << c))
            else:
                rc = 0
                for i in range(4):
                    rc += popcount(fs[_U(wr + d + i)] & (_M[_U(box + i)] << c))
            hd = pw * d - (fs[_U(hp + c + pw)] - fs[_U(hp + c)])  # the new holes, less sb
            old_w = fs[_U(wa + c + pw + 2)] - fs[_U(wa + c)]
            u = (((base + float(d) * w0) + (float(rc) * m2 + float(hd) * g4))
                 + (float(min(hd + sb, 1)) * g3 - float(old_w) * w5))
            over = d + ph > height
            special = (_zero_bytes(fs[_U(qr + d)] ^ cells) != 0) | over
            ub[_U(o * width + c)] = inf if special else u
            u = -inf if over else u
            ub[_U(4 * width + o * width + c)] = u  # where the first placement goes
            top_u = max(top_u, u)
    top_k = -1
    if top_u > -inf:
        for o in range(n_o):
            for c in range(width - _PW[_U(p * 4 + o)] + 1):
                if ub[_U(4 * width + o * width + c)] == top_u:
                    top_k = o << 6 | c
                    break
            if top_k >= 0:
                break
    # Pass 2: the highest bound's placement exactly, then, in order, those whose bound
    # reaches the best exact score found (``keep``: o << 6 | c). If the scores are too close
    # to tell the first best apart (see the module's docstring), a second attempt scores
    # every placement and applies the running-best rule.
    for attempt in range(2):
        exhaustive = attempt == 1
        best = GAME_OVER_SCORE
        n_keep, j = 0, 0
        if exhaustive:
            for o in range(n_o):
                for c in range(width - _PW[_U(p * 4 + o)] + 1):
                    keep[_U(n_keep)] = o << 6 | c
                    n_keep += 1
        elif top_k >= 0:
            keep[0] = top_k
            n_keep = 1
        kept = exhaustive
        while True:
            if j >= n_keep:
                if kept:
                    break
                kept = True  # the others: those whose bound reaches the best so far
                for o in range(n_o):
                    for c in range(width - _PW[_U(p * 4 + o)] + 1):
                        keep[_U(n_keep)] = o << 6 | c
                        n_keep += (ub[_U(o * width + c)] + err >= best) & ((o << 6 | c) != top_k)
                continue
            k = keep[_U(j)]
            j += 1
            o, c = k >> 6, k & 63
            a = o * width + c
            floor = -inf if exhaustive else best
            if ub[_U(a)] + err < floor:
                keep[_U(j - 1)] = -1
                continue
            po = p * 4 + o
            box = po * 4
            pw, ph, land = _PW[_U(po)], _PH[_U(po)], _LAND[_U(po)]
            d = 0
            for k in range(pw):
                d = max(d, fs[_U(hh + 1 + c + k)] - _B[_U(box + k)])
            score = -inf
            done = rebuild = False
            full = 0
            if d + ph > height:
                score = GAME_OVER_SCORE
                done = True
                rebuild = rule != RULE_END
            else:
                zeros = _zero_bytes(fs[_U(qr + d)] ^ _CP[_U(po)])
                full = (((zeros >> 7) & 1) | ((zeros >> 14) & 2) | ((zeros >> 21) & 4)
                        | ((zeros >> 28) & 8))
                if full >> ph != 0:  # a row of the board full already: not a game's state
                    done = rebuild = True
                elif full != 0:
                    # Lines go: pass 1's bound, plus the eroded cells and 2 row transitions a
                    # line; from a board with a hole (under the piece too), looser: column
                    # transitions and hole depth drop by at most the lines in each holed
                    # column, the holes and the rows with holes may drop to 0.
                    lines = popcount(zeros)
                    eroded = ((((_CP[_U(po)] & ((zeros >> 7) * 0xFF)) * 0x01010101) >> 24)
                              & 0xFF)
                    bound = (ub[_U(4 * width + a)] + float(lines * eroded) * w1
                             + float(2 * lines) * w2)
                    hd = pw * d + _SB[_U(po)] - (fs[_U(hp + c + pw)] - fs[_U(hp + c)])
                    holed = hole_cols != 0 or hd != 0
                    if holed:
                        many = popcount(hole_cols) + pw
                        bound += (float(-2 * lines * many) * (w3 if w3 <= 0 else 0.0)
                                  + float(-lines * many) * (w6 if w6 <= 0 else 0.0)
                                  - float(s_holes + hd) * (w4 if w4 <= 0 else 0.0)
                                  - float(pc_hr) * (w7 if w7 <= 0 else 0.0))
                    if not (holed and w5 > 0) and bound + err < floor:
                        done = True  # score -inf: below the best
            if not done:
                if narrow:
                    rc = popcount(fs[_U(pr + d)] & (_MP[_U(po)] << c))
                else:
                    rc = 0
                    for i in range(4):
                        rc += popcount(fs[_U(wr + d + i)] & (_M[_U(box + i)] << c))
                rowt = s_rowt + 2 * ph - 2 * rc
                holes = s_holes + pw * d + _SB[_U(po)] - (fs[_U(hp + c + pw)] - fs[_U(hp + c)])
                wells = s_wells - (fs[_U(wa + c + pw + 2)] - fs[_U(wa + c)])
                # Column transitions, hole depth, rows with holes; new holes under the piece.
                colt, depth, hr, covered = s_colt, s_depth, s_hr, np.int64(0)
                for k in range(pw):
                    h = fs[_U(hh + 1 + c + k)]
                    low = d + _B[_U(box + k)]
                    cov = low > h
                    colt += 2 * cov
                    depth += _CELLS[_U(box + k)] * (cov | fs[_U(ch + c + k)])
                    hr |= (1 << low) - (1 << h)
                    covered |= np.int64(cov) << k
                n_hr = popcount(hr)
                # Pattern diversity: the pairs from (c - 1, c) to (c + pw - 1, c + pw)
                # change; those inside the piece take the orientation's own differences.
                low, high = max(c - 1, 0), min(c + pw, width - 1)
                div = diversity(s_diffs - fs[_U(dp + high)] + fs[_U(dp + low)]
                                + _INSIDE_DIFFERENCES[_U(po)]
                                + diff_count(d + _T[_U(box)] - fs[_U(hh + c)])
                                + diff_count(fs[_U(hh + c + pw + 1)] - d - _T[_U(box + pw - 1)]))
                lines, eroded = 0, 0
                if full != 0:
                    for i in range(ph):
                        lines += full >> i & 1
                        eroded += (full >> i & 1) * _ROW_CELLS[_U(box + i)]
                    if hole_cols != 0 or covered != 0:
                        # Lines go from a board with a hole: bounded, then rebuilt.
                        holed = popcount(hole_cols) + popcount(covered)
                        bound = _dt_score(
                            d + land, float(lines * eroded), rowt + 2 * lines,
                            colt - 2 * lines * holed if w3 <= 0 else colt,
                            holes if w4 > 0 else 0, wells,
                            depth - lines * holed if w6 <= 0 else depth,
                            n_hr if w7 > 0 else 0, 0 if w8 <= 0 else min(5, width - 1),
                            w0, w1, w2, w3, w4, w5, w6, w7, w8)
                        done = True
                        rebuild = not (w5 <= 0 and bound + err < floor)
            if not done:
                # No line removed, or lines removed from a board without holes: the
                # features of the afterstate before the lines go, 2 row transitions fewer
                # a line.
                rowt += 2 * lines
                bound = _dt_score(d + land, float(lines * eroded), rowt, colt, holes, wells,
                                  depth, n_hr, div, w0, w1, w2, w3, w4, w5, w6, w7, w8)
                if w5 <= 0 and bound + err < floor:
                    score = -inf
                else:
                    left, col = fs[_U(cp + c)], fs[_U(cp + c + 1)]
                    for k in range(pw + 2):  # column c - 1 + k, its right one box column k
                        right = (fs[_U(cp + c + 2 + k)]
                                 | (_CB[_U(box + min(k, 3))] << d) * (k < pw))
                        wells += _wells(col, left, right, -1)
                        left, col = col, right
                    score = _dt_score(d + land, float(lines * eroded), rowt, colt, holes,
                                      wells, depth, n_hr, div, w0, w1, w2, w3, w4, w5, w6, w7,
                                      w8)
            if rebuild:
                # Lines removed from a board with a hole, or a piece sticking out of the top
                # (RULE_CLEAR_FIRST): the afterstate rebuilt from its columns, as the generic
                # kernels._place_clearing does (inline: a call would bring numba's reference
                # counting into this function).
                full = 0
                for i in range(4):
                    full |= int((ws[_U(rows + d + i)] | (_ROW_BITS[_U(box + i)] << c))
                                == full_row) << i
                if d + ph > height and (full == 0 or max(fs[sl + F_TOP], d + ph)
                                        - popcount(full) > height):
                    score = GAME_OVER_SCORE
                else:
                    rowt, lines, eroded, inside = s_rowt, 0, 0, 0
                    for i in range(ph):
                        row = ws[_U(rows + d + i)]
                        if d + i < height:
                            rowt -= _row_transitions(row, width)
                            inside += 1
                        if full >> i & 1:
                            lines += 1
                            eroded += _ROW_CELLS[_U(box + i)]
                        else:
                            rowt += _row_transitions(row | (_ROW_BITS[_U(box + i)] << c), width)
                    rowt += 2 * (inside - ph + lines)
                    colt = holes = depth = hr = 0
                    for q in range(width):
                        col = ws[_U(cols + q)]
                        if c <= q < c + pw:
                            col |= _CB[_U(box + q - c)] << d
                        for i in range(ph - 1, -1, -1):
                            if full >> i & 1:
                                low = (1 << (d + i)) - 1
                                col = (col & low) | ((col >> 1) & ~low)
                        fs[_U(tm + q)] = col
                        h = bit_length(col)
                        colt += _column_transitions(col, height)
                        holes += h - popcount(col)
                        depth += _depth(col)
                        hr |= ~col & ((1 << h) - 1)
                    wells, diffs, left = 0, 0, -1
                    for q in range(width):
                        right = fs[_U(tm + q + 1)] if q + 1 < width else -1
                        wells += _wells(fs[_U(tm + q)], left, right, -1)
                        if q + 1 < width:
                            diffs += diff_count(bit_length(right) - bit_length(fs[_U(tm + q)]))
                        left = fs[_U(tm + q)]
                    score = _dt_score(d + land, float(lines * eroded), rowt, colt, holes, wells,
                                      depth, popcount(hr), diversity(diffs), w0, w1, w2, w3,
                                      w4, w5, w6, w7, w8)
            ub[_U(a)] = score  # from here on the exact score (-inf: below the best)
            best = max(best, score)
        if exhaustive:  # the generic rule, in order
            best, chosen = GAME_OVER_SCORE, 0
            for j in range(n_keep):
                k = keep[_U(j)]
                a = (k >> 6) * width + (k & 63)
                if ub[_U(a)] - best > TIE_MARGIN:
                    best, chosen = ub[_U(a)], a
            return chosen
        # The first placement of the best score, if the others are clear of it.
        chosen, clear = 4 * width, best < inf
        for j in range(n_keep):
            k = keep[_U(j)]
            if k < 0:
                continue
            a = (k >> 6) * width + (k & 63)
            s = ub[_U(a)]
            if s == best:
                chosen = min(chosen, a)
            elif s != -inf and not best - s > 4.0 * TIE_MARGIN:
                clear = False
        if clear:
            return chosen if best > GAME_OVER_SCORE else 0
    return 0


@numba.njit(cache=True)
def advance(ws: np.ndarray, fs: np.ndarray, p: int, a: int, width: int, height: int,
            rule: int) -> bool:  # pragma: no cover - compiled
    """Play placement ``a`` of piece p if it removes no line and stays inside the board.

    Then the rows, columns and heights of ``ws`` are those :func:`nsrl.tetris.moves.apply_move`
    leaves, and the fast state ``fs`` is updated where the piece went (the game goes on, no
    line removed). Returns False, changing nothing, for any other placement: the caller plays
    it with apply_move and rebuilds ``fs`` (:func:`fast_prepare`). No function is called from
    here, so that numba counts no references.
    """
    rows, cols, hts, _, _, _, _, _, _, _, _, _ = layout(width, height)
    wr, pr, qr, hp, wa, dp, ch, wl, cp, hh, sl, tm, _ = fast_layout(width, height)
    o = a // width
    c = a - o * width
    po = p * 4 + o
    box = po * 4
    pw, ph = _PW[_U(po)], _PH[_U(po)]
    d = 0
    for k in range(pw):
        d = max(d, ws[_U(hts + c + k)] - _B[_U(box + k)])
    full_row = (1 << width) - 1
    full = 0
    for i in range(ph):
        row = ws[_U(rows + d + i)] | (_ROW_BITS[_U(box + i)] << c)
        full |= int(row == full_row) << i
    if full != 0 or d + ph > height:
        return False
    # No line removed: the piece's rows and columns change, and what depends on them.
    rc = 0
    for i in range(ph):
        bits = _ROW_BITS[_U(box + i)] << c
        rc += popcount(fs[_U(wr + d + i)] & (_M[_U(box + i)] << c))
        ws[_U(rows + d + i)] |= bits
        fs[_U(wr + d + i)] |= bits << 1
    fs[sl + F_ROWT] += 2 * ph - 2 * rc
    colt, depth, hr, hole_cols = fs[sl + F_COLT], fs[sl + F_DEPTH], fs[sl + F_HR], 0
    holes = fs[sl + F_HOLES]
    for k in range(pw):
        j = c + k
        h = ws[_U(hts + j)]
        low = d + _B[_U(box + k)]
        cov = low > h
        colt += 2 * cov
        holes += low - h
        depth += _CELLS[_U(box + k)] * (cov | fs[_U(ch + j)])
        hr |= (1 << low) - (1 << h)
        col = ws[_U(cols + j)] | (_CB[_U(box + k)] << d)
        ws[_U(cols + j)] = col
        ws[_U(hts + j)] = d + _T[_U(box + k)]
        fs[_U(cp + 2 + j)] = col
        fs[_U(hh + 1 + j)] = d + _T[_U(box + k)]
        fs[_U(ch + j)] |= cov
    fs[sl + F_COLT] = colt
    fs[sl + F_HOLES] = holes
    fs[sl + F_DEPTH] = depth
    fs[sl + F_HR] = hr
    for j in range(width):
        hole_cols |= fs[_U(ch + j)] << j
    fs[sl + F_HOLE_COLS] = hole_cols
    fs[sl + F_N_HOLE_COLS] = popcount(hole_cols)
    top = max(fs[sl + F_TOP], d + ph)
    fs[sl + F_TOP] = top
    for j in range(max(c - 1, 0), min(c + pw + 1, width)):
        fs[_U(wl + j)] = _wells(fs[_U(cp + 2 + j)], fs[_U(cp + 1 + j)], fs[_U(cp + 3 + j)], -1)
    diffs = 0
    for j in range(width):
        fs[_U(hp + j + 1)] = fs[_U(hp + j)] + fs[_U(hh + 1 + j)]
        fs[_U(wa + j + 2)] = fs[_U(wa + j + 1)] + fs[_U(wl + j)]
        fs[_U(dp + j)] = diffs
        if j < width - 1:
            diffs += diff_count(fs[_U(hh + 2 + j)] - fs[_U(hh + 1 + j)])
    fs[sl + F_WELLS] = fs[wa + width + 1]
    fs[wa + width + 2] = fs[wa + width + 1]
    fs[sl + F_DIFFS] = diffs
    high = min(top, height)
    e = (_empty_cells(ws[_U(rows + high + 1)], width)
         | (_empty_cells(ws[_U(rows + high + 2)], width) << 8)
         | (_empty_cells(ws[_U(rows + high + 3)], width) << 16))
    packed = (fs[_U(wr + high + 1)] | (fs[_U(wr + high + 2)] << 16)
              | (fs[_U(wr + high + 3)] << 32))
    for r in range(high, max(d - 3, 0) - 1, -1):  # rolled down, as in fast_prepare
        e = ((e << 8) | _empty_cells(ws[_U(rows + r)], width)) & 0xFFFFFFFF
        fs[_U(qr + r)] = e
        packed = (packed << 16) | fs[_U(wr + r)]
        fs[_U(pr + r)] = packed
    return True


@numba.njit(cache=True)
def is_dt(index: np.ndarray) -> bool:  # pragma: no cover - compiled
    """Whether a feature vector's kernel positions are the D-T features in their order."""
    if index.shape[0] != N_DT:
        return False
    for k in range(N_DT):
        if index[k] != k:
            return False
    return True
