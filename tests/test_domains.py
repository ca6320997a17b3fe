"""Grid worlds and the discretised mountain car: structure, reachability, bad input, seeds, v*."""

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

import nsrl
from nsrl.model.gridworld import MOVES, grid_index, gridworld
from nsrl.model.mountain_car import (
    grid_axes,
    mountain_car,
    nearest_index,
    nearest_state,
    step,
)
from nsrl.model.structured import with_features


def _strongly_connected(mdp) -> bool:
    n, _ = csgraph.connected_components(_state_graph(mdp), directed=True, connection="strong")
    return n == 1


def _state_graph(mdp):
    import scipy.sparse as sp

    nxt, probs = mdp.successors
    s = np.repeat(np.arange(mdp.n_states), nxt.shape[1] * nxt.shape[2])
    keep = probs.ravel() > 0
    return sp.csr_matrix((np.ones(keep.sum()), (s[keep], nxt.ravel()[keep])),
                         shape=(mdp.n_states, mdp.n_states))


# --- grid worlds ----------------------------------------------------------------------------

@pytest.mark.parametrize(("size", "slip", "obstacles"), [(6, 0.0, 0.0), (12, 0.2, 0.25),
                                                         (30, 1.0, 0.35)])
def test_gridworld_structure_and_reachability(size, slip, obstacles):
    mdp = gridworld(size, slip=slip, obstacles=obstacles, seed=3)
    assert mdp.n_actions == 4 and mdp.branching <= 4 and mdp.state_reward
    assert mdp.features.shape == (mdp.n_states, 2)
    assert 0 <= mdp.R.min() and mdp.R.max() == 1.0
    np.testing.assert_allclose(mdp.P_csr.sum(axis=1), 1.0)
    assert _strongly_connected(mdp)  # every free cell reaches every other one
    if obstacles == 0.0:
        assert mdp.n_states == size * size


def test_gridworld_moves_and_slip():
    mdp = gridworld(5, slip=0.2, obstacles=0.0, seed=0)
    index = grid_index(mdp, 5)
    s = index[2, 2]
    for a, (dr, dc) in enumerate(MOVES):
        assert mdp.P[s, a, index[2 + dr, 2 + dc]] == pytest.approx(0.8 + 0.05)
        assert mdp.P[s, a, s] == 0.0  # no wall around (2, 2)
    corner = index[0, 0]  # up and left hit the walls: stay with (intended or slip) mass
    assert mdp.P[corner, 0, corner] == pytest.approx(0.85 + 0.05)


def test_gridworld_same_seed_same_instance():
    a, b = gridworld(20, obstacles=0.2, seed=5), gridworld(20, obstacles=0.2, seed=5)
    assert a == b and a != gridworld(20, obstacles=0.2, seed=6)


def test_gridworld_goals_reached_by_the_optimal_policy():
    mdp = gridworld(15, slip=0.1, obstacles=0.2, reward="goals", goals=1, pits=3, seed=1)
    goal = int(np.flatnonzero(mdp.R[:, 0] == 1.0)[0])
    pi = nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp))
    # Follow pi* without slipping from every start state: each reaches the goal.
    index = grid_index(mdp, 15)
    coords = mdp.features.astype(int)
    for s in np.flatnonzero(mdp.start):
        for _ in range(15 * 15):
            if s == goal:
                break
            r, c = coords[s] + MOVES[pi[s]]
            s = index[r, c] if 0 <= r < 15 and 0 <= c < 15 and index[r, c] >= 0 else s
        assert s == goal
    assert mdp.start[goal] == 0.0


