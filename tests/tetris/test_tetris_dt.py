"""The D-T kernel (nsrl.tetris.dt) against the generic scan: the same placement on random
boards and weights, the same games and rollouts for several controllers, board sizes and both
overflow rules, and its incremental board state equal to one computed afresh."""

import numba
import numpy as np
import pytest

from nsrl.tetris import SHIPPED, Controller, States, features_of_placements, kernels, moves
from nsrl.tetris import dt as dtk
from nsrl.tetris.engine import _setup
from nsrl.tetris.scan import CHOOSE, scan

SIZES = [(4, 4), (5, 12), (6, 8), (7, 5), (10, 10), (10, 20), (14, 9), (16, 12), (31, 58)]


@numba.njit
def _generic_play(ws, rng, piece, lines, pieces, over, budget, width, height, rule, need, index,
                  weights, n_phi):  # pragma: no cover - compiled
    """moves.play's loop before nsrl.tetris.dt: prepare, scan, apply_move."""
    phi, scores, none_phi, none_ends, none_lines = moves._scratch(n_phi)
    for g in range(ws.shape[0]):
        w, s = ws[g], rng[g]
        for _ in range(budget):
            if over[g]:
                break
            p = piece[g]
            kernels.prepare(w, width, height, need)
            a = scan(w, p, width, height, rule, need, index, weights, phi, scores, CHOOSE,
                     none_phi, none_ends, none_lines)
            got, ended = moves.apply_move(w, p, a // width, a % width, width, height, rule)
            pieces[g] += 1
            lines[g] += got
            if ended:
                over[g] = True
                piece[g] = -1
            else:
                piece[g] = moves.next_piece(s)


@numba.njit
def _choices(boards, ps, width, height, rule, need, index, weights, n_phi, size):
    """(generic scan's choice, dt.choose's choice) on each board and piece."""
    phi, scores, none_phi, none_ends, none_lines = moves._scratch(n_phi)
    ws = np.zeros(size, dtype=np.int64)
    fs, ub, keep = dtk.scratch(width, height)
    out = np.zeros((boards.shape[0], 2), dtype=np.int64)
    for i in range(boards.shape[0]):
        moves.load(ws, boards[i], width, height)
        kernels.prepare(ws, width, height, need)
        out[i, 0] = scan(ws, ps[i], width, height, rule, need, index, weights, phi, scores,
                         CHOOSE, none_phi, none_ends, none_lines)
        dtk.fast_prepare(ws, fs, width, height)
        out[i, 1] = dtk.choose(ws, fs, ps[i], width, height, rule, weights, ub, keep)
    return out


def _random_boards(rs, width, height, n):
    """Columns of random heights with random holes, some boards low and flat; no full row."""
    boards = np.zeros((n, height), dtype=np.int64)
    for i in range(n):
        cap = height if i % 3 else int(rs.integers(1, height + 1))
        tops = rs.integers(0, cap + 1, size=width)
        fill = rs.choice([0.6, 0.85, 1.0])
        for j in range(width):
            for r in range(tops[j]):
                if r == tops[j] - 1 or rs.random() < fill:
                    boards[i, r] |= 1 << j
        for r in range(height):
            if boards[i, r] == (1 << width) - 1:
                boards[i, r] &= ~(1 << int(rs.integers(width)))
    return boards


def _weights(rs, width):
    """DT-10, DT-20, their signs flipped at random, random ones, some 0, tiny and huge ones."""
    dt10, dt20 = SHIPPED["dt-10"].vector(width), SHIPPED["dt-20"].vector(width)
    return [dt10, dt20, -dt10, dt10 * rs.choice([-1.0, 0.0, 1.0], size=9), rs.normal(size=9),
            rs.normal(size=9) * rs.choice([0.0, 1.0], size=9), dt20 * 1e-33, dt10 * 1e-40,
            dt20 * 1e250, np.zeros(9), np.round(rs.normal(size=9) * 4) / 4]


@pytest.mark.parametrize("width, height", SIZES)
@pytest.mark.parametrize("overflow", ["end", "clear-first"])
def test_the_choice_equals_the_generic_scans_on_random_boards(width, height, overflow):
    rs = np.random.default_rng(width * 1000 + height)
    s = _setup(SHIPPED["dt-10"].names(width), width, height, overflow)
    boards = _random_boards(rs, width, height, 60)
    ps = rs.integers(0, 7, size=len(boards))
    for weights in _weights(rs, width):
        got = _choices(boards, ps, width, height, s.rule, s.need, s.index, weights, s.n_phi,
                       s.size)
        bad = np.flatnonzero(got[:, 0] != got[:, 1])
        assert not bad.size, f"weights {weights}: board {bad[0]}, {got[bad[0]]}"


def _games(play, controller, width, height, overflow, n, budget, seed):
    weights = controller.vector(width)
    s = _setup(controller.names(width), width, height, overflow)
    ws = np.zeros((n, s.size), dtype=np.int64)
    rng = np.zeros((n, 4), dtype=np.uint64)
    piece, lines, pieces = (np.zeros(n, dtype=np.int64) for _ in range(3))
    over = np.zeros(n, dtype=np.bool_)
    moves.start(rng, piece, np.full(n, seed, dtype=np.int64), np.arange(n, dtype=np.int64))
    for _ in range(3):  # in several calls, as the engine makes them
        play(ws, rng, piece, lines, pieces, over, budget, width, height, s.rule, s.need,
             s.index, weights, s.n_phi)
    layout = kernels.layout(width, height)
    return lines, pieces, over, piece, ws[:, :layout[2] + width]  # rows, columns, heights


def _bertsekas(width, seed):
    rs = np.random.default_rng(seed)
    names = Controller("bertsekas").names(width)
    weights = dict(zip(names, -np.abs(rs.normal(size=len(names))), strict=True))
    weights["holes"] = -10.0
    return Controller("bertsekas", weights)


CONTROLLERS = {"dt-10": SHIPPED["dt-10"], "dt-20": SHIPPED["dt-20"],
               "dellacherie": SHIPPED["dellacherie"]}


@pytest.mark.parametrize("width, height", [(4, 4), (6, 8), (7, 5), (10, 10), (10, 20),
                                           (16, 12)])
@pytest.mark.parametrize("overflow", ["end", "clear-first"])
@pytest.mark.parametrize("name", ["dt-10", "dt-20", "dellacherie", "bertsekas"])
def test_games_equal_the_generic_paths(width, height, overflow, name):
    controller = CONTROLLERS.get(name) or _bertsekas(width, 5)
    n, budget = (12, 700) if height <= 10 else (4, 1500)
    fast = _games(moves.play, controller, width, height, overflow, n, budget, 7)
    generic = _games(_generic_play, controller, width, height, overflow, n, budget, 7)
    for got, want in zip(fast, generic, strict=True):
        np.testing.assert_array_equal(got, want)
    assert fast[1].sum() > 0


@numba.njit
def _generic_rollouts(boards, pieces, first, seeds, horizon, width, height, rule, need, index,
                      weights, n_phi, size, out_boards, out_pieces, returns, steps,
                      ended):  # pragma: no cover - compiled
    """moves.rollouts before nsrl.tetris.dt."""
    phi, scores, none_phi, none_ends, none_lines = moves._scratch(n_phi)
    ws = np.zeros(size, dtype=np.int64)
    s = np.empty(4, dtype=np.uint64)
    for i in range(boards.shape[0]):
        moves.load(ws, boards[i], width, height)
        moves.seed_stream(seeds[i], 0, s)
        p, a = pieces[i], first[i]
        total = made = 0
        over = False
        while True:
            if a < 0:
                kernels.prepare(ws, width, height, need)
                a = scan(ws, p, width, height, rule, need, index, weights, phi, scores, CHOOSE,
                         none_phi, none_ends, none_lines)
            got, over = moves.apply_move(ws, p, a // width, a % width, width, height, rule)
            made += 1
            total += got
            if over:
                p = -1
                break
            p = moves.next_piece(s)
            if made > horizon:
                break
            a = -1
        returns[i], steps[i], ended[i], out_pieces[i] = total, made, over, p
        for r in range(height):
            out_boards[i, r] = ws[r]


@pytest.mark.parametrize("width, height, overflow", [(6, 8, "end"), (10, 10, "clear-first"),
                                                     (10, 20, "end")])
def test_rollouts_equal_the_generic_path(width, height, overflow):
    rs = np.random.default_rng(width + height)
    controller = SHIPPED["dt-10"]
    weights = controller.vector(width)
    s = _setup(controller.names(width), width, height, overflow)
    boards = _random_boards(rs, width, height, 40)
    boards[boards.sum(axis=1) > 0]  # keep some low boards too
    pieces = rs.integers(0, 7, size=len(boards))
    first = np.where(rs.random(len(boards)) < 0.5, -1, 0)
    seeds = rs.integers(0, 1000, size=len(boards))
    results = []
    for run in (moves.rollouts, _generic_rollouts):
        out = (np.zeros_like(boards), np.zeros(len(boards), dtype=np.int64),
               np.zeros(len(boards), dtype=np.int64), np.zeros(len(boards), dtype=np.int64),
               np.zeros(len(boards), dtype=np.bool_))
        run(boards, pieces, first, seeds, 30, width, height, s.rule, s.need, s.index, weights,
            s.n_phi, s.size, *out)
        results.append(out)
    for got, want in zip(*results, strict=True):
        np.testing.assert_array_equal(got, want)


@numba.njit
def _incremental_mismatches(width, height, rule, weights, n, seed):
    """Play n pieces with dt.advance; count fast-state entries unlike a fresh fast_prepare."""
    size = kernels.layout(width, height)[-1]
    ws = np.zeros(size, dtype=np.int64)
    fs, ub, keep = dtk.scratch(width, height)
    fresh = fs.copy()
    s = np.empty(4, dtype=np.uint64)
    moves.seed_stream(seed, 0, s)
    dtk.fast_prepare(ws, fs, width, height)
    wr, pr, qr, hp, wa, dp, ch, wl, cp, hh, sl, tm, n_fs = dtk.fast_layout(width, height)
    bad = games = advanced = 0
    for _ in range(n):
        p = moves.next_piece(s)
        a = dtk.choose(ws, fs, p, width, height, rule, weights, ub, keep)
        if dtk.advance(ws, fs, p, a, width, height, rule):
            advanced += 1
        else:
            _, ended = moves.apply_move(ws, p, a // width, a % width, width, height, rule)
            if ended:
                ws[:] = 0
                games += 1
                moves.seed_stream(seed, games, s)
            dtk.fast_prepare(ws, fs, width, height)
            continue
        dtk.fast_prepare(ws, fresh, width, height)
        rows_kept = min(fresh[sl + dtk.F_TOP], height)  # packed rows kept up to the top
        for k in range(tm):
            if (pr <= k < qr and (k - pr > rows_kept or width > 14)) or (
                    qr <= k < hp and k - qr > rows_kept):
                continue
            bad += fs[k] != fresh[k]
    return bad, advanced


@pytest.mark.parametrize("width, height", [(4, 4), (6, 8), (10, 10), (10, 20), (16, 12),
                                           (31, 58)])
@pytest.mark.parametrize("rule", [0, 1])
def test_the_incremental_state_equals_one_computed_afresh(width, height, rule):
    rs = np.random.default_rng(width * height + rule)
    for weights in (SHIPPED["dt-10"].vector(width), rs.normal(size=9)):
        bad, advanced = _incremental_mismatches(width, height, rule, weights, 3000, 3)
        assert bad == 0 and advanced > 0


def test_scores_too_close_to_tell_apart_follow_the_running_best_rule():
    # Weights of 1e-40: the scores differ by less than the margin, so the running best is
    # the first placement that does not end the game, whatever the others score.
    width, height = 10, 10
    s = _setup(SHIPPED["dt-10"].names(width), width, height, "end")
    rs = np.random.default_rng(0)
    boards = _random_boards(rs, width, height, 40)
    ps = rs.integers(0, 7, size=len(boards))
    weights = SHIPPED["dt-10"].vector(width) * 1e-40
    got = _choices(boards, ps, width, height, s.rule, s.need, s.index, weights, s.n_phi, s.size)
    placements = features_of_placements(States(boards, ps, width), "holes")
    playable = placements.mask & ~placements.ends
    first = np.where(playable.any(axis=1), playable.argmax(axis=1), 0)
    np.testing.assert_array_equal(got[:, 1], first)
    np.testing.assert_array_equal(got[:, 0], first)
    assert (first > 0).any()
