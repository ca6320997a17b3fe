"""Programs: mixtures and sequences of linear controllers, played by the compiled engine.

The schemes of Scherrer (2014) output more than one linear controller: a *mixture* (API(alpha),
CPI: at each placement one component is drawn with its weight and chooses), a *finite
sequence* (PSDP's sigma_k = pi_k ... pi_1: pi_k places the first piece, pi_{k-1} the second,
and the sequence then stops) or a *loop* over one (PSDP's output and NSPI(m): the sequence
starts again after its last policy). A :class:`Program` holds any of them as arrays the
kernels read, so that games and rollouts of such policies run without Python in the loop:

* components: linear controllers on one feature set (``weights[k]``), or constant actions
  (``const[k] >= 0``: that placement when legal, else placement 0, always legal; nsrl's pi_0
  places every piece at orientation 0, column 0);
* groups: mixtures of components (``member_cum``: cumulative weights within each group);
* ``order``: the group acting at each phase (placement number of the program, from 0), looped
  or not.

A stationary controller is one group of one component, looped. Mixture draws come from their
own stream, ``(seed, MIX_STREAM + game)``, apart from the pieces' ``(seed, game)``: the
placements of one state still see the same pieces (common random numbers), whatever the
mixture draws.

Examples:
    >>> from nsrl.tetris import SHIPPED
    >>> p = Program.of(SHIPPED["dt-10"], 10)
    >>> p.n_components, p.loop, p.order.tolist()
    (1, True, [0])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from nsrl.tetris.bits import popcount
from nsrl.tetris.controllers import Controller
from nsrl.tetris.features import feature_index, feature_names
from nsrl.tetris.kernels import (
    NEED_DIVERSITY,
    NEED_DWELLS,
    NEED_WELLS,
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
    _rbf,
    diversity,
    layout,
    prepare,
)
from nsrl.tetris.moves import apply_move, load, settle
from nsrl.tetris.pieces import BOTTOM, HEIGHT, N_ORIENTATIONS, ROW_BITS, ROW_CELLS, WIDTH
from nsrl.tetris.pieces_rng import next_piece, next_word, seed_stream
from nsrl.tetris.scan import CHOOSE, scan

__all__ = ["MIX_STREAM", "Program"]

MIX_STREAM = 1 << 62  # mixture draws of game g read stream (seed, MIX_STREAM + g)


@dataclass(frozen=True)
class Program:
    """Linear controllers and the rule that picks one at each placement (module doc).

    Attributes:
        features: the components' feature set (one for all).
        names: its features on this board's width, the order scores add in.
        weights: ``(C, d)`` each component's weights (zeros for a constant component).
        const: ``(C,)`` the constant placement of a component, -1 for a linear one.
        group_start: ``(G + 1,)`` where each group's members start in ``member_comp``.
        member_comp: ``(M,)`` the components of each group, group by group.
        member_cum: ``(M,)`` cumulative weights within each group (its last one is 1).
        order: ``(L,)`` the group acting at phase t (``order[t % L]`` for a loop).
        loop: whether the sequence starts again after its last phase (else it stops).
    """

    features: str
    names: tuple[str, ...]
    weights: np.ndarray
    const: np.ndarray
    group_start: np.ndarray
    member_comp: np.ndarray
    member_cum: np.ndarray
    order: np.ndarray
    loop: bool

    @property
    def n_components(self) -> int:
        """How many controllers (and constant actions) it holds."""
        return int(self.weights.shape[0])

    @classmethod
    def build(cls, features: str, width: int, components: Sequence[np.ndarray | int],
              groups: Sequence[Sequence[tuple[float, int]]], order: Sequence[int],
              loop: bool) -> Program:
        """A program from its parts.

        Args:
            features: the feature set of the linear components.
            width: the board's width (per-column features depend on it).
            components: each a weight vector (one weight per feature) or a constant
                placement (an int).
            groups: each a list of ``(weight, component index)``, weights summing to 1.
            order: the group of each phase.
            loop: whether the sequence loops.

        Raises:
            ValueError: inconsistent parts (the message names which).
        """
        names = feature_names(features, width)
        d = len(names)
        weights = np.zeros((len(components), d))
        const = np.full(len(components), -1, dtype=np.int64)
        for k, comp in enumerate(components):
            if isinstance(comp, (int, np.integer)):
                if not 0 <= int(comp) < 4 * width:
                    raise ValueError(f"constant placement {comp} is not in [0, {4 * width})")
                const[k] = int(comp)
            else:
                w = np.asarray(comp, dtype=np.float64)
                if w.shape != (d,) or not np.isfinite(w).all():
                    raise ValueError(f"component {k}: {d} finite weights expected for "
                                     f"{features!r}, got shape {w.shape}")
                weights[k] = w
        if (not groups or not order) and (loop or groups):
            raise ValueError("a program needs at least one group and one phase (only the "
                             "empty finite sequence has none)")
        start, comp_of, cum = [0], [], []
        for g, members in enumerate(groups):
            w = np.array([float(x) for x, _ in members])
            if len(members) == 0 or (w < 0).any() or not np.isclose(w.sum(), 1.0, atol=1e-9):
                raise ValueError(f"group {g}: weights should be >= 0 and sum to 1, got "
                                 f"{w.tolist()}")
            idx = [int(k) for _, k in members]
            if min(idx) < 0 or max(idx) >= len(components):
                raise ValueError(f"group {g} names a component outside 0..{len(components) - 1}")
            c = np.cumsum(w / w.sum())
            c[-1] = 1.0
            comp_of.extend(idx)
            cum.extend(c.tolist())
            start.append(len(comp_of))
        order_arr = np.asarray(order, dtype=np.int64)
        if order_arr.size and (order_arr.min() < 0 or order_arr.max() >= len(groups)):
            raise ValueError(f"order names a group outside 0..{len(groups) - 1}")
        return cls(features, names, weights, const, np.asarray(start, dtype=np.int64),
                   np.asarray(comp_of, dtype=np.int64), np.asarray(cum, dtype=np.float64),
                   order_arr, bool(loop))

    @classmethod
    def of(cls, controller: Controller, width: int) -> Program:
        """The stationary program of one linear controller."""
        return cls.build(controller.features, width, [controller.vector(width)], [[(1.0, 0)]],
                         [0], True)

    def kernel_args(self, width: int) -> tuple:
        """What the kernels read: index, need, weights, const, groups, order, loop."""
        from nsrl.tetris.kernels import need_bits

        index = np.array(feature_index(self.names, width), dtype=np.int64)
        return (index, need_bits(index, width), self.weights, self.const, self.group_start,
                self.member_comp, self.member_cum, self.order, self.loop)


@numba.njit(inline="always", cache=True)
def _uniform(s: np.ndarray) -> float:  # pragma: no cover - compiled
    """A uniform in [0, 1) from the top 53 bits of the next word."""
    return float(next_word(s) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def pick(t: int, group_start: np.ndarray, member_comp: np.ndarray, member_cum: np.ndarray,
         order: np.ndarray, loop: bool, mix: np.ndarray) -> int:  # pragma: no cover - compiled
    """The component acting at phase ``t``; -1 once a finite sequence is over."""
    L = order.shape[0]
    if t >= L and not loop:
        return -1
    g = order[t % L]
    lo, hi = group_start[g], group_start[g + 1]
    if hi - lo == 1:
        return member_comp[lo]
    u = _uniform(mix)
    for j in range(lo, hi - 1):
        if u < member_cum[j]:
            return member_comp[j]
    return member_comp[hi - 1]


@numba.njit(cache=True)
def legal(p: int, a: int, width: int) -> bool:  # pragma: no cover - compiled
    """Whether placement ``a = o * width + c`` is one of piece p's."""
    o, c = a // width, a % width
    return o < N_ORIENTATIONS[p] and c <= width - WIDTH[p, o]


