"""Mountain car (Moore 1990; Gymnasium's ``MountainCar-v0``), discretised on a grid.

The states are the points of a grid over position [-1.2, 0.6] (``n_positions`` points) and
velocity [-0.07, 0.07] (``n_velocities`` points), index ``i * n_velocities + j``; the actions
push left, do nothing, push right (0, 1, 2). From a grid point, one step of Gymnasium's
equations gives the next continuous state::

    v' = clip(v + (a - 1) force - cos(3 p) gravity, -0.07, 0.07)
    p' = clip(p + v', -1.2, 0.6);  v' = 0 if p' = -1.2 and v' < 0   (the left wall)

with force = 0.001, gravity = 0.0025. If (p', v') is in the goal (p' >= 0.5 and v' >= 0),
the car reaches the absorbing goal; otherwise (p', v') is mapped onto the grid by
``interpolation``:

* ``"barycentric"`` (default): the three corners of the triangle of the grid's Kuhn
  triangulation that holds (p', v'), with its barycentric coordinates as probabilities
  (Munos & Moore 1999). The expected next grid point is exactly (p', v'), so the model is
  consistent: its values converge to the continuous problem's as the grid is refined, even
  where one step moves less than a cell (at rest in the valley a push changes v by 0.001,
  less than a cell of a 100-point velocity grid, and rounding would never move the car);
* ``"nearest"``: the nearest grid point (deterministic, one successor), which needs a grid
  fine enough that every step leaves its cell.

Rewards are -1 per step outside the goal and 0 in it (Gymnasium pays -1 for every step,
the last included, and then ends the episode: the same returns). Grid points in the goal are
absorbing. The start distribution is uniform over the grid points of position in [-0.6, -0.4]
at the velocity closest to 0 (Gymnasium's start: p ~ U[-0.6, -0.4], v = 0); on an even
velocity grid 0 lies halfway between two grid velocities and the lower one is taken, the tie
rule of :func:`nearest_state` (the map from a continuous state to its grid point). The model is
deterministic given its sizes: no instance seed. Its ``features`` are the (position,
velocity) of each grid point, the natural observation.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory
from nsrl.model.structured import check_size

# Gymnasium's MountainCarEnv (gymnasium/envs/classic_control/mountain_car.py)
MIN_POSITION, MAX_POSITION, MAX_SPEED = -1.2, 0.6, 0.07
GOAL_POSITION, GOAL_VELOCITY = 0.5, 0.0
FORCE, GRAVITY = 0.001, 0.0025
START_POSITIONS = (-0.6, -0.4)
INTERPOLATIONS = ("barycentric", "nearest")
MAX_POINTS = 4096  # per axis: 4096^2 = 1.7e7 states is past any memory this targets
# Peak per successor (measured with tracemalloc at 400 x 400: 163 MiB for 1.44e6 entries),
# the interpolation, the copy of nsrl.model.arrays and the canonical form included.
_BYTES_PER_SUCCESSOR = 120


def step(position: np.ndarray, velocity: np.ndarray,
         action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One step of Gymnasium's MountainCar-v0 on arrays: ``(position', velocity', goal)``."""
    velocity = velocity + (action - 1) * FORCE + np.cos(3 * position) * (-GRAVITY)
    velocity = np.clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = np.clip(position + velocity, MIN_POSITION, MAX_POSITION)
    velocity = np.where((position == MIN_POSITION) & (velocity < 0), 0.0, velocity)
    goal = (position >= GOAL_POSITION) & (velocity >= GOAL_VELOCITY)
    return position, velocity, goal


def grid_axes(n_positions: int, n_velocities: int) -> tuple[np.ndarray, np.ndarray]:
    """The grid's positions and velocities (inclusive of both ends)."""
    return (np.linspace(MIN_POSITION, MAX_POSITION, n_positions),
            np.linspace(-MAX_SPEED, MAX_SPEED, n_velocities))


def nearest_index(x: npt.ArrayLike, low: float, high: float, n: int) -> np.ndarray:
    """Index of the point of ``np.linspace(low, high, n)`` nearest to ``x``, elementwise.

    The tie rule: a value exactly halfway between two grid points goes to the **lower**
    index (round half down), and values outside [low, high] go to the end points. The
    position on the axis is computed as ``(x - low) / (high - low) * (n - 1)``, in which the
    axis's midpoint is exact: on a symmetric axis with an even ``n`` (an odd number of cells),
    0 is the tie between the two middle points and always goes to the lower one. numpy's
    ``rint`` (round half to even) would send it up or down with the parity of ``n / 2``, and a
    float32 0 (Gymnasium's observations) computed in float32 would land just past the tie.
    ``x`` is converted to float64 first; a value within rounding of a halfway point (about
    1e-17 on the velocity axis) counts as the tie.

    Why the lower index: the tie that matters is Gymnasium's start velocity 0, and the
    model's start distribution (:func:`mountain_car`) is put at the grid point this rule
    gives, so the check's first grid state is the model's start state.

    Examples:
        >>> nearest_index([0.0, 0.26, 1.0], 0.0, 1.0, 3)
        array([0, 1, 2])
        >>> int(nearest_index(0.0, -0.07, 0.07, 60))  # halfway between 29 and 30: the lower
        29
    """
    t = (np.asarray(x, dtype=float) - low) / (high - low) * (n - 1)
    return np.clip(np.ceil(t - 0.5), 0, n - 1).astype(np.int64)


