"""One game played a placement at a time: what ``Tetris-v0`` runs on.

It uses the batch engine's kernels and piece streams, so a game started with
``reset(seed, game)`` and played by a controller is game ``game`` of
``play_games(..., seed=seed)``, placement for placement.

Examples:
    >>> from nsrl.tetris import SHIPPED, play_games
    >>> g = Game(6, 8)
    >>> g.reset(seed=0, game=2)
    >>> while not g.over:
    ...     _ = g.play(g.choose(SHIPPED["dt-10"]))
    >>> batch = play_games(SHIPPED["dt-10"], 3, width=6, height=8, seed=0)
    >>> (int(batch.lines[2]), int(batch.pieces[2])) == (g.lines, g.pieces)
    True
"""

from __future__ import annotations

import numpy as np

from nsrl.tetris import moves
from nsrl.tetris.controllers import Controller
from nsrl.tetris.engine import (
    Placements,
    _setup,
    features_of_placements,
    legal_actions,
    overflow_rule,
)
from nsrl.tetris.kernels import layout, prepare
from nsrl.tetris.pieces_rng import next_piece_py, seed_stream
from nsrl.tetris.scan import CHOOSE, scan
from nsrl.tetris.state import State, States, check_board

__all__ = ["Game"]


class Game:
    """A board, the piece to place and the piece stream, advanced one placement at a time.

    Args:
        width: columns of the board.
        height: rows of the board.
        overflow: the overflow rule (see :func:`nsrl.tetris.play_games`).
    """

    def __init__(self, width: int = 10, height: int = 20, overflow: str = "end") -> None:
        check_board(width, height)
        self.width, self.height, self.overflow = width, height, overflow
        self._rule = overflow_rule(overflow)
        self._ws = np.zeros(int(layout(width, height)[-1]), dtype=np.int64)
        self._rng = np.zeros(4, dtype=np.uint64)
        self.piece, self.lines, self.pieces = -1, 0, 0
        self._chosen: tuple | None = None  # the last controller, its weights and setup

    def reset(self, seed: int, game: int = 0, state: State | None = None) -> None:
        """Start game ``game`` of stream ``seed``, or continue from ``state``.

        From ``state`` the next pieces are those of stream (seed, game) from its first draw;
        without it, that first draw is the first piece of an empty board.
        """
        seed_stream(int(seed), int(game), self._rng)
        if state is None:
            state = State.empty(self.width, self.height, next_piece_py(self._rng))
        if (state.width, state.height) != (self.width, self.height):
            raise ValueError(f"the state is {state.width} x {state.height}, the board "
                             f"{self.width} x {self.height}: give a state of this board")
        if state.over:
            raise ValueError("the state is a game that is over (piece -1): nothing to play")
        moves.load(self._ws, np.array(state.rows, dtype=np.int64), self.width, self.height)
        self.piece, self.lines, self.pieces = state.piece, 0, 0

    @property
    def over(self) -> bool:
        """True once a placement has ended the game."""
        return self.piece < 0

    @property
    def state(self) -> State:
        """The board (what fits below the top) and the piece to place (-1 when over)."""
        full = (1 << self.width) - 1
        return State(self.width, tuple(int(r) & full for r in self._ws[:self.height]),
                     self.piece)

    def legal(self) -> np.ndarray:
        """Bool mask of the legal actions ``o * width + c`` (all False when over)."""
        return legal_actions(self.piece, self.width)

    def play(self, action: int) -> int:
        """Place the piece by ``action``; the lines it removes (ValueError if illegal)."""
        if self.over:
            raise ValueError("the game is over: start another (reset) before playing")
        if not (0 <= action < 4 * self.width and self.legal()[action]):
            raise ValueError(f"action {action} is not a legal placement of this piece: an "
                             f"action is orientation * {self.width} + column, legal where "
                             f"the mask (legal(), info['action_mask']) is 1")
        o, c = divmod(int(action), self.width)
        lines, ended = moves.apply_move(self._ws, self.piece, o, c, self.width, self.height,
                                        self._rule)
        self.lines += lines
        self.pieces += 1
        self.piece = -1 if ended else next_piece_py(self._rng)
        return int(lines)

    def choose(self, controller: Controller) -> int:
        """The action a linear controller takes here (MdpTetris's order and tie rule)."""
        if self.over:
            raise ValueError("the game is over: there is nothing to choose")
        if self._chosen is None or self._chosen[0] is not controller:  # checked once
            self._chosen = (controller, controller.vector(self.width),
                            _setup(controller.names(self.width), self.width, self.height,
                                   self.overflow))
        _, weights, s = self._chosen
        prepare(self._ws, self.width, self.height, s.need)
        return int(scan(self._ws, self.piece, self.width, self.height, s.rule, s.need, s.index,
                        weights, np.zeros(s.n_phi), np.zeros(128), CHOOSE, np.empty((0, 0)),
                        np.empty(0, dtype=np.bool_), np.empty(0, dtype=np.int64)))

    def placements(self, features: str) -> Placements:
        """The features of every placement of the piece (a batch of one state)."""
        if self.over:
            raise ValueError("the game is over: there is nothing to place")
        return features_of_placements(States.of([self.state]), features,
                                      overflow=self.overflow)
