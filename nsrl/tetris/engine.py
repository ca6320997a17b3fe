"""The batch engine: many games, rollouts from saved states, features of every placement.

Game i of ``play_games(..., seed=s)`` draws its pieces from stream ``(s, i)`` (see
:mod:`nsrl.tetris.pieces_rng`), so its lines and pieces depend only on ``(s, i)``: not on the
number of games, on ``jobs`` or on how the games are split between processes.

Examples:
    >>> from nsrl.tetris import SHIPPED
    >>> games = play_games(SHIPPED["dellacherie"], 3, width=6, height=6, seed=0)
    >>> games.lines.tolist() == play_games(SHIPPED["dellacherie"], 3, width=6, height=6,
    ...                                    seed=0, jobs=2).lines.tolist()
    True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from nsrl.tetris import kernels, moves
from nsrl.tetris.controllers import Controller
from nsrl.tetris.features import feature_index, feature_names, n_kernel_features
from nsrl.tetris.pieces import N_ORIENTATIONS, WIDTH
from nsrl.tetris.reference import OVERFLOW_RULES
from nsrl.tetris.state import States, check_board

__all__ = ["Games", "Placements", "Rollouts", "features_of_placements", "iter_games",
           "legal_actions", "play_games", "rollouts"]

_PIECES_PER_CALL = 1 << 18  # a compiled call returns to Python this often (Ctrl-C, progress)


def overflow_rule(overflow: str) -> int:
    """The kernels' code of an overflow rule (ValueError naming the rules)."""
    if overflow not in OVERFLOW_RULES:
        raise ValueError(f"overflow should be one of {', '.join(OVERFLOW_RULES)}, got "
                         f"{overflow!r}: 'end' (a piece sticking out ends the game, its lines "
                         f"not counted; the published scores) or 'clear-first'")
    return OVERFLOW_RULES.index(overflow)


def legal_actions(piece: int, width: int) -> np.ndarray:
    """Bool mask over the ``4 * width`` actions ``o * width + c`` of a piece (none if -1).

    Examples:
        >>> legal_actions(1, 4).astype(int).tolist()  # the O: one orientation, 3 columns
        [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    """
    mask = np.zeros(4 * width, dtype=bool)
    if piece >= 0:
        for o in range(N_ORIENTATIONS[piece]):
            mask[o * width:o * width + width - WIDTH[piece, o] + 1] = True
    return mask


@dataclass(frozen=True)
class _Setup:
    """What the kernels need to evaluate a feature set on a board."""

    width: int
    height: int
    rule: int
    index: np.ndarray
    need: int
    n_phi: int
    size: int


def _setup(names: tuple[str, ...], width: int, height: int, overflow: str) -> _Setup:
    check_board(width, height)
    rule = overflow_rule(overflow)
    index = np.array(feature_index(names, width), dtype=np.int64)
    return _Setup(width, height, rule, index, kernels.need_bits(index, width),
                  n_kernel_features(width), int(kernels.layout(width, height)[-1]))


@dataclass(frozen=True)
class Games:
    """Finished games, in game order.

    Attributes:
        games: the games' indices (their piece streams are (seed, index)).
        lines: lines removed in each game.
        pieces: placements in each game, the last one (that ended it) included.
        seconds: wall-clock time.
        partial: True if the run stopped early (Ctrl-C): only finished games are here.
    """

    games: np.ndarray
    lines: np.ndarray
    pieces: np.ndarray
    seconds: float
    partial: bool = False


def _play_chunk(controller: Controller, seed: int, games: np.ndarray, width: int, height: int,
                overflow: str, budget: int = 1 << 62) -> tuple[np.ndarray, np.ndarray]:
    """Play games ``games`` of seed ``seed`` to the end (a joblib task: plain arguments)."""
    weights = controller.vector(width)
    s = _setup(controller.names(width), width, height, overflow)
    n = len(games)
    ws = np.zeros((n, s.size), dtype=np.int64)
    rng = np.zeros((n, 4), dtype=np.uint64)
    piece, lines, pieces = (np.zeros(n, dtype=np.int64) for _ in range(3))
    over = np.zeros(n, dtype=np.bool_)
    moves.start(rng, piece, np.full(n, seed, dtype=np.int64), games.astype(np.int64))
    while not over.all():
        moves.play(ws, rng, piece, lines, pieces, over, min(budget, _PIECES_PER_CALL), width,
                   height, s.rule, s.need, s.index, weights, s.n_phi)
    return lines, pieces


