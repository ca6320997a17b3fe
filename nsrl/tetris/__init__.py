"""Tetris as the classification-based policy iteration papers play it (MdpTetris's rules).

Pieces, rules and features follow MdpTetris (Thiery and Scherrer), the simulator behind the
published scores of DPI and CBMPI (Gabillon, Ghavamzadeh and Scherrer, NIPS 2013; Scherrer et
al., JMLR 2015): see docs/tetris.md. The engine is compiled with numba and plays many games,
rollouts or feature evaluations per call; ``Tetris-v0`` (``nsrl.envs``) plays one game a step
at a time.

Examples:
    >>> from nsrl.tetris import SHIPPED, play_games
    >>> games = play_games(SHIPPED["dt-10"], 2, width=10, height=10, seed=0)
    >>> games.lines.shape, bool((games.pieces > 0).all())
    ((2,), True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nsrl._lazy import lazy_names

if TYPE_CHECKING:  # the names below, for type checkers; at run time each is imported on use
    from nsrl.tetris.controllers import (
        SHIPPED,
        Controller,
        load_controller,
        parse_weights,
        save_controller,
    )
    from nsrl.tetris.engine import (
        Games,
        Placements,
        Rollouts,
        features_of_placements,
        iter_games,
        legal_actions,
        play_games,
        rollouts,
    )
    from nsrl.tetris.features import FEATURE_SETS, feature_names
    from nsrl.tetris.game import Game
    from nsrl.tetris.pieces import PIECE_NAMES
    from nsrl.tetris.reference import OVERFLOW_RULES
    from nsrl.tetris.state import State, States

# Imported on first use (PEP 562): the command line's parser reads nsrl.tetris.state's board
# limits without compiling the engine, and `nsrl run` imports no Tetris module.
_WHERE = {
    "SHIPPED": "controllers", "Controller": "controllers", "load_controller": "controllers",
    "parse_weights": "controllers", "save_controller": "controllers", "Games": "engine",
    "Placements": "engine", "Rollouts": "engine", "features_of_placements": "engine",
    "iter_games": "engine", "legal_actions": "engine", "play_games": "engine",
    "rollouts": "engine", "FEATURE_SETS": "features", "feature_names": "features",
    "Game": "game", "PIECE_NAMES": "pieces", "OVERFLOW_RULES": "reference", "State": "state",
    "States": "state",
}
__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())

__all__ = ["FEATURE_SETS", "OVERFLOW_RULES", "PIECE_NAMES", "SHIPPED", "Controller", "Game",
           "Games", "Placements", "Rollouts", "State", "States", "feature_names",
           "features_of_placements", "iter_games", "legal_actions", "load_controller",
           "parse_weights", "play_games", "rollouts", "save_controller"]
