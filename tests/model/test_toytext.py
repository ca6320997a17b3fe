"""FiniteMDP.from_gymnasium: toy_text dict models as FiniteMDPs, checked against the dict model."""

import gymnasium as gym
import numpy as np
import pytest

import nsrl


def value_iteration_on_dict(P, gamma, n_sweeps=2000):
    """v(s) = max_a sum p (r + gamma (1 - done) v(s')), straight from env.unwrapped.P."""
    v = np.zeros(len(P))
    for _ in range(n_sweeps):
        new = np.array(
            [
                max(
                    sum(p * (r + gamma * (not done) * v[s1]) for p, s1, r, done in P[s][a])
                    for a in P[s]
                )
                for s in range(len(P))
            ]
        )
        if np.max(np.abs(new - v)) < 1e-12:
            break
        v = new
    return new


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("FrozenLake-v1", {}),
        ("FrozenLake-v1", {"is_slippery": False}),
        ("CliffWalking-v1", {"is_slippery": True}),
    ],
)
def test_optimal_value_matches_value_iteration_on_the_dict_model(env_id, kwargs):
    env = gym.make(env_id, **kwargs)
    mdp = nsrl.FiniteMDP.from_gymnasium(env, gamma=0.9)
    v_dict = value_iteration_on_dict(env.unwrapped.P, 0.9)
    terminal = mdp.P[np.arange(mdp.n_states), :, np.arange(mdp.n_states)].min(axis=1) == 1
    terminal &= np.all(mdp.R == 0, axis=1)
    live = ~terminal
    # Terminal states are absorbing with zero reward: value 0 in the converted model.
    np.testing.assert_allclose(nsrl.optimal_value(mdp)[terminal], 0.0, atol=1e-12)
    np.testing.assert_allclose(nsrl.optimal_value(mdp)[live], v_dict[live], atol=1e-8)


def test_frozen_lake_structure():
    env = gym.make("FrozenLake-v1")
    mdp = nsrl.FiniteMDP.from_gymnasium(env, gamma=0.95)
    np.testing.assert_array_equal(mdp.start, env.unwrapped.initial_state_distrib)
    desc = env.unwrapped.desc.ravel()
    for s in np.flatnonzero((desc == b"H") | (desc == b"G")):
        np.testing.assert_array_equal(mdp.P[s, :, s], 1.0)
        np.testing.assert_array_equal(mdp.R[s], 0.0)
    # Only the moves into the goal pay: R[s, a] = P(reach G | s, a).
    goal = int(np.flatnonzero(desc == b"G")[0])
    live = desc != b"G"
    np.testing.assert_allclose(mdp.R[live], mdp.P[live][:, :, goal])


def test_taxi_terminals_are_the_dropoff_states():
    env = gym.make("Taxi-v4")
    mdp = nsrl.FiniteMDP.from_gymnasium(env)
    absorbing = np.flatnonzero(mdp.P[np.arange(500), :, np.arange(500)].min(axis=1) == 1)
    decoded = [tuple(env.unwrapped.decode(int(s))) for s in absorbing]
    locs = env.unwrapped.locs
    # Passenger delivered (index == destination) with the taxi at the destination.
    assert sorted(decoded) == sorted((*locs[d], d, d) for d in range(4))
    np.testing.assert_allclose(mdp.start, env.unwrapped.initial_state_distrib)
    assert mdp.start[absorbing].sum() == 0


def test_bad_inputs():
    with pytest.raises(TypeError, match="toy_text env whose env.unwrapped.P"):
        nsrl.FiniteMDP.from_gymnasium(gym.make("CartPole-v1"))

    class Fake:
        unwrapped = None
        P = {0: {0: [(1.0, 1, 1.0, True)]}, 1: {0: [(1.0, 1, 0.0, False)]}}

    Fake.unwrapped = Fake
    with pytest.raises(ValueError, match="initial_state_distrib"):
        nsrl.FiniteMDP.from_gymnasium(Fake())
    # State 2 is entered by a terminated move (from 0) and by a live one (from 1).
    Fake.P = {
        0: {0: [(0.5, 1, 0.0, False), (0.5, 2, 1.0, True)]},
        1: {0: [(1.0, 2, 0.0, False)]},
        2: {0: [(1.0, 2, 0.0, True)]},
    }
    with pytest.raises(ValueError, match="state 2 is entered both"):
        nsrl.FiniteMDP.from_gymnasium(Fake(), start=[1.0, 0, 0])