@numba.njit(cache=True)
def choose(ws: np.ndarray, p: int, k: int, width: int, height: int, rule: int, need: int,
           index: np.ndarray, weights: np.ndarray, const: np.ndarray, phi: np.ndarray,
           scores: np.ndarray, none_phi: np.ndarray, none_ends: np.ndarray,
           none_lines: np.ndarray) -> int:  # pragma: no cover - compiled
    """Component k's placement of piece p on the board of ``ws``."""
    if const[k] >= 0:
        return const[k] if legal(p, const[k], width) else 0
    prepare(ws, width, height, need)
    return scan(ws, p, width, height, rule, need, index, weights[k], phi, scores, CHOOSE,
                none_phi, none_ends, none_lines)


@numba.njit(cache=True)
def placement_facts(ws: np.ndarray, p: int, a: int, width: int,
                    height: int) -> tuple[float, float]:  # pragma: no cover - compiled
    """Landing height and eroded piece cells of placement ``a`` (before it is applied)."""
    rows, _, hts, _, _, _, _, _, _, _, _, _ = layout(width, height)
    o, c = a // width, a % width
    d = 0
    for k in range(WIDTH[p, o]):
        d = max(d, ws[hts + c + k] - BOTTOM[p, o, k])
    full_row = (1 << width) - 1
    lines = eroded = 0
    for i in range(HEIGHT[p, o]):
        if (ws[rows + d + i] | (ROW_BITS[p, o, i] << c)) == full_row:
            lines += 1
            eroded += ROW_CELLS[p, o, i]
    return d + (HEIGHT[p, o] - 1) / 2.0, float(lines * eroded)


