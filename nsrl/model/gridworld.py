"""Grid worlds: an n x n grid, four moves that slip, seeded obstacles, a seeded reward map.

The states are the free cells of the largest 4-connected region left by the obstacles, so
every state reaches every other one. Moves are up, right, down, left (actions 0-3); with
probability ``slip`` the move is replaced by one of the four drawn uniformly (the intended
one included), and a move into a wall or an obstacle stays put. The reward depends on the
state only (the paper's r(s)):

* ``reward="smooth"``: a sum of ``n_bumps`` Gaussian bumps of seeded centre, width and sign,
  rescaled to [0, 1]; the value function is then smooth in the coordinates, which is what
  makes a feature map of them informative;
* ``reward="goals"``: ``goals`` cells paying +1 and ``pits`` cells paying -1, all absorbing
  (the reward is paid at every step spent there); every other cell pays 0.

The model's ``features`` are the coordinates ``(row, col)`` of each state (floats, 0 to n-1),
the natural observation; :func:`nsrl.model.structured.with_features` swaps them for a feature
map. Memory is O(S A b) with b <= 4 successors: 10^6 states fit in a few hundred MiB.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from nsrl.model.arrays import index_array
from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory
from nsrl.model.structured import as_generator, check_float, check_size

MOVES = np.array([[-1, 0], [0, 1], [1, 0], [0, -1]])  # up, right, down, left: (d_row, d_col)
REWARDS = ("smooth", "goals")
MAX_OBSTACLES = 0.9  # beyond, the free region is a handful of cells (percolation: ~0.41)
# Drawn, copied (nsrl.model.arrays) and canonical successor lists and probabilities: peak
# measured with tracemalloc at size 400 (228 MiB), per successor.
_BYTES_PER_SUCCESSOR = 90


def free_region(n: int, obstacles: float, rng: np.random.Generator) -> np.ndarray:
    """The free cells (bool (n, n)): the largest 4-connected region left by the obstacles.

    Each cell is an obstacle with probability ``obstacles``; ties between regions of one size
    go to the region met first in row-major order.
    """
    free = rng.random((n, n)) >= obstacles
    labels, n_regions = ndimage.label(free)  # 4-connectivity (scipy's default cross)
    if n_regions == 0:
        return free
    sizes = np.bincount(labels.ravel())[1:]
    return labels == 1 + int(np.argmax(sizes))


def smooth_reward(coords: np.ndarray, n: int, n_bumps: int, rng) -> np.ndarray:
    """A sum of Gaussian bumps at the coordinates (S, 2), rescaled to [0, 1].

    Centres uniform over the grid, widths U[0.05, 0.2] n, amplitudes U[-1, 1].
    """
    centres = rng.random((n_bumps, 2)) * n
    widths = rng.uniform(0.05, 0.2, n_bumps) * n
    amplitudes = rng.uniform(-1.0, 1.0, n_bumps)
    r = np.zeros(len(coords))
    for c, w, a in zip(centres, widths, amplitudes, strict=True):
        r += a * np.exp(-((coords - c) ** 2).sum(axis=1) / (2.0 * w * w))
    span = r.max() - r.min()
    return (r - r.min()) / span if span > 0 else np.zeros(len(coords))


def _neighbours(free: np.ndarray, index: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """dest[s, d]: the state reached by move d from s (s itself when blocked), (S, 4)."""
    n = free.shape[0]
    rc = coords.astype(np.int64)[:, None, :] + MOVES[None, :, :]
    inside = ((rc >= 0) & (rc < n)).all(axis=2)
    rc = np.clip(rc, 0, n - 1)
    target = index[rc[..., 0], rc[..., 1]]
    stay = np.broadcast_to(np.arange(len(coords))[:, None], target.shape)
    return np.where(inside & (target >= 0), target, stay)


def _is_count(spec) -> bool:
    return isinstance(spec, int | np.integer) and not isinstance(spec, bool)


def check_cells(name: str, cells) -> np.ndarray:
    """``cells`` as an int array of (row, col) pairs, shape (k, 2) (one pair may be given flat).

    Raises:
        TypeError: non-integer coordinates (``(0.5, 1)`` is refused, never truncated).
        ValueError: anything but pairs, e.g. ``[[0, 0, 0]]``.
    """
    arr = index_array(f"{name} (cells)", cells)
    if arr.shape == (2,):
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} should be a count or a list of (row, col) pairs, got an array "
                         f"of shape {arr.shape}; e.g. {name}=[(0, 4), (3, 3)] or {name}=2.")
    return arr


def _given_states(name: str, cells, index: np.ndarray) -> np.ndarray:
    """The states at the (row, col) ``cells``, or ValueError for a cell no state occupies."""
    n = index.shape[0]
    cells = check_cells(name, cells)
    outside = ((cells < 0) | (cells >= n)).any(axis=1)
    if outside.any():
        raise ValueError(f"{name}: cell {tuple(cells[outside][0].tolist())} is outside the "
                         f"{n} x {n} grid; give (row, col) pairs in [0, {n}).")
    states = index[cells[:, 0], cells[:, 1]]
    if (states < 0).any():
        raise ValueError(f"{name}: cell {tuple(cells[states < 0][0].tolist())} is an obstacle "
                         f"or cut off from the free region, so it cannot be reached; choose a "
                         f"free cell, or lower obstacles (or change seed).")
    return states


def _place(index: np.ndarray, goals, pits, rng) -> tuple[np.ndarray, np.ndarray]:
    """The states of the goals and the pits: given as cells, or drawn among the free ones."""
    n_states = int(index.max()) + 1
    fixed = {k: _given_states(k, v, index) for k, v in (("goals", goals), ("pits", pits))
             if not _is_count(v)}
    taken = np.concatenate([np.empty(0, np.int64), *fixed.values()])
    if len(np.unique(taken)) < len(taken):
        raise ValueError("a cell is given twice among the goals and pits; give distinct cells.")
    pool = np.setdiff1d(np.arange(n_states), taken)
    n_goals = goals if _is_count(goals) else 0
    n_pits = pits if _is_count(pits) else 0
    if n_goals + n_pits > len(pool):
        raise ValueError(f"goals and pits need {n_goals + n_pits} more cells than the "
                         f"{len(pool)} free ones left; ask for fewer.")
    drawn = rng.permutation(pool)[:n_goals + n_pits]
    return (fixed.get("goals", drawn[:n_goals]), fixed.get("pits", drawn[n_goals:]))


def gridworld_nbytes(size: int) -> int:
    """Estimated peak memory of :func:`gridworld` (bytes): O(n^2 A b)."""
    return _BYTES_PER_SUCCESSOR * size * size * 4 * 4 + 64 * size * size


def gridworld(size: int, slip: float = 0.1, obstacles: float = 0.1, reward: str = "smooth",
              gamma: float = 0.99, *, n_bumps: int = 8, goals=1, pits=0,
              seed) -> FiniteMDP:
    """Draw a grid world (module docstring) as a FiniteMDP with the coordinates as features.

    Draws happen in this order from one generator: obstacles, then the reward map (or the
    goals, then the pits), so the same seed gives the same instance on any machine.

    Args:
        size: the side n of the grid, n >= 2 (n^2 cells; 1000 gives 10^6).
        slip: probability in [0, 1] that a move is replaced by a uniformly drawn one.
        obstacles: probability in [0, 0.9] that a cell is an obstacle.
        reward: ``"smooth"`` (a seeded map in [0, 1]) or ``"goals"`` (goals +1, pits -1,
            absorbing).
        gamma: discount factor in (0, 1).
        n_bumps: Gaussian bumps of the smooth map (>= 1).
        goals: for ``reward="goals"``: how many goal cells to draw (>= 1), or their
            (row, col) cells.
        pits: the same for the pits (>= 0).
        seed: the instance seed (a non-negative int, a SeedSequence or a Generator).

    Returns:
        A FiniteMDP whose ``features`` are the (row, col) of each state, row-major order of
        the free cells; the start distribution is uniform over the non-absorbing states.

    Raises:
        ValueError / TypeError: a size, probability or option out of range, obstacles that
            leave no free cell, a goal on an obstacle; the message names the fix.

    Examples:
        >>> mdp = gridworld(10, slip=0.2, obstacles=0.1, seed=0)
        >>> mdp.n_actions, mdp.features.shape[1], mdp.branching <= 4
        (4, 2, True)
    """
    size = check_size("size", size, 2, 10**5, "the grid has size x size cells, e.g. size=100")
    slip = check_float("slip", slip, 0.0, 1.0, "a probability, e.g. slip=0.1")
    obstacles = check_float("obstacles", obstacles, 0.0, MAX_OBSTACLES,
                            "the probability that a cell is an obstacle, e.g. obstacles=0.1")
    if reward not in REWARDS:
        raise ValueError(f"reward should be one of {REWARDS}, got {reward!r}.")
    n_bumps = check_size("n_bumps", n_bumps, 1, 10**4, "e.g. n_bumps=8")
    if reward == "goals":
        for name, spec, low in (("goals", goals, 1), ("pits", pits, 0)):
            if _is_count(spec):
                check_size(name, spec, low, size * size, f"how many {name} to draw")
            else:
                check_cells(name, spec)
    check_memory(gridworld_nbytes(size), f"gridworld({size})", "use a smaller size")
    rng = as_generator(seed)
    free = free_region(size, obstacles, rng)
    if not free.any() or free.sum() < 2:
        raise ValueError(f"obstacles={obstacles} leaves {int(free.sum())} free cell(s) on the "
                         f"{size} x {size} grid with this seed; lower obstacles or change seed.")
    coords = np.argwhere(free).astype(np.float64)  # row-major order
    index = -np.ones((size, size), dtype=np.int64)
    index[free] = np.arange(len(coords))
    dest = _neighbours(free, index, coords)
    n_states = len(coords)
    probs = np.full((4, 4), slip / 4.0) + (1.0 - slip) * np.eye(4)  # probs[a, d]
    nxt = np.broadcast_to(dest[:, None, :], (n_states, 4, 4)).copy()
    p = np.broadcast_to(probs, (n_states, 4, 4)).copy()
    start = np.ones(n_states)
    if reward == "smooth":
        r = smooth_reward(coords, size, n_bumps, rng)
    else:
        goal_states, pit_states = _place(index, goals, pits, rng)
        r = np.zeros(n_states)
        r[goal_states], r[pit_states] = 1.0, -1.0
        absorbing = np.concatenate([goal_states, pit_states])
        nxt[absorbing] = absorbing[:, None, None]
        p[absorbing] = np.array([1.0, 0.0, 0.0, 0.0])
        start[absorbing] = 0.0
        if not start.any():
            raise ValueError("every state is a goal or a pit; ask for fewer of them.")
    return FiniteMDP.from_successors(nxt, p, r, gamma, features=coords,
                                     start=start / start.sum())


def grid_index(mdp: FiniteMDP, size: int) -> np.ndarray:
    """The state of each cell of a grid world, -1 on obstacles, shape (size, size).

    Examples:
        >>> index = grid_index(gridworld(5, obstacles=0.0, seed=0), 5)
        >>> int(index[1, 2])
        7
    """
    index = -np.ones((size, size), dtype=np.int64)
    rc = mdp.features.astype(np.int64)
    index[rc[:, 0], rc[:, 1]] = np.arange(mdp.n_states)
    return index