def nearest_state(position: npt.ArrayLike, velocity: npt.ArrayLike, n_positions: int,
                  n_velocities: int) -> np.ndarray:
    """The state (grid point) nearest to continuous (position, velocity), elementwise.

    Each coordinate is rounded by :func:`nearest_index`: a value halfway between two grid
    points goes to the lower one. This matters on an even velocity grid, where velocity 0
    (Gymnasium's start, and the stop at the left wall) is such a tie: it maps to the
    velocity just below 0, the grid point the model's start distribution uses.

    Examples:
        >>> int(nearest_state(-0.55, 0.0, 10, 11))  # position point 3 (-0.6), velocity 5 (0)
        38
        >>> int(nearest_state(-0.55, 0.0, 10, 10))  # velocity 0 on 10 points: 4 (-0.0078)
        34
    """
    i = nearest_index(position, MIN_POSITION, MAX_POSITION, n_positions)
    j = nearest_index(velocity, -MAX_SPEED, MAX_SPEED, n_velocities)
    return i * n_velocities + j


def _barycentric(fx: np.ndarray, fy: np.ndarray, n_x: int,
                 n_y: int) -> tuple[np.ndarray, np.ndarray]:
    """Kuhn-triangulation corners (n, 3) and weights (n, 3) of grid coordinates (fx, fy)."""
    i0 = np.clip(np.floor(fx), 0, n_x - 2).astype(np.int64)
    j0 = np.clip(np.floor(fy), 0, n_y - 2).astype(np.int64)
    tx, ty = np.clip(fx - i0, 0.0, 1.0), np.clip(fy - j0, 0.0, 1.0)
    upper = tx >= ty  # the triangle (0,0), (1,0), (1,1); else (0,0), (0,1), (1,1)
    mid = np.where(upper, (i0 + 1) * n_y + j0, i0 * n_y + j0 + 1)
    corners = np.stack([i0 * n_y + j0, mid, (i0 + 1) * n_y + j0 + 1], axis=1)
    weights = np.stack([1.0 - np.maximum(tx, ty), np.abs(tx - ty), np.minimum(tx, ty)], axis=1)
    return corners, weights


def mountain_car_nbytes(n_positions: int, n_velocities: int) -> int:
    """Estimated peak memory of :func:`mountain_car` (bytes): O(S A b), b = 3."""
    return _BYTES_PER_SUCCESSOR * n_positions * n_velocities * 3 * 3


def mountain_car(n_positions: int = 100, n_velocities: int = 100,
                 interpolation: str = "barycentric", gamma: float = 0.99) -> FiniteMDP:
    """The discretised mountain car (module docstring) as a FiniteMDP.

    Args:
        n_positions: grid points over position, >= 2.
        n_velocities: grid points over velocity, >= 2 (an odd number puts one at v = 0).
        interpolation: ``"barycentric"`` (3 successors) or ``"nearest"`` (1).
        gamma: discount factor in (0, 1).

    Returns:
        A FiniteMDP of n_positions x n_velocities states and 3 actions whose ``features`` are
        the (position, velocity) of each state.

    Raises:
        ValueError / TypeError: a size out of [2, 4096], an unknown interpolation, a model
            that does not fit in memory; the message names the fix.

    Examples:
        >>> mdp = mountain_car(20, 21)
        >>> mdp.n_states, mdp.n_actions, mdp.branching
        (420, 3, 3)
    """
    fix = "the grid has n_positions x n_velocities points, e.g. 100 x 100"
    n_p = check_size("n_positions", n_positions, 2, MAX_POINTS, fix)
    n_v = check_size("n_velocities", n_velocities, 2, MAX_POINTS, fix)
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation should be one of {INTERPOLATIONS}, got "
                         f"{interpolation!r}.")
    check_memory(mountain_car_nbytes(n_p, n_v), f"mountain_car({n_p}, {n_v})",
                 "use fewer grid points")
    positions, velocities = grid_axes(n_p, n_v)
    p = np.repeat(positions, n_v)
    v = np.tile(velocities, n_p)
    n_states = n_p * n_v
    in_goal = (p >= GOAL_POSITION) & (v >= GOAL_VELOCITY)
    goal_state = n_states - 1  # (0.6, 0.07): in the goal, absorbing like all goal points
    p2, v2, goal = step(p[:, None], v[:, None], np.arange(3)[None, :])  # (S, 3)
    fx = ((p2 - MIN_POSITION) / (positions[1] - positions[0])).ravel()
    fy = ((v2 + MAX_SPEED) / (velocities[1] - velocities[0])).ravel()
    if interpolation == "barycentric":
        nxt, probs = _barycentric(fx, fy, n_p, n_v)
    else:
        nxt = nearest_state(p2, v2, n_p, n_v).reshape(-1, 1)
        probs = np.ones((len(nxt), 1))
    width = nxt.shape[1]
    one = np.zeros(width)
    one[0] = 1.0
    goal = goal.ravel() | np.repeat(in_goal, 3)
    stay = np.where(np.repeat(in_goal, 3), np.repeat(np.arange(n_states), 3), goal_state)
    nxt[goal] = stay[goal, None]
    probs[goal] = one
    start = np.zeros(n_states)
    j0 = int(nearest_index(0.0, -MAX_SPEED, MAX_SPEED, n_v))  # an even grid: the lower
    starts = (positions >= START_POSITIONS[0]) & (positions <= START_POSITIONS[1])
    first = np.flatnonzero(starts) if starts.any() else \
        np.array([int(np.argmin(np.abs(positions - np.mean(START_POSITIONS))))])
    start[first * n_v + j0] = 1.0 / len(first)
    r = np.where(in_goal, 0.0, -1.0)
    return FiniteMDP.from_successors(nxt.reshape(n_states, 3, width),
                                     probs.reshape(n_states, 3, width), r, gamma,
                                     features=np.stack([p, v], axis=1), start=start)
