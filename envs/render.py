"""Rendering of finite-MDP envs: Gymnasium's ``"ansi"`` (a line of text) and ``"rgb_array"``.

A finite MDP has no geometry, so the picture is a map of its states: a near-square grid of
cells in state order, each shaded by the state's mean reward (dark: low, light: high), the
current state in red. It is what ``RecordVideo`` records and what SB3 asks for when an
algorithm is given an env id (``gym.make(id, render_mode="rgb_array")``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from nsrl.model.mdp import FiniteMDP

RENDER_MODES = ("ansi", "rgb_array")
RENDER_FPS = 4
_SIDE = 256  # target width of a frame in pixels (cells are at least 1 pixel)
_CURRENT = np.array([220, 50, 40], dtype=np.uint8)


def check_render_mode(mode: str | None) -> str | None:
    """``mode`` if it is None or one of :data:`RENDER_MODES`, else ValueError naming them."""
    if mode is not None and mode not in RENDER_MODES:
        raise ValueError(f"render_mode should be None, 'ansi' or 'rgb_array', got {mode!r}; "
                         f"e.g. gym.make('Garnet-v0', render_mode='rgb_array').")
    return mode


def layout(n_states: int) -> tuple[int, int, int]:
    """``(rows, cols, cell)``: the grid of the states and the side of a cell in pixels."""
    cols = math.ceil(math.sqrt(n_states))
    rows = math.ceil(n_states / cols)
    return rows, cols, max(1, _SIDE // cols)


def background(mdp: FiniteMDP) -> np.ndarray:
    """The frame without a current state: (H, W, 3) uint8, H and W even (video codecs)."""
    rows, cols, cell = layout(mdp.n_states)
    reward = mdp.R.mean(axis=1)
    span = float(reward.max() - reward.min())
    shade = (reward - reward.min()) / span if span > 0 else np.full(mdp.n_states, 0.5)
    grid = np.zeros((rows * cols, 3), dtype=np.uint8)
    grid[:mdp.n_states] = (40 + 170 * shade)[:, None].astype(np.uint8) * np.array(
        [1, 1, 1], dtype=np.uint8)
    image = grid.reshape(rows, cols, 3).repeat(cell, axis=0).repeat(cell, axis=1)
    if cell >= 4:  # a one-pixel gap between cells
        image[cell - 1::cell, :] = 0
        image[:, cell - 1::cell] = 0
    pad = ((0, image.shape[0] % 2), (0, image.shape[1] % 2), (0, 0))
    return np.pad(image, pad)


def frame(base: np.ndarray, n_states: int, state: int | np.integer) -> np.ndarray:
    """``base`` (see :func:`background`) with ``state``'s cell painted red, as a new array."""
    _, cols, cell = layout(n_states)
    row, col = divmod(int(state), cols)
    image = base.copy()
    inner = max(1, cell - 1) if cell >= 4 else cell
    image[row * cell:row * cell + inner, col * cell:col * cell + inner] = _CURRENT
    return image


def text(n_states: int, state: int | np.integer, action: int | np.integer | None,
         reward: float | None) -> str:
    """The ``"ansi"`` rendering: the state, and the last action and reward if any."""
    last = ("" if action is None or reward is None
            else f"  last action {int(action)}  reward {float(reward):.6g}")
    return f"state {int(state)} of {n_states}{last}\n"
