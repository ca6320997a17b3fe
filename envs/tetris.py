"""TetrisEnv: Tetris as the classification-based policy iteration papers play it."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from nsrl.policies import LinearScoringPolicy
from nsrl.tetris import (
    PIECE_NAMES,
    SHIPPED,
    Controller,
    Game,
    Placements,
    State,
    States,
    feature_names,
    features_of_placements,
)
from nsrl.tetris.kernels import GAME_OVER_SCORE
from nsrl.tetris.pieces import SHAPES

from .render import RENDER_FPS, check_render_mode

BOARDS = {"small": (10, 10), "large": (10, 20)}
_CELL = 16  # pixels per cell in rgb_array frames
_FILLED, _EMPTY, _PIECE = (np.array(c, dtype=np.uint8) for c in
                           ((90, 140, 200), (20, 20, 28), (230, 180, 60)))


class PlacementSpace(spaces.Discrete):
    """``Discrete(4 * width)`` whose ``sample()`` without a mask draws a legal placement.

    The env sets :attr:`legal` to the current piece's mask on every reset and step, so a random
    agent (``env.action_space.sample()``) plays legal placements; ``sample(mask=...)`` is
    Gymnasium's. Checks of membership (``contains``) are the plain space's.
    """

    legal: np.ndarray | None = None

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        """A legal placement of the current piece, uniformly (any action if none is)."""
        if mask is None and probability is None and self.legal is not None and self.legal.any():
            mask = self.legal
        return super().sample(mask=mask, probability=probability)


class PlacementFeatures:
    """Afterstate features of every placement, from ``Tetris-v0`` observations.

    The feature map a :class:`nsrl.LinearScoringPolicy` takes: ``(phi[n, A, d], legal[n, A],
    bonus[n, A])`` with the bonus -1e100 on a placement that ends the game (never chosen while
    another exists, as the engine's controllers score it). The board and the piece are read
    back from the observation (cells from the bottom row, then the piece's one-hot).
    """

    def __init__(self, features: str, width: int, height: int, overflow: str = "end") -> None:
        self.features, self.width, self.height, self.overflow = features, width, height, overflow
        self.names = feature_names(features, width)  # an unknown set is refused here

    def states(self, obs: np.ndarray) -> States:
        """The boards and pieces of a batch of observations."""
        obs = np.asarray(obs).reshape(len(obs), -1)
        cells = obs[:, :self.height * self.width].reshape(len(obs), self.height, self.width)
        rows = (cells.astype(np.int64) << np.arange(self.width)).sum(axis=2)
        onehot = obs[:, self.height * self.width:]
        pieces = np.where(onehot.any(axis=1), onehot.argmax(axis=1), -1)
        return States(rows, pieces, self.width)

    def __call__(self, obs: np.ndarray, mask: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(phi, legal, bonus)`` of every placement of every observation."""
        p = features_of_placements(self.states(obs), self.features, overflow=self.overflow)
        legal = p.mask.astype(bool)
        if mask is not None:
            legal &= np.asarray(mask, dtype=bool)
        return p.phi, legal, np.where(p.ends, GAME_OVER_SCORE, 0.0)


class TetrisEnv(gym.Env):
    """Tetris with MdpTetris's rules (Scherrer et al., JMLR 2015); one step = one placement.

    ## Description

    The board is ``height`` rows of ``width`` columns; the pieces (I, O, T, Z, S, J, L, in
    MdpTetris's order) come independently and uniformly. Each step places the current piece:
    an orientation and the column of the left of its box; it drops straight down (nothing
    blocks a column or a rotation) and full lines are removed. The rules, features and the
    batch engine that plays the same games faster are in docs/tetris.md (``nsrl.tetris``).

    ## Action Space

    ``Discrete(4 * width)``: action ``a = orientation * width + column``. Only some are legal
    for a piece (the O has one orientation and ``width - 1`` columns): ``info["action_mask"]``
    (np.int8, 1 = legal) lists them. An illegal action raises ValueError; the space's
    ``sample()`` draws among the legal ones of the current piece.

    ## Observation Space

    ``Box(0, 1, (height * width + 7,), float32)``: the cells row by row from the bottom row
    (1 = filled), then the one-hot of the piece to place (all 0 once the game is over).

    ## Rewards

    The number of lines the placement removes (0 to 4).

    ## Starting State

    An empty board and a first piece from the piece stream; or ``reset(options={"state": s})``
    with ``s`` an ``info["state"]`` (a :class:`nsrl.tetris.State`: rows and piece). The pieces
    come from stream (seed, game) of ``nsrl.tetris``: ``reset(seed=s)`` starts game 0 of seed
    s, and each reset without a seed the next game, so the n games after ``reset(seed=s)`` are
    games 0..n-1 of ``nsrl.tetris.play_games(..., seed=s)``. From a given state, the pieces
    after its own are those of stream (seed, game) from its first draw, as in
    ``nsrl.tetris.rollouts``.

    ## Episode End

    Terminated when a placement ends the game: part of the piece is above the top once the
    lines are removed. With ``overflow="end"`` (default, the published scores' rule) a piece
    that sticks out ends the game at once and its lines are not counted. No time limit
    (``max_episode_steps=None``): a good controller plays millions of pieces on 10 x 20.

    ## Arguments

    - ``width`` (10), ``height`` (20): the board; or ``board="small"`` (10 x 10) or
      ``"large"`` (10 x 20), the two boards of the papers.
    - ``overflow``: ``"end"`` (default) or ``"clear-first"`` (the full lines are removed
      first, and the game ends only if something still sticks out).
    - ``render_mode``: None, ``"ansi"`` (the board as text) or ``"rgb_array"``.

    ``info`` holds ``"state"`` (hashable, comparable), ``"action_mask"``, ``"lines"`` and
    ``"pieces"`` (totals of the game); ``env.unwrapped.placements(features)`` gives the
    features of every placement of the current piece (``nsrl.tetris.features_of_placements``).

    ## Version History

    - v0: initial version.

    Examples:
        >>> import gymnasium as gym, nsrl
        >>> env = gym.make("Tetris-v0", board="small")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, info["action_mask"].dtype, info["state"].height
        ((107,), dtype('int8'), 10)
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": RENDER_FPS}

    def __init__(self, width: int = 10, height: int = 20, board: str | None = None,
                 overflow: str = "end", render_mode: str | None = None) -> None:
        if board is not None:
            if board not in BOARDS:
                raise ValueError(f"board should be 'small' (10 x 10) or 'large' (10 x 20), got "
                                 f"{board!r}; or give width and height")
            width, height = BOARDS[board]
        self.game = Game(width, height, overflow)
        self.width, self.height = width, height
        self.render_mode = check_render_mode(render_mode)
        self.action_space: PlacementSpace = PlacementSpace(4 * width)
        self.observation_space = spaces.Box(0.0, 1.0, (height * width + len(PIECE_NAMES),),
                                            np.float32)
        self._seed: int | None = None
        self._next_game = 0

    def __repr__(self) -> str:
        return (f"TetrisEnv(width={self.width}, height={self.height}, "
                f"overflow={self.game.overflow!r})")

    def _obs(self) -> np.ndarray:
        obs = np.zeros(self.height * self.width + len(PIECE_NAMES), dtype=np.float32)
        obs[:self.height * self.width] = self.game.state.cells().reshape(-1)
        if not self.game.over:
            obs[self.height * self.width + self.game.piece] = 1.0
        return obs

    def _info(self) -> dict[str, Any]:
        legal = self.game.legal()
        self.action_space.legal = legal.astype(np.int8)
        return {"state": self.game.state, "action_mask": legal.astype(np.int8),
                "lines": self.game.lines, "pieces": self.game.pieces}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game (see Starting State); ``options={"state": s}`` starts from ``s``."""
        super().reset(seed=seed)
        if seed is not None:
            self._seed, self._next_game = int(seed), 0
        elif self._seed is None:  # never seeded: a seed from Gymnasium's generator
            self._seed = int(self.np_random.integers(2**63))
        state = (options or {}).get("state")
        if state is not None and not isinstance(state, State):
            raise ValueError(f"options['state'] should be an nsrl.tetris.State (an "
                             f"info['state']), got {type(state).__name__}")
        self.game.reset(self._seed, self._next_game, state)
        self._next_game += 1
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Place the piece; reward = lines removed. ValueError if the action is illegal."""
        lines = self.game.play(int(action))
        return self._obs(), float(lines), self.game.over, False, self._info()

    def placements(self, features: str) -> Placements:
        """Features of every placement of the current piece (one state's batch)."""
        return self.game.placements(features)

    def placement_features(self, features: str) -> PlacementFeatures:
        """The feature map of a :class:`nsrl.LinearScoringPolicy` on this env's observations."""
        return PlacementFeatures(features, self.width, self.height, self.game.overflow)

    def scoring_policy(self, controller: Controller | str) -> LinearScoringPolicy:
        """A linear controller (or a shipped one's name) as a policy acting on observations.

        It chooses as the batch engine does: the same scores, added in feature order, a
        game-ending placement only when every one ends the game, the first of ties.

        Examples:
            >>> import gymnasium as gym
            >>> env = gym.make("Tetris-v0", board="small").unwrapped
            >>> obs, info = env.reset(seed=0)
            >>> pi = env.scoring_policy("dt-10")
            >>> int(pi.act(obs[None], mask=info["action_mask"][None])[0]) in range(40)
            True
        """
        if isinstance(controller, str):
            if controller not in SHIPPED:
                raise ValueError(f"controller should be a Controller or one of "
                                 f"{', '.join(sorted(SHIPPED))}, got {controller!r}")
            controller = SHIPPED[controller]
        names = controller.names(self.width)
        return LinearScoringPolicy(self.placement_features(controller.features),
                                   controller.vector(self.width), names)

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the board as text; ``"rgb_array"``: a picture of it and of the piece."""
        if self.render_mode == "ansi":
            return self.game.state.text() + f"\nlines {self.game.lines}\n"
        if self.render_mode == "rgb_array":
            return self._frame()
        return None

    def _frame(self) -> np.ndarray:
        state = self.game.state
        cells = state.cells()[::-1]  # top row first
        board = np.where(cells[..., None], _FILLED, _EMPTY).repeat(_CELL, 0).repeat(_CELL, 1)
        board[::_CELL, :] = 0  # grid lines
        board[:, ::_CELL] = 0
        side = np.zeros((board.shape[0], 5 * _CELL, 3), dtype=np.uint8)
        if not state.over:  # the piece to place, drawn in its first orientation
            for r, row in enumerate(reversed(SHAPES[state.piece][0])):
                for k, full in enumerate(row):
                    if full:
                        y, x = (1 + r) * _CELL, (1 + k) * _CELL
                        side[y + 1:y + _CELL, x + 1:x + _CELL] = _PIECE
        return np.concatenate([board, side], axis=1)