def iter_games(controller: Controller, games: int, *, width: int = 10, height: int = 20,
               seed: int = 0, overflow: str = "end", jobs: int = 1,
               ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Play games 0..games-1, yielding ``(game indices, lines, pieces)`` as groups finish.

    With ``jobs > 1`` the groups are played by that many processes and arrive in any order;
    each game's numbers do not depend on it.
    """
    controller.vector(width)  # missing or unknown weights: refused before any work
    _setup(controller.names(width), width, height, overflow)
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games should be an int >= 1, got {games!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs should be an int >= 1, got {jobs!r}")
    if not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed should be an int in [0, 2**63), got {seed!r}")
    # Groups small enough to show progress and to share the work evenly between processes.
    size = max(1, min(64, games // (16 * jobs)))
    groups = [np.arange(i, min(i + size, games)) for i in range(0, games, size)]
    if jobs == 1:
        for group in groups:
            yield group, *_play_chunk(controller, int(seed), group, width, height, overflow)
        return
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=jobs, return_as="generator_unordered")
    tasks = (delayed(_play_group)(controller.to_json(), int(seed), group, width, height,
                                  overflow) for group in groups)
    yield from parallel(tasks)


def _play_group(controller: dict, seed: int, group: np.ndarray, width: int, height: int,
                overflow: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return group, *_play_chunk(Controller.from_json(controller), seed, group, width, height,
                               overflow)


def play_games(controller: Controller, games: int, *, width: int = 10, height: int = 20,
               seed: int = 0, overflow: str = "end", jobs: int = 1,
               progress: Callable[[int, int], None] | None = None) -> Games:
    """Play ``games`` games with a linear controller.

    Args:
        controller: the linear controller (:class:`Controller`).
        games: how many games (game i reads piece stream (seed, i)).
        width: columns of the board (10 in the papers).
        height: rows of the board (20 standard, 10 the small board of the papers).
        seed: an int in [0, 2**63).
        overflow: ``"end"`` (default, MdpTetris's evaluation tool: a piece that sticks out of
            the top ends the game, and lines it completes are not counted) or
            ``"clear-first"`` (its learning tools: the full lines go first, and the game ends
            only if something still sticks out).
        jobs: processes (joblib); the numbers do not depend on it.
        progress: called with (games done, games) as groups finish.

    Returns:
        :class:`Games`, in game order. On KeyboardInterrupt the games finished so far are
        returned with ``partial=True``.
    """
    start = time.perf_counter()
    done: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    partial = False
    try:
        for result in iter_games(controller, games, width=width, height=height, seed=seed,
                                 overflow=overflow, jobs=jobs):
            done.append(result)
            if progress is not None:
                progress(sum(len(r[0]) for r in done), games)
    except KeyboardInterrupt:
        partial = True
    seconds = time.perf_counter() - start
    if not done:
        empty = np.zeros(0, dtype=np.int64)
        return Games(empty, empty, empty.copy(), seconds, partial)
    order = np.concatenate([r[0] for r in done])
    sort = np.argsort(order, kind="stable")
    return Games(order[sort], np.concatenate([r[1] for r in done])[sort],
                 np.concatenate([r[2] for r in done])[sort], seconds, partial)


@dataclass(frozen=True)
class Placements:
    """The placements of each state: ``[state, o * width + c]``.

    Attributes:
        phi: (n, 4 * width, d) afterstate features (0 where ``ends`` or not ``mask``).
        mask: (n, 4 * width) bool, the legal placements of the state's piece.
        ends: (n, 4 * width) bool, legal placements that end the game (a controller scores
            them -1e100: it never takes one while another exists).
        lines: (n, 4 * width) lines each removes (0 if it ends the game).
        names: the d features.
    """

    phi: np.ndarray
    mask: np.ndarray
    ends: np.ndarray
    lines: np.ndarray
    names: tuple[str, ...]


def _check_states(states: States) -> None:
    if not isinstance(states, States):
        raise TypeError(f"states should be nsrl.tetris.States, got {type(states).__name__}; "
                        f"e.g. States.of([info['state'], ...])")
    if len(states) and (states.pieces < 0).any():
        i = int(np.flatnonzero(states.pieces < 0)[0])
        raise ValueError(f"state {i} is a game that is over (piece -1): nothing to place")


def features_of_placements(states: States, features: str, *,
                           overflow: str = "end") -> Placements:
    """Afterstate features of every legal placement of every state.

    Examples:
        >>> from nsrl.tetris import State
        >>> p = features_of_placements(States.of([State.empty(6, 6, 1)]), "holes+max_height")
        >>> p.mask.sum(), p.phi[0, 0].tolist()   # the O: 5 columns; on the floor, 2 high
        (np.int64(5), [0.0, 2.0])
    """
    _check_states(states)
    names = feature_names(features, states.width)
    s = _setup(names, states.width, states.height, overflow)
    n, actions = len(states), 4 * states.width
    phi = np.zeros((n, actions, len(names)))
    ends = np.zeros((n, actions), dtype=np.bool_)
    lines = np.zeros((n, actions), dtype=np.int64)
    moves.placements(states.boards, states.pieces, s.width, s.height, s.rule, s.need, s.index,
                     s.n_phi, s.size, phi, ends, lines)
    mask = np.array([legal_actions(int(p), states.width) for p in states.pieces]).reshape(
        n, actions)
    return Placements(phi, mask, ends, lines, names)


@dataclass(frozen=True)
class Rollouts:
    """Rollouts from states.

    Attributes:
        returns: lines removed (gamma = 1).
        end_states: where each rollout stopped (piece -1 if the game ended).
        steps: placements made, the first included.
        ended: True if the game ended.
    """

    returns: np.ndarray
    end_states: States
    steps: np.ndarray
    ended: np.ndarray


def rollouts(states: States, first_actions: np.ndarray, controller: Controller, horizon: int,
             seeds: np.ndarray, *, overflow: str = "end") -> Rollouts:
    """From each state play its first action, then the controller for up to ``horizon`` more.

    Args:
        states: where the rollouts start.
        first_actions: (n,) action ``o * width + c`` played first, legal for the state's
            piece; -1: the controller chooses it too.
        controller: the linear controller that plays the rest.
        horizon: placements after the first (gamma = 1); a game that ends stops the rollout.
        seeds: (n,) the pieces after the state's are stream (seeds[i], 0) of
            :mod:`nsrl.tetris.pieces_rng`: rollouts given one seed see the same pieces (common
            random numbers between the actions of a state), and ``Tetris-v0`` reset with
            ``seed=seeds[i]`` and ``options={"state": ...}`` sees them too.
        overflow: the overflow rule, as in :func:`play_games`.

    Returns:
        :class:`Rollouts`; an end state's piece is the next one to place (-1 if over).

    Examples:
        >>> from nsrl.tetris import SHIPPED, State
        >>> start = States.of([State.empty(6, 8, 0)] * 2)
        >>> r = rollouts(start, np.array([0, 6]), SHIPPED["dt-10"], 5, np.array([7, 7]))
        >>> r.steps.tolist(), r.end_states.pieces.tolist() == [r.end_states.pieces[0]] * 2
        ([6, 6], True)
    """
    _check_states(states)
    n = len(states)
    first = np.asarray(first_actions, dtype=np.int64).reshape(-1)
    seeds = np.asarray(seeds).reshape(-1)
    if first.shape[0] != n or seeds.shape[0] != n:
        raise ValueError(f"first_actions and seeds should have one entry per state ({n}), got "
                         f"{first.shape[0]} and {seeds.shape[0]}")
    if seeds.size and (seeds.dtype.kind not in "iu" or seeds.min() < 0):
        raise ValueError("seeds should be ints >= 0")
    for i in range(n):
        if first[i] >= 0 and not (first[i] < 4 * states.width
                                  and legal_actions(int(states.pieces[i]), states.width)[first[i]]):
            raise ValueError(f"first action {first[i]} of state {i} is not a legal placement of "
                             f"its piece (see legal_actions); use -1 to let the controller choose")
    if isinstance(horizon, bool) or not isinstance(horizon, (int, np.integer)) or horizon < 0:
        raise ValueError(f"horizon should be an int >= 0, got {horizon!r}")
    weights = controller.vector(states.width)
    s = _setup(controller.names(states.width), states.width, states.height, overflow)
    boards = np.zeros_like(states.boards)
    pieces, returns, steps = (np.zeros(n, dtype=np.int64) for _ in range(3))
    ended = np.zeros(n, dtype=np.bool_)
    moves.rollouts(states.boards, states.pieces, first, seeds.astype(np.int64), int(horizon),
                   s.width, s.height, s.rule, s.need, s.index, weights, s.n_phi, s.size,
                   boards, pieces, returns, steps, ended)
    return Rollouts(returns, States(boards, pieces, states.width), steps, ended)
