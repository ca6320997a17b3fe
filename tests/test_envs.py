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
    # an in-memory model is written inline (exact floats): a bigger spec, the same env
    assert gym.make(spec.from_json(by_object.spec.to_json())).unwrapped.mdp == mdp
    with pytest.raises(ValueError, match="to_dict returns .* got keys \\['P'\\]"):
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


# --- issue 23: render modes, SB3 by string id, model paths, specs, exports ------------------

def test_sb3_takes_the_env_by_string_id():
    """SB3 makes the env with render_mode="rgb_array" (to record videos): it must work."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    model = sb3.PPO("MlpPolicy", "Garnet-v0", n_steps=16, batch_size=16, n_epochs=1, seed=0)
    assert model.env.render_mode == "rgb_array"
    model.learn(32)
    venv = make_vec_env("Garnet-v0", n_envs=4, env_kwargs={"n_states": 20})
    assert venv.num_envs == 4 and venv.reset().shape == (4,)
    assert venv.get_images()[0].shape[2] == 3


@pytest.mark.parametrize("n_states", [1, 7, 100])
def test_rgb_array_shows_the_current_state_and_passes_the_checker(n_states):
    env = gym.make("Garnet-v0", n_states=n_states, branching=1, render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.reset(seed=0, options={"state": n_states - 1})
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert frame.shape[0] % 2 == 0 and frame.shape[1] % 2 == 0  # video codecs need even sides
    red = np.all(frame == [220, 50, 40], axis=-1)
    rows, cols = np.nonzero(red)
    from nsrl.envs.render import layout

    _, n_cols, cell = layout(n_states)
    assert divmod(n_states - 1, n_cols) == (rows.min() // cell, cols.min() // cell)


def test_ansi_names_the_state_the_action_and_the_reward():
    env = gym.make("Garnet-v0", n_states=10, render_mode="ansi")
    env.reset(seed=0, options={"state": 3})
    assert env.render() == "state 3 of 10\n"
    _, reward, *_ = env.step(1)
    state = env.unwrapped.state
    assert env.render() == f"state {state} of 10  last action 1  reward {reward:.6g}\n"


def test_an_unknown_render_mode_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="render_mode should be None, 'ansi' or 'rgb_array'"):
        GarnetEnv(n_states=5, render_mode="depth")


def test_record_video_records_a_garnet(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(gym.make("Garnet-v0", n_states=16, render_mode="rgb_array",
                               max_episode_steps=8), str(tmp_path))
    env.reset(seed=0)
    for _ in range(8):
        env.step(0)
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def test_finite_mdp_takes_the_name_nsrl_garnet_was_given(tmp_path, monkeypatch):
    """``nsrl garnet --out g`` writes g.npz; ``mdp="g"`` finds it, as numpy's own load does."""
    from nsrl.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["garnet", "--states", "8", "--actions", "2", "--branching", "2", "--mdp-seed", "1",
                 "--out", "g"]) == 0
    env = gym.make("FiniteMDP-v0", mdp="g")
    assert env.unwrapped.mdp == nsrl.garnet(8, 2, 2, seed=1)
    assert env.spec.kwargs["mdp"] == str(tmp_path / "g.npz")


@pytest.mark.parametrize("form", ["path", "pathlib", "object"])
def test_the_spec_is_json_whatever_form_the_model_has(form, tmp_path):
    from gymnasium.envs.registration import EnvSpec

    mdp = nsrl.garnet(9, 3, 2, seed=4)
    mdp.save(tmp_path / "m.npz")
    given = {"path": str(tmp_path / "m.npz"), "pathlib": tmp_path / "m.npz", "object": mdp}
    env = gym.make("FiniteMDP-v0", mdp=given[form], observation="onehot")
    text = env.spec.to_json()
    again = gym.make(EnvSpec.from_json(text))
    assert again.unwrapped.mdp == mdp and again.unwrapped.observation == "onehot"
    vec = gym.make_vec("FiniteMDP-v0", num_envs=2, mdp=given[form])
    assert gym.make_vec(EnvSpec.from_json(vec.spec.to_json())).unwrapped.mdp == mdp


def test_gymnasium_table_and_exports_agree_with_the_model():
    from types import SimpleNamespace

    from nsrl.envs.export import from_dict, to_dict, to_mdptoolbox, to_mushroom

    mdp = nsrl.garnet(12, 3, 4, seed=2)
    # only the sparse successors are read: a model without P is enough
    sparse_only = SimpleNamespace(**{k: getattr(mdp, k) for k in (
        "successors", "R", "gamma", "n_states", "n_actions", "start", "features")})
    table = gym.make("FiniteMDP-v0", mdp=mdp).unwrapped.P
    assert table == nsrl.envs.transition_table(sparse_only)
    for s in range(12):
        for a in range(3):
            row = np.zeros(12)
            for prob, t, reward, done in table[s][a]:
                row[t] += prob
                assert reward == mdp.R[s, a] and done is False
            assert np.array_equal(row, mdp.P[s, a])
    P, R = to_mdptoolbox(sparse_only)
    assert np.array_equal(P, mdp.P.transpose(1, 0, 2)) and np.array_equal(R, mdp.R)
    Ps, _ = to_mdptoolbox(sparse_only, sparse=True)
    assert all(np.array_equal(Ps[a].toarray(), P[a]) for a in range(3))
    p, r = to_mushroom(sparse_only)
    assert np.array_equal(p, mdp.P) and np.array_equal(r[:, :, 5], mdp.R)
    assert from_dict(__import__("json").loads(__import__("json").dumps(to_dict(mdp)))) == mdp
