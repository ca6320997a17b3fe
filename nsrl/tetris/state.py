"""A Tetris state (board and piece to place) and batches of them as arrays.

:class:`State` is what ``Tetris-v0`` reports in ``info["state"]`` and takes back in
``reset(options={"state": s})``: immutable, hashable and comparable. :class:`States` holds
many as plain arrays (bit rows and piece indices), the form the compiled engine reads.

Examples:
    >>> s = State.empty(width=4, height=4, piece=0)
    >>> s.rows, s.piece, s.height
    ((0, 0, 0, 0), 0, 4)
    >>> batch = States.of([s, State(4, (0b0011, 0, 0, 0), 2)])
    >>> batch.boards.shape, batch.pieces.tolist(), batch[1] == State(4, (3, 0, 0, 0), 2)
    ((2, 4), [0, 2], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nsrl.tetris.pieces import PIECE_NAMES

__all__ = ["MAX_HEIGHT", "MAX_WIDTH", "MIN_SIZE", "State", "States", "check_board"]

MIN_SIZE = 4    # a smaller board cannot hold every piece in every orientation
MAX_WIDTH = 31  # the counts of height differences live in bytes (kernels.diff_count)
MAX_HEIGHT = 58  # a column is a 64-bit word: the board, 4 rows above it and one more


def check_board(width: int, height: int) -> None:
    """Refuse a board the engine cannot play (ValueError naming the fix)."""
    for name, value, high in (("width", width, MAX_WIDTH), ("height", height, MAX_HEIGHT)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValueError(f"board {name} should be an int, got {value!r}")
        if not MIN_SIZE <= value <= high:
            raise ValueError(f"board {name} should be in [{MIN_SIZE}, {high}] (a piece is up to "
                             f"{MIN_SIZE} cells long), got {value}; e.g. width=10, height=20.")


@dataclass(frozen=True)
class State:
    """A board and the piece to place.

    Attributes:
        width: columns of the board.
        rows: one int per row, bottom row first; bit c is column c (filled if set).
        piece: index of the piece to place (``PIECE_NAMES``), -1 once the game is over (then
            the board shows only what fits below the top).
    """

    width: int
    rows: tuple[int, ...]
    piece: int

    def __post_init__(self) -> None:
        check_board(self.width, len(self.rows))
        if not -1 <= int(self.piece) < len(PIECE_NAMES):
            raise ValueError(f"piece should be in [-1, 6] (-1: the game is over), got "
                             f"{self.piece!r}")
        full = (1 << self.width) - 1
        # A game that is over may show a full row (the piece that ended it removed nothing).
        top = full + 1 if self.piece < 0 else full
        bad = [r for r, row in enumerate(self.rows) if not 0 <= int(row) < top]
        if bad:
            raise ValueError(f"row {bad[0]} of the state is {self.rows[bad[0]]!r}: a row should "
                             f"be an int in [0, 2**width - 1) (full rows are removed)")
        object.__setattr__(self, "rows", tuple(int(r) for r in self.rows))
        object.__setattr__(self, "piece", int(self.piece))

    @classmethod
    def empty(cls, width: int, height: int, piece: int) -> State:
        """An empty board with ``piece`` to place."""
        check_board(width, height)
        return cls(width, (0,) * height, piece)

    @property
    def height(self) -> int:
        """Rows of the board."""
        return len(self.rows)

    @property
    def over(self) -> bool:
        """True when the game has ended."""
        return self.piece < 0

    def cells(self) -> np.ndarray:
        """The board as a (height, width) bool array, row 0 at the bottom."""
        bits = np.array(self.rows, dtype=np.int64)[:, None] >> np.arange(self.width)
        return (bits & 1).astype(bool)

    def text(self) -> str:
        """The board top row first ('X' filled), then the piece to place."""
        lines = ["|" + "".join("X" if cell else "." for cell in row) + "|"
                 for row in self.cells()[::-1]]
        piece = "game over" if self.over else f"piece {PIECE_NAMES[self.piece]}"
        return "\n".join([*lines, "+" + "-" * self.width + "+", piece])


@dataclass(frozen=True)
class States:
    """Many states of one board size as arrays.

    Attributes:
        boards: (n, height) int64 bit rows, bottom row first (bit c: column c).
        pieces: (n,) int64 piece indices, -1 for a game that is over.
        width: columns of the board.
    """

    boards: np.ndarray
    pieces: np.ndarray
    width: int

    def __post_init__(self) -> None:
        boards = np.ascontiguousarray(self.boards, dtype=np.int64)
        pieces = np.ascontiguousarray(self.pieces, dtype=np.int64).reshape(-1)
        if boards.ndim != 2 or boards.shape[0] != pieces.shape[0]:
            raise ValueError(f"boards should be (n, height) and pieces (n,), got "
                             f"{boards.shape} and {pieces.shape}")
        check_board(self.width, boards.shape[1])
        if pieces.size and (pieces.min() < -1 or pieces.max() >= len(PIECE_NAMES)):
            raise ValueError("pieces should be in [-1, 6] (-1: the game is over)")
        full = (1 << self.width) - 1
        live = boards[pieces >= 0]
        if boards.size and (boards.min() < 0 or boards.max() > full
                            or (live.size and live.max() == full)):
            raise ValueError("a row of boards is negative, full or wider than the board: each "
                             "should be in [0, 2**width - 1)")
        object.__setattr__(self, "boards", boards)
        object.__setattr__(self, "pieces", pieces)

    @classmethod
    def of(cls, states: Sequence[State]) -> States:
        """The batch of a list of :class:`State` (all of one board size)."""
        if not states:
            raise ValueError("give at least one state")
        sizes = {(s.width, s.height) for s in states}
        if len(sizes) > 1:
            raise ValueError(f"the states should share one board size, got {sorted(sizes)}")
        return cls(np.array([s.rows for s in states], dtype=np.int64),
                   np.array([s.piece for s in states], dtype=np.int64), states[0].width)

    @property
    def height(self) -> int:
        """Rows of the boards."""
        return int(self.boards.shape[1])

    def __len__(self) -> int:
        return int(self.pieces.shape[0])

    def __getitem__(self, i: int) -> State:
        return State(self.width, tuple(int(r) for r in self.boards[i]), int(self.pieces[i]))

    def to_list(self) -> list[State]:
        """The states as :class:`State` objects."""
        return [self[i] for i in range(len(self))]
