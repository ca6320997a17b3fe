"""Single envs (GarnetEnv, FiniteMDPEnv): checkers, registration, seeding, sample == step."""

import copy
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import nsrl
from nsrl.envs import FiniteMDPEnv, GarnetEnv

sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
MODES = ("index", "onehot", "features")
BACKENDS = ("numba", "numpy")
TOY_TEXT = [("FrozenLake-v1", {}), ("Taxi-v4", {}), ("CliffWalking-v1", {"is_slippery": True})]


def run_checkers(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(make().unwrapped)  # unwrapped from gym.make: has a spec, no wrappers
        sb3_checker.check_env(make())


@pytest.mark.parametrize("mode", MODES)
def test_checkers_pass_without_warning_on_garnet(mode):
    run_checkers(lambda: gym.make("Garnet-v0", n_states=30, observation=mode))


@pytest.mark.parametrize(("env_id", "kwargs"), TOY_TEXT)
@pytest.mark.parametrize("mode", ["index", "onehot"])
def test_checkers_pass_without_warning_on_toy_text(env_id, kwargs, mode):
    mdp = nsrl.FiniteMDP.from_gymnasium(gym.make(env_id, **kwargs))
    run_checkers(lambda: gym.make("FiniteMDP-v0", mdp=mdp, observation=mode))


def test_make_with_module_prefix_needs_no_prior_import():
    code = (
        "import sys, gymnasium as gym\n"
        "assert 'nsrl' not in sys.modules\n"
        "env = gym.make('nsrl:Garnet-v0', n_states=20, seed=4)\n"
        "import nsrl\n"
        "assert env.unwrapped.mdp == nsrl.garnet(20, 4, 5, seed=4)\n"
        "print(type(env.unwrapped).__name__, env.spec.max_episode_steps)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.split() == ["GarnetEnv", "1000"]


def test_unwrapped_mdp_is_the_garnet_with_the_same_arguments():
    env = gym.make("Garnet-v0", n_states=40, n_actions=3, branching=2, n_features=6, seed=11)
    mdp = env.unwrapped.mdp
    assert mdp == nsrl.garnet(40, 3, 2, n_features=6, seed=11)
    assert mdp != nsrl.garnet(40, 3, 2, n_features=6, seed=12)
    assert (
        mdp
        is gym.make(
            "Garnet-v0", n_states=40, n_actions=3, branching=2, n_features=6, seed=11
        ).unwrapped.mdp
    )  # one shared instance per argument set
    default = gym.make("Garnet-v0").unwrapped.mdp
    assert (default.n_states, default.n_actions, default.gamma) == (100, 4, 0.99)


def rollout(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    trace = [obs]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        assert not term
        trace += [obs, r, info["state"]]
    return trace


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_seeds_same_trajectories_and_backends_agree(backend):
    actions = np.random.default_rng(0).integers(0, 4, 200)
    base = rollout(GarnetEnv(n_states=50, backend="numba"), 7, actions)
    assert rollout(GarnetEnv(n_states=50, backend=backend), 7, actions) == base
    assert rollout(GarnetEnv(n_states=50, backend=backend), 8, actions) != base


@pytest.mark.parametrize("backend", BACKENDS)
def test_sample_agrees_with_step_and_reward_is_r_of_state_left(backend):
    env = GarnetEnv(n_states=30, n_actions=3, branching=3, backend=backend)
    mdp = env.mdp
    for s in range(30):
        env.reset(seed=s, options={"state": s})
        rng = copy.deepcopy(env.np_random)
        obs, r, *_ = env.step(s % 3)
        s1, r1 = env.sample([s], [s % 3], rng)
        assert (obs, r) == (s1[0], r1[0])
        assert r == mdp.R[s, 0] == mdp.R[s, 2]  # r(s): a Garnet's reward is the state's
        assert mdp.P[s, s % 3, obs] > 0


@pytest.mark.parametrize("mode", MODES)
def test_observations_encode_the_state(mode):
    env = GarnetEnv(n_states=30, observation=mode)
    for s in (0, 17, 29):
        obs, info = env.reset(seed=0, options={"state": s})
        assert info["state"] == s and env.observation_space.contains(obs)
        np.testing.assert_array_equal(env.observe([s])[0], obs)
        if mode == "onehot":
            assert obs.sum() == 1 and obs[s] == 1
        elif mode == "features":
            np.testing.assert_array_equal(obs, env.mdp.features[s].astype(np.float32))
        else:
            assert obs == s


def test_gym_make_truncates_a_continuing_task():
    env = gym.make("Garnet-v0", n_states=20, max_episode_steps=5)
    env.reset(seed=0)
    flags = [env.step(0)[2:4] for _ in range(5)]
    assert flags == [(False, False)] * 4 + [(False, True)]


def test_start_state_drawn_from_start_distribution():
    mdp = nsrl.FiniteMDP.from_gymnasium(gym.make("CliffWalking-v1"))
    env = FiniteMDPEnv(mdp)
    assert {env.reset(seed=k)[0] for k in range(20)} == {36}  # the start cell, always


def test_finite_mdp_from_a_saved_path_has_a_serialisable_spec(tmp_path):
    mdp = nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.9)
    path = str(tmp_path / "frozenlake.npz")
    mdp.save(path)
    env = gym.make("FiniteMDP-v0", mdp=path, observation="onehot")
    assert env.unwrapped.mdp == mdp
    spec = gym.envs.registration.EnvSpec.from_json(env.spec.to_json())  # minari stores this
    assert spec.kwargs == {"mdp": path, "observation": "onehot"}
    again = gym.make(spec)
    assert again.unwrapped.mdp == mdp and again.spec.max_episode_steps == 1000
    # Same seed, same trajectory as the env built from the object.
    by_object = gym.make("FiniteMDP-v0", mdp=mdp, observation="onehot")
    for e in (again, by_object):
        e.reset(seed=4)
    for a in np.random.default_rng(0).integers(0, 4, 50):
        np.testing.assert_array_equal(again.step(a)[0], by_object.step(a)[0])
    envs = gym.make_vec("FiniteMDP-v0", num_envs=3, mdp=path)
    assert envs.unwrapped.mdp == mdp and envs.spec.kwargs["mdp"] == path
    with pytest.raises(TypeError, match="not JSON serializable"):  # why the path form exists
        by_object.spec.to_json()
    with pytest.raises(TypeError, match="or the path .* got dict"):
        gym.make("FiniteMDP-v0", mdp={"P": 1})
    with pytest.raises(FileNotFoundError, match="no MDP file at"):
        gym.make("FiniteMDP-v0", mdp=str(tmp_path / "missing.npz"))


def test_bad_arguments_say_what_was_expected():
    with pytest.raises(ValueError, match=r"observation should be one of .*'pixels'"):
        GarnetEnv(observation="pixels")
    frozen = nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"))
    with pytest.raises(ValueError, match="mdp.features is None"):
        FiniteMDPEnv(frozen, observation="features")
    with pytest.raises(TypeError, match="should be an nsrl.FiniteMDP"):
        FiniteMDPEnv(np.eye(3))
    env = GarnetEnv(n_states=10)
    with pytest.raises(ValueError, match=r"should be in \[0, 10\), got 10"):
        env.reset(options={"state": 10})
    with pytest.raises(TypeError, match=r'options\["state"\] should be an int'):
        env.reset(options={"state": [1, 2]})
    with pytest.raises(ValueError, match='single key "state"'):
        env.reset(options={"start": 1})
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action should be an int in \[0, 4\)"):
        env.step(np.array([0, 1]))
    with pytest.raises(ValueError, match=r"action should be in \[0, 4\), got 4"):
        env.step(4)
