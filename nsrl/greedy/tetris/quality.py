"""A Tetris policy's quality: its mean lines per game over a fixed set of games.

The games are games ``0 .. games - 1`` of piece stream ``seed`` (:mod:`nsrl.tetris.pieces_rng`),
played from the empty board by the compiled engine, at every call: the outputs of every
scheme and iteration are scored on the same pieces (common random numbers), and a score does
not depend on the number of processes. A game's lines are close to geometric (standard
deviation about the mean), so G games give the mean to about +-2/sqrt(G) of itself (95%).

Examples:
    >>> import gymnasium as gym, nsrl
    >>> from nsrl.greedy.tetris import TetrisScore, tetris_policy
    >>> env = gym.make("Tetris-v0", width=6, height=8)
    >>> pi = tetris_policy("dellacherie", [-1, 1, -1, -1, -4, -1], width=6, height=8)
    >>> score = TetrisScore(env, games=4, seed=0)(pi)
    >>> score.games, score.mean >= 0
    (4, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nsrl.greedy.sampling.quality import Score
from nsrl.greedy.tetris.policies import to_program
from nsrl.policies import AnyPolicy
from nsrl.tetris.programs import program_games

__all__ = ["TetrisScore", "board_of"]


def board_of(env: Any) -> tuple[int, int, str]:
    """``(width, height, overflow)`` of a ``Tetris-v0`` env (wrapped or not).

    Raises:
        TypeError: ``env`` is not a Tetris env.
    """
    inner = getattr(env, "unwrapped", env)
    game = getattr(inner, "game", None)
    if game is None or not hasattr(inner, "width") or not hasattr(game, "overflow"):
        raise TypeError(f"expected a Tetris-v0 env (gym.make('Tetris-v0', ...)), got "
                        f"{type(env).__name__}.")
    return int(inner.width), int(inner.height), str(game.overflow)


class TetrisScore:
    """Mean lines per game of a policy over games ``0 .. games - 1`` of ``seed`` (module doc).

    Args:
        env: a ``Tetris-v0`` env (its board and overflow rule).
        games: games per estimate (>= 2, for an interval).
        seed: the piece streams' seed.
        max_pieces: cut each game after this many placements (None: play it out). A cut
            game's lines count as they stand, so the mean is then a lower bound.

    Attributes:
        pieces: the placements of the games of the last call.
    """

    def __init__(self, env: Any, games: int = 100, seed: int = 0,
                 max_pieces: int | None = None) -> None:
        if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 2:
            raise ValueError(f"games should be an int >= 2 (an interval needs two), got "
                             f"{games!r}.")
        if max_pieces is not None and (isinstance(max_pieces, bool) or max_pieces < 1):
            raise ValueError(f"max_pieces should be a positive int or None, got {max_pieces!r}.")
        self.width, self.height, self.overflow = board_of(env)
        self.games, self.seed, self.max_pieces = int(games), int(seed), max_pieces
        self.pieces = np.zeros(0, dtype=np.int64)

    def __call__(self, policy: AnyPolicy) -> Score:
        """The estimate for ``policy`` on the same games as every other call."""
        lines, self.pieces = program_games(
            to_program(policy, self.width), self.games, width=self.width, height=self.height,
            seed=self.seed, overflow=self.overflow, max_pieces=self.max_pieces)
        ci = 1.96 * float(lines.std(ddof=1)) / np.sqrt(self.games)
        return Score(float(lines.mean()), ci, self.games)
