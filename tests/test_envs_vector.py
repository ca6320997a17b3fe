"""Native vector envs: make_vec, NEXT_STEP autoreset, reset-to-state, N envs == N single envs."""

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import nsrl
from nsrl.envs import FiniteMDPVectorEnv, GarnetEnv, GarnetVectorEnv

BACKENDS = ("numba", "numpy")


def test_make_vec_gives_the_native_vector_env():
    envs = gym.make_vec("Garnet-v0", num_envs=16, n_states=30, seed=2)
    assert type(envs) is GarnetVectorEnv
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert envs.max_episode_steps == 1000
    assert envs.unwrapped.mdp == nsrl.garnet(30, 4, 5, seed=2)
    obs, _ = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    mdp = nsrl.garnet(12, 2, 3, seed=0)
    assert type(gym.make_vec("FiniteMDP-v0", num_envs=3, mdp=mdp)) is FiniteMDPVectorEnv


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_copy_follows_the_single_env_exactly(backend):
    # Same Generator, same draws in the same order: N = 1 is the single env, step for step.
    actions = np.random.default_rng(1).integers(0, 4, 300)
    single = GarnetEnv(n_states=40, backend=backend)
    vec = GarnetVectorEnv(1, n_states=40, backend=backend)
    obs, _ = single.reset(seed=5)
    vobs, _ = vec.reset(seed=5)
    assert vobs[0] == obs
    for a in actions:
        obs, r, *_ = single.step(a)
        vobs, vr, *_ = vec.step([a])
        assert (vobs[0], vr[0]) == (obs, r)


def trajectory(backend, seed):
    envs = GarnetVectorEnv(32, n_states=50, max_episode_steps=7, backend=backend)
    out = [envs.reset(seed=seed)[0]]
    for a in np.random.default_rng(0).integers(0, 4, (30, 32)):
        out += list(envs.step(a)[:4])
    return np.concatenate([np.ravel(x).astype(float) for x in out])


def test_same_seeds_same_trajectories_and_backends_agree():
    base = trajectory("numba", 3)
    np.testing.assert_array_equal(trajectory("numpy", 3), base)
    assert not np.array_equal(trajectory("numba", 4), base)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vector_and_single_envs_sample_P_from_reset_to_state(backend):
    mdp = nsrl.garnet(8, 2, 3, seed=4)
    reps = 1000
    pairs = np.array([(s, a) for s in range(8) for a in range(2)])
    states, actions = np.repeat(pairs[:, 0], reps), np.repeat(pairs[:, 1], reps)
    vec = FiniteMDPVectorEnv(mdp, num_envs=states.size, backend=backend)
    vec.reset(seed=0, options={"state": states})
    nxt_vec = vec.step(actions)[0]
    single = nsrl.envs.FiniteMDPEnv(mdp, backend=backend)
    nxt_single = np.empty_like(nxt_vec)
    for i, (s, a) in enumerate(zip(states, actions, strict=True)):  # N single envs, seeds i
        single.reset(seed=i, options={"state": int(s)})
        nxt_single[i] = single.step(a)[0]
    sd = np.sqrt(mdp.P * (1 - mdp.P) / reps)
    for nxt in (nxt_vec, nxt_single):
        counts = np.zeros(mdp.P.shape)
        np.add.at(counts, (states, actions, nxt), 1)
        # Each empirical P[s, a, s'] within 5 binomial standard deviations of the truth.
        assert np.all(np.abs(counts / reps - mdp.P) <= 5 * sd + 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sample_agrees_with_step_and_leaves_the_env_alone(backend):
    envs = GarnetVectorEnv(64, n_states=30, backend=backend)
    states = np.arange(64) % 30
    envs.reset(seed=1, options={"state": states})
    actions = np.arange(64) % 4
    rng = copy.deepcopy(envs.np_random)
    before = envs.np_random.bit_generator.state
    s1, r1 = envs.sample(states, actions, rng)
    assert envs.np_random.bit_generator.state == before
    np.testing.assert_array_equal(envs.states, states)
    obs, r, term, trunc, info = envs.step(actions)
    np.testing.assert_array_equal(obs, s1)
    np.testing.assert_array_equal(r, r1)
    np.testing.assert_array_equal(r, envs.mdp.R[states, actions])
    assert not term.any() and not trunc.any()


def test_next_step_autoreset_after_truncation():
    P = np.full((5, 2, 5), 0.2)
    mdp = nsrl.FiniteMDP(P, np.arange(5.0) + 1, 0.9, start=[0, 0, 0, 1.0, 0])
    envs = FiniteMDPVectorEnv(mdp, num_envs=6, max_episode_steps=3)
    envs.reset(seed=0, options={"state": np.arange(6) % 5})
    for step in range(1, 10):
        obs, r, term, trunc, _ = envs.step(np.zeros(6, dtype=int))
        assert not term.any()
        if step % 4 == 0:  # the step after a truncation: reset to nu, reward 0
            assert np.all(obs == 3) and np.all(r == 0) and not trunc.any()
        else:
            assert np.all(r > 0) and np.all(trunc == (step % 4 == 3))


@pytest.mark.parametrize("mode", ["onehot", "features"])
def test_vector_observations(mode):
    envs = GarnetVectorEnv(5, n_states=30, observation=mode)
    obs, info = envs.reset(seed=0, options={"state": [0, 1, 2, 3, 29]})
    assert envs.observation_space.contains(obs)
    np.testing.assert_array_equal(obs, envs.observe(info["state"]))
    obs, *_, info = envs.step(np.zeros(5, dtype=int))
    np.testing.assert_array_equal(obs, envs.observe(info["state"]))
    assert obs.shape == (5, 30 if mode == "onehot" else 3)


def test_bad_arguments_say_what_was_expected():
    envs = GarnetVectorEnv(4, n_states=10)
    with pytest.raises(ValueError, match=r"should be in \[0, 10\), got 12"):
        envs.reset(options={"state": [0, 1, 2, 12]})
    with pytest.raises(ValueError, match=r"shape \(4,\), got shape \(3,\)"):
        envs.reset(options={"state": [0, 1, 2]})
    envs.reset(seed=0, options={"state": 9})
    np.testing.assert_array_equal(envs.states, [9] * 4)
    with pytest.raises(ValueError, match=r"actions should be a 1-d array of shape \(4,\)"):
        envs.step(np.zeros(5, dtype=int))
    with pytest.raises(TypeError, match="integers"):
        envs.step(np.zeros(4))
    with pytest.raises(ValueError, match="num_envs should be an int >= 1"):
        GarnetVectorEnv(0)
    with pytest.raises(ValueError, match="max_episode_steps should be None or an int >= 1"):
        GarnetVectorEnv(2, max_episode_steps=0)
    with pytest.raises(ValueError, match="observation should be one of"):
        GarnetVectorEnv(2, observation="rgb")