def test_gridworld_given_goal_cells():
    mdp = gridworld(6, obstacles=0.0, reward="goals", goals=[(5, 5)], pits=[(0, 5)], seed=0)
    assert mdp.R[grid_index(mdp, 6)[5, 5], 0] == 1.0 and mdp.R[5, 0] == -1.0


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"size": 1}, ValueError, "size should be in"),
    ({"size": 10.5}, TypeError, "size should be an int"),
    ({"slip": 1.5}, ValueError, r"slip should be in \[0, 1\]"),
    ({"slip": -0.1}, ValueError, "slip"),
    ({"obstacles": 0.95}, ValueError, "obstacles should be in"),
    ({"reward": "sparse"}, ValueError, "reward should be one of"),
    ({"reward": "goals", "goals": 0}, ValueError, "goals should be in"),
    ({"reward": "goals", "goals": [(9, 9)]}, ValueError, "outside the 4 x 4 grid"),
    ({"reward": "goals", "goals": 10, "pits": 6, "obstacles": 0.3}, ValueError, "ask for fewer"),
    ({"size": 2, "obstacles": 0.9, "seed": 2}, ValueError, "lower obstacles"),
])
def test_gridworld_bad_input(kwargs, error, match):
    kwargs = {"size": 4, "seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        gridworld(**kwargs)


def test_gridworld_goal_on_an_obstacle_is_refused():
    mdp = gridworld(8, obstacles=0.3, seed=4)
    blocked = np.argwhere(grid_index(mdp, 8) < 0)[0]
    with pytest.raises(ValueError, match="cannot be reached"):
        gridworld(8, obstacles=0.3, reward="goals", goals=[tuple(blocked)], seed=4)


# --- mountain car ---------------------------------------------------------------------------

def test_dynamics_are_gymnasiums():
    import gymnasium as gym

    env = gym.make("MountainCar-v0").unwrapped
    rng = np.random.default_rng(0)
    for _ in range(200):
        p, v = rng.uniform(-1.2, 0.6), rng.uniform(-0.07, 0.07)
        a = int(rng.integers(3))
        env.state = np.array([p, v])
        obs, _, terminated, _, _ = env.step(a)
        p2, v2, goal = step(np.array(p), np.array(v), a)
        assert np.allclose(obs, [p2, v2], atol=1e-12) and bool(goal) == terminated


@pytest.mark.parametrize("interpolation", ["barycentric", "nearest"])
def test_mountain_car_structure(interpolation):
    mdp = mountain_car(15, 11, interpolation=interpolation)
    assert mdp.n_states == 165 and mdp.n_actions == 3
    assert mdp.branching == (3 if interpolation == "barycentric" else 1)
    np.testing.assert_allclose(mdp.P_csr.sum(axis=1), 1.0)
    assert mdp.start.sum() == pytest.approx(1.0)
    p, v = mdp.features.T
    assert set(np.unique(mdp.R)) == {-1.0, 0.0}
    assert ((mdp.R[:, 0] == 0) == ((p >= 0.5) & (v >= 0))).all()
    assert np.allclose(v[mdp.start > 0], 0.0)


def test_barycentric_successor_mean_is_the_continuous_next_state():
    mdp = mountain_car(30, 31)
    positions, velocities = grid_axes(30, 31)
    p, v = mdp.features.T
    p2, v2, goal = step(p[:, None], v[:, None], np.arange(3)[None, :])
    nxt, probs = mdp.successors
    ok = ~goal & (mdp.R[:, :1] < 0)
    mean_p = (probs * p[nxt]).sum(-1)
    mean_v = (probs * v[nxt]).sum(-1)
    np.testing.assert_allclose(mean_p[ok], p2[ok], atol=1e-12)
    np.testing.assert_allclose(mean_v[ok], v2[ok], atol=1e-12)


def test_mountain_car_optimal_policy_reaches_the_goal():
    mdp = mountain_car(41, 41, gamma=0.999)
    v = nsrl.optimal_value(mdp)
    s = nearest_state(-0.5, 0.0, 41, 41)
    # Under 200 steps from the bottom of the valley: v > -(1 - gamma^200) / (1 - gamma).
    assert v[s] > -(1 - 0.999 ** 200) / (1 - 0.999)
    # the goal's value is 0, v* is certified within v_star_bound (not exact: modified PI)
    assert abs(v.max()) <= nsrl.exact.backend(mdp).v_star_bound


def test_nearest_state_round_trip():
    mdp = mountain_car(9, 7)
    p, v = mdp.features.T
    assert (nearest_state(p, v, 9, 7) == np.arange(mdp.n_states)).all()


@pytest.mark.parametrize("n", [2, 4, 10, 30, 58, 60, 100, 316, 4096])
def test_velocity_zero_on_an_even_grid_goes_to_the_lower_of_the_two_middle_points(n):
    # 0 is exactly halfway between grid velocities n/2 - 1 and n/2: the tie rule takes the
    # lower, whatever the parity of n/2 (numpy's rint, half to even, took 14 at n = 30 and
    # 30 at n = 60) and whether the observation is float32 (Gymnasium's) or float64.
    for zero in (0.0, np.float32(0.0), -0.0):
        assert int(nearest_index(zero, -0.07, 0.07, n)) == n // 2 - 1
    # 1e-15 past the tie (a cell is at least 3.4e-5 wide; (v + 0.07) resolves 1.4e-17)
    assert int(nearest_index(1e-15, -0.07, 0.07, n)) == n // 2
    assert int(nearest_index(-1e-15, -0.07, 0.07, n)) == n // 2 - 1


def test_nearest_index_ties_and_ends():
    # On [0, 1] with 3 points (0, 0.5, 1) the midpoints 0.25 and 0.75 are exact ties.
    x = np.array([-1.0, 0.0, 0.25, np.nextafter(0.25, 1), 0.5, 0.75, np.nextafter(0.75, 0),
                  np.nextafter(0.75, 1), 1.0, 2.0])
    assert nearest_index(x, 0.0, 1.0, 3).tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert int(nearest_index(0.0, -0.07, 0.07, 61)) == 30  # odd grid: a point at 0


@pytest.mark.parametrize("n_velocities", [10, 58, 60, 61, 100])
def test_the_start_velocity_is_where_the_tie_rule_maps_velocity_zero(n_velocities):
    # The model's start and the map of Gymnasium's start (p, 0) onto the grid agree. At
    # n = 58 the velocity of smallest |v| in floating point was the upper middle one.
    mdp = mountain_car(12, n_velocities)
    _, v = grid_axes(12, n_velocities)
    starts = np.flatnonzero(mdp.start)
    assert set(starts % n_velocities) == {int(nearest_index(0.0, -0.07, 0.07, n_velocities))}
    p = mdp.features[starts, 0]
    np.testing.assert_array_equal(nearest_state(p, np.zeros_like(p), 12, n_velocities), starts)
    assert v[starts[0] % n_velocities] <= 0


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"n_positions": 1}, ValueError, "n_positions should be in"),
    ({"n_velocities": 2.0}, TypeError, "n_velocities should be an int"),
    ({"n_positions": 10**5}, ValueError, "n_positions"),
    ({"interpolation": "linear"}, ValueError, "interpolation should be one of"),
    ({"gamma": 1.0}, ValueError, "gamma"),
])
def test_mountain_car_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        mountain_car(**{"n_positions": 10, "n_velocities": 10, **kwargs})


def test_with_features_keeps_the_model():
    mdp = mountain_car(10, 10)
    other = with_features(mdp, np.ones((100, 3)))
    assert other.n_features == 3 and other.successors[0] is mdp.successors[0]
    np.testing.assert_allclose(nsrl.optimal_value(other), nsrl.optimal_value(mdp))
