"""Compiled game loops: apply a move, let a linear controller choose, play, roll out.

Everything here runs without Python in the loop; the Python side (:mod:`nsrl.tetris.engine`)
checks the arguments, builds the arrays and splits the games between processes.
"""

from __future__ import annotations

import numba
import numpy as np

from nsrl.tetris import dt
from nsrl.tetris.bits import bit_length, trailing_zeros
from nsrl.tetris.kernels import _COLUMN_BITS, RULE_CLEAR_FIRST, layout, prepare
from nsrl.tetris.pieces import BOTTOM, HEIGHT, ROW_BITS, WIDTH
from nsrl.tetris.pieces_rng import next_piece, seed_stream
from nsrl.tetris.scan import CHOOSE, FEATURES, scan


@numba.njit(cache=True)
def apply_move(ws: np.ndarray, p: int, o: int, c: int, width: int, height: int,
               rule: int) -> tuple[int, bool]:  # pragma: no cover - compiled
    """Drop piece p with orientation o at column c; remove full lines by ``rule``.

    Returns:
        (lines removed, whether the game is over). Under RULE_END a piece that sticks out of
        the top removes nothing.
    """
    rows, cols, hts, _, _, _, _, _, _, _, _, _ = layout(width, height)
    d = 0
    for k in range(WIDTH[p, o]):
        d = max(d, ws[hts + c + k] - BOTTOM[p, o, k])
    ph, full = HEIGHT[p, o], 0
    for i in range(ph):
        ws[rows + d + i] |= ROW_BITS[p, o, i] << c
        if ws[rows + d + i] == (1 << width) - 1:
            full |= 1 << i
    for k in range(WIDTH[p, o]):
        ws[cols + c + k] |= _COLUMN_BITS[p, o, k] << d
    lines = 0
    if full != 0 and (d + ph <= height or rule == RULE_CLEAR_FIRST):
        for i in range(ph - 1, -1, -1):  # from the top, so lower row numbers stay valid
            if full >> i & 1:
                r = d + i
                for q in range(r, height + 3):
                    ws[rows + q] = ws[rows + q + 1]
                ws[rows + height + 3] = 0
                low = (1 << r) - 1
                for j in range(width):
                    col = ws[cols + j]
                    ws[cols + j] = (col & low) | ((col >> 1) & ~low)
                lines += 1
    top = 0
    for j in range(width):
        ws[hts + j] = bit_length(ws[cols + j])
        top = max(top, ws[hts + j])
    return lines, top > height


@numba.njit(cache=True)
def _scratch(n_phi: int) -> tuple:  # pragma: no cover - compiled
    """A feature vector, placement scores (4 * width <= 128), scan's unused outputs."""
    return (np.zeros(n_phi), np.zeros(128), np.empty((0, 0)), np.empty(0, dtype=np.bool_),
            np.empty(0, dtype=np.int64))


@numba.njit(cache=True)
def load(ws: np.ndarray, board: np.ndarray, width: int, height: int) -> None:  # pragma: no cover
    """Set the work array's board to ``board`` (``height`` bit rows); the rows above cleared."""
    rows, cols, hts, _, _, _, _, _, _, _, _, _ = layout(width, height)
    for j in range(width):
        ws[cols + j] = 0
    for r in range(height + 4):
        row = np.int64(board[r]) if r < height else np.int64(0)
        ws[rows + r] = row
        while row != 0:
            j = trailing_zeros(row)
            ws[cols + j] |= np.int64(1) << r
            row &= row - 1
    for j in range(width):
        ws[hts + j] = bit_length(ws[cols + j])