@numba.njit(cache=True)
def board_features(ws: np.ndarray, width: int, height: int, need: int, landing: float,
                   eroded: float, phi: np.ndarray) -> None:  # pragma: no cover - compiled
    """The kernels' feature vector of the board in ``ws`` as the afterstate of a placement.

    ``landing`` and ``eroded`` describe that placement; every other feature is the board's
    (the same numbers :func:`nsrl.tetris.scan.scan` gives the placement: a test pins it).
    """
    prepare(ws, width, height, need | NEED_WELLS | NEED_DWELLS | NEED_DIVERSITY)
    _, _, hts, _, _, _, _, _, slots, _, _, _ = layout(width, height)
    phi[0] = landing
    phi[1] = eroded
    phi[2] = ws[slots + S_ROWT]
    phi[3] = ws[slots + S_COLT]
    phi[4] = ws[slots + S_HOLES]
    phi[5] = ws[slots + S_WELLS]
    phi[6] = ws[slots + S_DEPTH]
    phi[7] = popcount(ws[slots + S_HOLE_ROWS])
    phi[8] = diversity(ws[slots + S_DIFFS])
    phi[9] = ws[slots + S_DWELLS]
    phi[10] = ws[slots + S_TOP]
    phi[11] = 1.0
    _rbf(phi, ws[slots + S_SUM_H] / width, height)
    for j in range(width):
        phi[17 + j] = ws[hts + j]
    for j in range(width - 1):
        phi[17 + width + j] = abs(phi[17 + j] - phi[18 + j])


