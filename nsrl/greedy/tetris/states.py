"""Where the rollouts of DPI and CBMPI start: a behaviour policy's states, or a policy's own.

* :func:`visited_states` of a good controller (DU in the papers): every state of its
  ``games`` games, each cut at ``max_pieces``; :func:`draw` then takes N of them with the *height
  mix*: each state is weighted by one over the number of states of its height (the highest
  column), so that every height the pool holds is drawn about as often. DU keeps its board
  low, so its states alone are mostly low boards; the papers found that evening out the
  heights "significantly improved" the learned policies (Scherrer et al., JMLR 2015, 6.2.1).
* :func:`visited_states` of the policy itself: the states it visits in its own games from
  the empty board, each visit once (gamma = 1: d_{pi,nu} is the visits' distribution), for
  the CPI family's rho = d_{pi,nu}, drawn without the height mix.
"""

from __future__ import annotations

import numpy as np

from nsrl.tetris.programs import Program, program_games, program_states
from nsrl.tetris.state import States

__all__ = ["draw", "heights", "visited_states"]


def heights(states: States) -> np.ndarray:
    """The height of each board: its highest filled row + 1 (0 for an empty board)."""
    filled = states.boards != 0
    top = np.where(filled.any(axis=1), states.height - np.argmax(filled[:, ::-1], axis=1), 0)
    return top.astype(np.int64)


def visited_states(program: Program, *, games: int, max_pieces: int, width: int,
                   height: int, seed: int, overflow: str = "end") -> tuple[States, int]:
    """Every live state of games 0..games-1 of ``program`` (seed), each cut at max_pieces.

    Returns the states (the one before each placement, the game's last one included) and the
    placements played to get them (each game is played twice: once for its length, once to
    record its states).
    """
    _, pieces = program_games(program, games, width=width, height=height, seed=seed,
                              overflow=overflow, max_pieces=max_pieces)
    times = [range(int(min(n, max_pieces))) for n in pieces]
    states = program_states(program, times, width=width, height=height, seed=seed,
                            overflow=overflow)
    assert isinstance(states, States)
    live = states.pieces >= 0
    return States(states.boards[live], states.pieces[live], width), int(2 * pieces.sum())


def draw(pool: States, n: int, rng: np.random.Generator, *, height_mix: bool) -> States:
    """``n`` states of ``pool`` (with replacement), evened out by height if ``height_mix``."""
    if len(pool) == 0:
        raise ValueError("no state to draw from: the games ended before their first placement")
    if height_mix:
        h = heights(pool)
        count = np.bincount(h)
        weight = 1.0 / count[h]
        idx = rng.choice(len(pool), size=n, p=weight / weight.sum())
    else:
        idx = rng.integers(len(pool), size=n)
    return States(pool.boards[idx], pool.pieces[idx], pool.width)