@numba.njit(cache=True)
def play(ws: np.ndarray, rng: np.ndarray, piece: np.ndarray, lines: np.ndarray,
         pieces: np.ndarray, over: np.ndarray, budget: int, width: int, height: int, rule: int,
         need: int, index: np.ndarray, weights: np.ndarray,
         n_phi: int) -> None:  # pragma: no cover - compiled
    """Advance every game not over by up to ``budget`` pieces (all arrays indexed by game).

    The D-T features in their order are played by :mod:`nsrl.tetris.dt` (the same choices,
    found with less work); any other feature set by :func:`nsrl.tetris.scan.scan`.
    """
    if dt.is_dt(index):
        fs, ub, keep = dt.scratch(width, height)
        for g in range(ws.shape[0]):
            w, s = ws[g], rng[g]
            if not over[g]:
                dt.fast_prepare(w, fs, width, height)
            for _ in range(budget):
                if over[g]:
                    break
                p = piece[g]
                a = dt.choose(w, fs, p, width, height, rule, weights, ub, keep)
                got, ended = 0, False
                if not dt.advance(w, fs, p, a, width, height, rule):
                    got, ended = apply_move(w, p, a // width, a % width, width, height, rule)
                    if not ended:
                        dt.fast_prepare(w, fs, width, height)
                settle(g, got, ended, s, pieces, lines, over, piece)
        return
    phi, scores, none_phi, none_ends, none_lines = _scratch(n_phi)
    for g in range(ws.shape[0]):
        w, s = ws[g], rng[g]
        for _ in range(budget):
            if over[g]:
                break
            p = piece[g]
            prepare(w, width, height, need)
            a = scan(w, p, width, height, rule, need, index, weights, phi, scores, CHOOSE,
                     none_phi,
                     none_ends, none_lines)
            got, ended = apply_move(w, p, a // width, a % width, width, height, rule)
            settle(g, got, ended, s, pieces, lines, over, piece)


@numba.njit(cache=True, inline="always")
def settle(g: int, got: int, ended: bool, s: np.ndarray, pieces: np.ndarray, lines: np.ndarray,
           over: np.ndarray, piece: np.ndarray) -> None:  # pragma: no cover - compiled
    """Count game g's placement and its ``got`` lines; end it, or draw its next piece from s."""
    pieces[g] += 1
    lines[g] += got
    if ended:
        over[g] = True
        piece[g] = -1
    else:
        piece[g] = next_piece(s)


@numba.njit(cache=True)
def start(rng: np.ndarray, piece: np.ndarray, seeds: np.ndarray,
          games: np.ndarray) -> None:  # pragma: no cover - compiled
    """Seed stream (seeds[g], games[g]) of each game and draw its first piece."""
    for g in range(rng.shape[0]):
        seed_stream(seeds[g], games[g], rng[g])
        piece[g] = next_piece(rng[g])


@numba.njit(cache=True)
def rollouts(boards: np.ndarray, pieces: np.ndarray, first: np.ndarray, seeds: np.ndarray,
             horizon: int, width: int, height: int, rule: int, need: int, index: np.ndarray,
             weights: np.ndarray, n_phi: int, size: int,
             out_boards: np.ndarray, out_pieces: np.ndarray, returns: np.ndarray,
             steps: np.ndarray, ended: np.ndarray) -> None:  # pragma: no cover - compiled
    """From state i play ``first[i]`` (< 0: the controller's), then up to ``horizon`` more.

    The pieces after the state's come from stream (seeds[i], 0).
    """
    phi, scores, none_phi, none_ends, none_lines = _scratch(n_phi)
    ws = np.zeros(size, dtype=np.int64)
    s = np.empty(4, dtype=np.uint64)
    fast = dt.is_dt(index)  # the D-T features: nsrl.tetris.dt's choices (the same ones)
    fs, ub, keep = dt.scratch(width, height)
    for i in range(boards.shape[0]):
        load(ws, boards[i], width, height)
        seed_stream(seeds[i], 0, s)
        p, a = pieces[i], first[i]
        total = made = 0
        over = False
        if fast:
            dt.fast_prepare(ws, fs, width, height)
        while True:
            if a < 0:
                if fast:
                    a = dt.choose(ws, fs, p, width, height, rule, weights, ub, keep)
                else:
                    prepare(ws, width, height, need)
                    a = scan(ws, p, width, height, rule, need, index, weights, phi, scores,
                             CHOOSE, none_phi, none_ends, none_lines)
            if fast and dt.advance(ws, fs, p, a, width, height, rule):
                got, over = 0, False
            else:
                got, over = apply_move(ws, p, a // width, a % width, width, height, rule)
                if fast and not over:
                    dt.fast_prepare(ws, fs, width, height)
            made += 1
            total += got
            if over:
                p = -1
                break
            p = next_piece(s)
            if made > horizon:
                break
            a = -1
        returns[i], steps[i], ended[i], out_pieces[i] = total, made, over, p
        for r in range(height):
            out_boards[i, r] = ws[r]


@numba.njit(cache=True)
def placements(boards: np.ndarray, pieces: np.ndarray, width: int, height: int, rule: int,
               need: int, index: np.ndarray, n_phi: int, size: int, phi_out: np.ndarray,
               ends: np.ndarray, lines: np.ndarray) -> None:  # pragma: no cover - compiled
    """Features of every placement of every state, at ``[state, o * width + c]``."""
    phi, scores, _, _, _ = _scratch(n_phi)
    ws = np.zeros(size, dtype=np.int64)
    for i in range(boards.shape[0]):
        load(ws, boards[i], width, height)
        prepare(ws, width, height, need)
        scan(ws, pieces[i], width, height, rule, need, index, scores, phi, scores, FEATURES,
             phi_out[i], ends[i], lines[i])