@numba.njit(cache=True)
def play(ws: np.ndarray, rng: np.ndarray, mix: np.ndarray, piece: np.ndarray,
         phase: np.ndarray, lines: np.ndarray, pieces: np.ndarray, over: np.ndarray,
         budget: int, width: int, height: int, rule: int, need: int, index: np.ndarray,
         weights: np.ndarray, const: np.ndarray, group_start: np.ndarray,
         member_comp: np.ndarray, member_cum: np.ndarray, order: np.ndarray, loop: bool,
         n_phi: int) -> None:  # pragma: no cover - compiled
    """Advance every game not over by up to ``budget`` pieces (arrays indexed by game).

    A game whose finite sequence is over stops there (``over``, its piece kept, not -1).
    """
    phi, scores = np.zeros(n_phi), np.zeros(128)
    none_phi, none_ends = np.empty((0, 0)), np.empty(0, dtype=np.bool_)
    none_lines = np.empty(0, dtype=np.int64)
    for g in range(ws.shape[0]):
        w, s, m = ws[g], rng[g], mix[g]
        for _ in range(budget):
            if over[g]:
                break
            k = pick(phase[g], group_start, member_comp, member_cum, order, loop, m)
            if k < 0:
                over[g] = True
                break
            phase[g] += 1
            p = piece[g]
            a = choose(w, p, k, width, height, rule, need, index, weights, const, phi, scores,
                       none_phi, none_ends, none_lines)
            got, ended = apply_move(w, p, a // width, a % width, width, height, rule)
            settle(g, got, ended, s, pieces, lines, over, piece)


@numba.njit(cache=True)
def start(rng: np.ndarray, mix: np.ndarray, piece: np.ndarray, seeds: np.ndarray,
          games: np.ndarray) -> None:  # pragma: no cover - compiled
    """Seed game g's piece stream (seeds[g], games[g]) and its mixture stream; first piece."""
    for g in range(rng.shape[0]):
        seed_stream(seeds[g], games[g], rng[g])
        seed_stream(seeds[g], MIX_STREAM + games[g], mix[g])
        piece[g] = next_piece(rng[g])


@numba.njit(cache=True)
def rollouts(boards: np.ndarray, pieces: np.ndarray, first: np.ndarray, seeds: np.ndarray,
             horizon: int, width: int, height: int, rule: int, need: int, index: np.ndarray,
             weights: np.ndarray, const: np.ndarray, group_start: np.ndarray,
             member_comp: np.ndarray, member_cum: np.ndarray, order: np.ndarray, loop: bool,
             n_phi: int, size: int, critic_index: np.ndarray, critic_need: int,
             out_boards: np.ndarray, out_pieces: np.ndarray, returns: np.ndarray,
             steps: np.ndarray, status: np.ndarray, critic_phi: np.ndarray,
             first_phi: np.ndarray) -> None:  # pragma: no cover - compiled
    """From state i play ``first[i]`` (< 0: the program's), then the program for ``horizon``.

    The program acts from phase 0 at the first placement it makes. ``status[i]``: 0 cut at
    the horizon, 1 the game ended, 2 a finite sequence ran out. Where ``critic_index`` is not
    empty, ``critic_phi[i]`` gets those features of the afterstate of the last placement
    (status 0 and 2) and ``first_phi[i]`` those of the first placement's afterstate (0 where
    it ended the game). Pieces after the state's: stream (seeds[i], 0); mixture draws:
    (seeds[i], MIX_STREAM).
    """
    phi, scores, board_phi = np.zeros(n_phi), np.zeros(128), np.zeros(n_phi)
    none_phi, none_ends = np.empty((0, 0)), np.empty(0, dtype=np.bool_)
    none_lines = np.empty(0, dtype=np.int64)
    ws = np.zeros(size, dtype=np.int64)
    s = np.empty(4, dtype=np.uint64)
    mix = np.empty(4, dtype=np.uint64)
    critic = critic_index.shape[0] > 0
    for i in range(boards.shape[0]):
        load(ws, boards[i], width, height)
        seed_stream(seeds[i], 0, s)
        seed_stream(seeds[i], MIX_STREAM, mix)
        p, a = pieces[i], first[i]
        total = made = t = 0
        state = 0
        landing = eroded = 0.0
        while True:
            if a < 0:
                k = pick(t, group_start, member_comp, member_cum, order, loop, mix)
                if k < 0:
                    state = 2
                    break
                t += 1
                a = choose(ws, p, k, width, height, rule, need, index, weights, const, phi,
                           scores, none_phi, none_ends, none_lines)
            if critic:
                landing, eroded = placement_facts(ws, p, a, width, height)
            got, over = apply_move(ws, p, a // width, a % width, width, height, rule)
            made += 1
            total += got
            if over:
                p = -1
                state = 1
                break
            if critic and made == 1:
                board_features(ws, width, height, critic_need, landing, eroded, board_phi)
                for j in range(critic_index.shape[0]):
                    first_phi[i, j] = board_phi[critic_index[j]]
            p = next_piece(s)
            if made > horizon:
                break
            a = -1
        returns[i], steps[i], status[i], out_pieces[i] = total, made, state, p
        if critic and state != 1 and made > 0:
            board_features(ws, width, height, critic_need, landing, eroded, board_phi)
            for j in range(critic_index.shape[0]):
                critic_phi[i, j] = board_phi[critic_index[j]]
        for r in range(height):
            out_boards[i, r] = ws[r]


@dataclass(frozen=True)
class ProgramRollouts:
    """Rollouts of a program from states (:func:`program_rollouts`).

    Attributes:
        returns: lines removed (gamma = 1), the first placement's included.
        steps: placements made.
        status: 0 cut at the horizon, 1 the game ended, 2 a finite sequence ran out.
        end_states: where each rollout stopped (piece -1 if the game ended).
        critic_phi: ``(n, d)`` critic features of the last placement's afterstate (None
            without critic features; meaningful where status is 0).
        first_phi: ``(n, d)`` critic features of the first placement's afterstate.
    """

    returns: np.ndarray
    steps: np.ndarray
    status: np.ndarray
    end_states: object
    critic_phi: np.ndarray | None
    first_phi: np.ndarray | None


def program_rollouts(states: object, first_actions: np.ndarray, program: Program,
                     horizon: int, seeds: np.ndarray, *, overflow: str = "end",
                     critic_features: str | None = None) -> ProgramRollouts:
    """From each state play its first action (-1: the program's), then the program.

    As :func:`nsrl.tetris.engine.rollouts`, for a :class:`Program`: the program acts from its
    phase 0 at the first placement it makes, for up to ``horizon`` placements after the first;
    a finite sequence that runs out stops its rollout (status 2).

    Args:
        states: :class:`nsrl.tetris.States`.
        first_actions: (n,) legal placements, or -1.
        program: the policy that plays.
        horizon: placements after the first.
        seeds: (n,) piece streams (seeds[i], 0): equal seeds, equal pieces.
        overflow: the overflow rule.
        critic_features: a feature set whose values on the last (and the first) placement's
            afterstate are returned, for a value function; None: not computed.
    """
    from nsrl.tetris.engine import _check_states, _setup, legal_actions
    from nsrl.tetris.kernels import need_bits
    from nsrl.tetris.state import States

    _check_states(states)  # type: ignore[arg-type]
    assert isinstance(states, States)
    n, width = len(states), states.width
    first = np.asarray(first_actions, dtype=np.int64).reshape(-1)
    seeds = np.asarray(seeds).reshape(-1)
    if first.shape[0] != n or seeds.shape[0] != n:
        raise ValueError(f"first_actions and seeds should have one entry per state ({n}), got "
                         f"{first.shape[0]} and {seeds.shape[0]}")
    if seeds.size and (seeds.dtype.kind not in "iu" or seeds.min() < 0):
        raise ValueError("seeds should be ints >= 0")
    bad = [i for i in range(n) if first[i] >= 0 and not (
        first[i] < 4 * width and legal_actions(int(states.pieces[i]), width)[first[i]])]
    if bad:
        raise ValueError(f"first action {first[bad[0]]} of state {bad[0]} is not a legal "
                         f"placement of its piece; use -1 to let the program choose")
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 0:
        raise ValueError(f"horizon should be an int >= 0, got {horizon!r}")
    s = _setup(program.names, width, states.height, overflow)
    index, need, *prog = program.kernel_args(width)
    if critic_features is None:
        c_index, c_need, d = np.zeros(0, dtype=np.int64), 0, 0
    else:
        c_names = feature_names(critic_features, width)
        c_index = np.array(feature_index(c_names, width), dtype=np.int64)
        c_need, d = need_bits(c_index, width), len(c_names)
    boards = np.zeros_like(states.boards)
    pieces, returns, steps, status = (np.zeros(n, dtype=np.int64) for _ in range(4))
    critic_phi, first_phi = np.zeros((n, d)), np.zeros((n, d))
    rollouts(states.boards, states.pieces, first, seeds.astype(np.int64), int(horizon), width,
             states.height, s.rule, need, index, *prog, s.n_phi, s.size, c_index, c_need,
             boards, pieces, returns, steps, status, critic_phi, first_phi)
    keep = critic_features is not None
    return ProgramRollouts(returns, steps, status, States(boards, pieces, width),
                           critic_phi if keep else None, first_phi if keep else None)


def _play_chunk(program: Program, seed: int, games: np.ndarray, width: int, height: int,
                overflow: str, max_pieces: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Play games ``games`` of seed ``seed`` to the end (or ``max_pieces`` each)."""
    from nsrl.tetris.engine import _PIECES_PER_CALL, _setup

    s = _setup(program.names, width, height, overflow)
    index, need, *prog = program.kernel_args(width)
    n = len(games)
    ws = np.zeros((n, s.size), dtype=np.int64)
    rng, mix = np.zeros((n, 4), dtype=np.uint64), np.zeros((n, 4), dtype=np.uint64)
    piece, phase, lines, pieces = (np.zeros(n, dtype=np.int64) for _ in range(4))
    over = np.zeros(n, dtype=np.bool_)
    start(rng, mix, piece, np.full(n, seed, dtype=np.int64), games.astype(np.int64))
    left = max_pieces
    while not over.all() and (left is None or left > 0):
        budget = _PIECES_PER_CALL if left is None else min(left, _PIECES_PER_CALL)
        play(ws, rng, mix, piece, phase, lines, pieces, over, budget, width, height, s.rule,
             need, index, *prog, s.n_phi)
        left = None if left is None else left - budget
    return lines, pieces


def program_games(program: Program, games: int | np.ndarray, *, width: int, height: int,
                  seed: int = 0, overflow: str = "end", jobs: int = 1,
                  max_pieces: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(lines, pieces)`` of games ``0 .. games - 1`` (or the given indices) of ``program``.

    Game i reads piece stream (seed, i), as :func:`nsrl.tetris.engine.play_games`, so a
    one-component program plays that function's games; ``jobs`` processes give the same
    numbers. ``max_pieces`` cuts each game (None: to its end).
    """
    idx = np.arange(int(games)) if np.ndim(games) == 0 else np.asarray(games, dtype=np.int64)
    if idx.size == 0:
        raise ValueError("games should be >= 1")
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**62:
        raise ValueError(f"seed should be an int in [0, 2**62), got {seed!r}")
    if jobs == 1 or idx.size < 2:
        return _play_chunk(program, int(seed), idx, width, height, overflow, max_pieces)
    from joblib import Parallel, delayed

    size = max(1, min(64, idx.size // (4 * jobs)))
    groups = [idx[i:i + size] for i in range(0, idx.size, size)]
    parts = Parallel(n_jobs=jobs)(delayed(_play_chunk)(program, int(seed), g, width, height,
                                                       overflow, max_pieces) for g in groups)
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


@numba.njit(cache=True)
def _snapshots(seeds: np.ndarray, games: np.ndarray, times: np.ndarray, width: int,
               height: int, rule: int, need: int, index: np.ndarray, weights: np.ndarray,
               const: np.ndarray, group_start: np.ndarray, member_comp: np.ndarray,
               member_cum: np.ndarray, order: np.ndarray, loop: bool, n_phi: int, size: int,
               out_boards: np.ndarray, out_pieces: np.ndarray) -> None:  # pragma: no cover
    """Play game (seeds[g], games[g]) and record its state before placement ``times[g, j]``.

    ``times[g]`` is sorted, -1 padded; a state after the game ended is recorded as piece -1.
    """
    phi, scores = np.zeros(n_phi), np.zeros(128)
    none_phi, none_ends = np.empty((0, 0)), np.empty(0, dtype=np.bool_)
    none_lines = np.empty(0, dtype=np.int64)
    ws = np.zeros(size, dtype=np.int64)
    s, mix = np.empty(4, dtype=np.uint64), np.empty(4, dtype=np.uint64)
    empty = np.zeros(height, dtype=np.int64)
    for g in range(seeds.shape[0]):
        load(ws, empty, width, height)
        seed_stream(seeds[g], games[g], s)
        seed_stream(seeds[g], MIX_STREAM + games[g], mix)
        p, t, j, over = next_piece(s), 0, 0, False
        while j < times.shape[1] and times[g, j] >= 0:
            while t < times[g, j] and not over:
                k = pick(t, group_start, member_comp, member_cum, order, loop, mix)
                if k < 0:
                    over = True
                    break
                a = choose(ws, p, k, width, height, rule, need, index, weights, const, phi,
                           scores, none_phi, none_ends, none_lines)
                _, over = apply_move(ws, p, a // width, a % width, width, height, rule)
                t += 1
                p = -1 if over else next_piece(s)
            for r in range(height):
                out_boards[g, j, r] = ws[r]
            out_pieces[g, j] = -1 if over else p
            j += 1


def program_states(program: Program, times: Sequence[Sequence[int]], *, width: int,
                   height: int, seed: int, overflow: str = "end") -> object:
    """The states of games 0, 1, ... of ``program`` before the placements ``times[g]``.

    Game g reads piece stream (seed, g), as :func:`program_games`; ``times[g]`` lists the
    placement numbers (from 0) at which its state is taken. States after the end of a game
    come back with piece -1. Returns :class:`nsrl.tetris.States`, game by game, in time order.
    """
    from nsrl.tetris.engine import _setup
    from nsrl.tetris.state import States

    s = _setup(program.names, width, height, overflow)
    index, need, *prog = program.kernel_args(width)
    n = len(times)
    longest = max((len(t) for t in times), default=0)
    grid = np.full((n, max(longest, 1)), -1, dtype=np.int64)
    for g, t in enumerate(times):
        grid[g, :len(t)] = np.sort(np.asarray(t, dtype=np.int64))
    if (grid < -1).any():
        raise ValueError("times should be >= 0")
    boards = np.zeros((n, grid.shape[1], height), dtype=np.int64)
    pieces = np.full((n, grid.shape[1]), -1, dtype=np.int64)
    _snapshots(np.full(n, seed, dtype=np.int64), np.arange(n, dtype=np.int64), grid, width,
               height, s.rule, need, index, *prog, s.n_phi, s.size, boards, pieces)
    keep = grid >= 0
    return States(boards[keep], pieces[keep], width)


@numba.njit(cache=True)
def _component_actions(boards: np.ndarray, pieces: np.ndarray, width: int, height: int,
                       rule: int, need: int, index: np.ndarray, weights: np.ndarray,
                       const: np.ndarray, n_phi: int, size: int,
                       out: np.ndarray) -> None:  # pragma: no cover - compiled
    phi, scores = np.zeros(n_phi), np.zeros(128)
    none_phi, none_ends = np.empty((0, 0)), np.empty(0, dtype=np.bool_)
    none_lines = np.empty(0, dtype=np.int64)
    ws = np.zeros(size, dtype=np.int64)
    for i in range(boards.shape[0]):
        load(ws, boards[i], width, height)
        for k in range(weights.shape[0]):
            out[i, k] = choose(ws, pieces[i], k, width, height, rule, need, index, weights,
                               const, phi, scores, none_phi, none_ends, none_lines)


def component_actions(states: object, program: Program, *, overflow: str = "end"
                      ) -> np.ndarray:
    """``(n, C)``: the placement each component of ``program`` chooses in each state."""
    from nsrl.tetris.engine import _check_states, _setup

    _check_states(states)  # type: ignore[arg-type]
    width, height = states.width, states.height  # type: ignore[attr-defined]
    s = _setup(program.names, width, height, overflow)
    index, need, weights, const, *_ = program.kernel_args(width)
    out = np.zeros((len(states), program.n_components), dtype=np.int64)  # type: ignore[arg-type]
    _component_actions(states.boards, states.pieces, width, height, s.rule,  # type: ignore
                       need, index, weights, const, s.n_phi, s.size, out)
    return out
