"""Stable-Baselines3 integration: exact losses of SB3 models, nsrl policies in SB3, the VecEnv."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import nsrl

torch = pytest.importorskip("torch")
sb3 = pytest.importorskip("stable_baselines3")

from stable_baselines3 import A2C, DQN, PPO  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.utils import check_for_correct_spaces  # noqa: E402
from stable_baselines3.common.vec_env import VecCheckNan, VecMonitor  # noqa: E402

from nsrl.sb3 import SB3VecEnv, from_sb3, state_observations, to_sb3  # noqa: E402

torch.set_num_threads(1)
MODES = ("index", "onehot", "features")


@pytest.fixture(scope="module")
def mdp():
    return nsrl.garnet(20, 2, 2, gamma=0.9, seed=0)


def _ppo(mdp, seed=0, observation="index"):
    venv = SB3VecEnv(mdp, 16, observation, max_episode_steps=100)
    return PPO("MlpPolicy", venv, n_steps=32, batch_size=128, n_epochs=4, gamma=mdp.gamma,
               learning_rate=3e-3, device="cpu", seed=seed)


def _evaluate(model, venv, n):
    """Per-episode undiscounted returns of ``n`` episodes (Monitor warning silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        returns, _ = evaluate_policy(model, venv, n_eval_episodes=n, deterministic=False,
                                     return_episode_rewards=True)
    returns = np.asarray(returns)
    return returns.mean(), returns.std() / np.sqrt(n)


def test_import_nsrl_does_not_import_torch():
    code = "import sys, nsrl; assert 'torch' not in sys.modules and " \
           "'stable_baselines3' not in sys.modules; print(nsrl.from_sb3.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "nsrl.sb3"


def test_short_ppo_run_beats_the_uniform_policy(mdp):
    uniform = nsrl.Stochastic(np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions))
    model = _ppo(mdp).learn(4096)
    assert nsrl.loss(mdp, from_sb3(model, mdp)) < nsrl.loss(mdp, uniform)


def test_same_seed_same_sb3_policy(mdp):
    a = from_sb3(_ppo(mdp, seed=3).learn(1024), mdp).table(mdp)
    b = from_sb3(_ppo(mdp, seed=3).learn(1024), mdp).table(mdp)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("observation", MODES)
def test_from_sb3_of_deterministic_models_equals_their_predictions(mdp, observation):
    obs = state_observations(mdp, observation)
    venv = SB3VecEnv(mdp, 4, observation)
    for model in (PPO("MlpPolicy", venv, device="cpu", seed=1),
                  A2C("MlpPolicy", venv, device="cpu", seed=1),
                  DQN("MlpPolicy", venv, device="cpu", seed=1, learning_starts=0)):
        predicted, _ = model.predict(obs, deterministic=True)
        pi = from_sb3(model, mdp, deterministic=True)
        np.testing.assert_array_equal(pi.table(mdp), np.eye(mdp.n_actions)[predicted])
        assert from_sb3(model, mdp, observation).stochastic == (not isinstance(model, DQN))


def test_dqn_exploration_mixture(mdp):
    model = DQN("MlpPolicy", SB3VecEnv(mdp, 2), device="cpu", seed=0)
    greedy = from_sb3(model, mdp).action_table(mdp)
    table = from_sb3(model, mdp, exploration_rate=0.3).table(mdp)
    np.testing.assert_allclose(table, 0.7 * np.eye(2)[greedy] + 0.15)
    current = from_sb3(model, mdp, exploration_rate="current").table(mdp)
    np.testing.assert_allclose(current.max(axis=1), 1 - model.exploration_rate / 2)
    with pytest.raises(ValueError, match="DQN models only"):
        from_sb3(_ppo(mdp), mdp, exploration_rate=0.1)


def test_from_sb3_refuses_a_mismatched_model(mdp):
    other = nsrl.garnet(20, 3, 2, seed=1)
    with pytest.raises(ValueError, match="action space"):
        from_sb3(_ppo(mdp), other)
    with pytest.raises(TypeError, match="Stable-Baselines3"):
        from_sb3(object(), mdp)


def test_exact_loss_of_a_stochastic_ppo_matches_its_monte_carlo_value(mdp):
    # Geometric termination makes an episode's undiscounted return an unbiased sample of
    # v_pi(s_0), s_0 ~ nu: evaluate_policy's mean then estimates nu v_pi.
    model = _ppo(mdp, seed=2).learn(1024)
    exact = mdp.start @ nsrl.evaluate(mdp, from_sb3(model, mdp))
    model.set_random_seed(5)
    mean, se = _evaluate(model, SB3VecEnv(mdp, 64, geometric=True, seed=5), 20000)
    assert abs(mean - exact) < 4 * se


def test_evaluate_policy_with_a_periodic_policy_returns_its_exact_value():
    # Start in state 0 so that the phase matters: the loop started at another phase has a
    # value more than 18 standard errors away (checked for this instance), as would an
    # estimate whose phase was not reset by episode_start.
    g = nsrl.garnet(20, 3, 2, gamma=0.9, seed=1)
    mdp = nsrl.FiniteMDP(g.P, g.R, 0.9, start=np.eye(20)[0])
    rng = np.random.default_rng(1)
    pis = [nsrl.Deterministic(rng.integers(0, 3, 20)) for _ in range(3)]
    loop = nsrl.NonStationary(pis, loop=True)
    venv = SB3VecEnv(mdp, 64, geometric=True, seed=1)
    mean, se = _evaluate(to_sb3(loop), venv, 40000)
    assert abs(mean - mdp.start @ nsrl.evaluate(mdp, loop)) < 4 * se
    for shift in (1, 2):
        other = nsrl.NonStationary(pis[shift:] + pis[:shift], loop=True)
        assert abs(mean - mdp.start @ nsrl.evaluate(mdp, other)) > 4 * se


def test_predict_carries_the_phase_and_restarts_it():
    a, b, c = (nsrl.Deterministic([k, k]) for k in range(3))
    model = to_sb3(nsrl.NonStationary([a, b, c], loop=True))
    obs = np.array([0, 1])
    actions, state = model.predict(obs, None, np.array([True, True]))
    assert actions.tolist() == [0, 0]
    actions, state = model.predict(obs, state, np.array([False, True]))
    assert actions.tolist() == [1, 0] and state[0].tolist() == [2, 1]
    actions, state = model.predict(obs, state, np.array([False, False]))
    assert actions.tolist() == [2, 1]
    single, _ = model.predict(np.int64(1), (np.array([4]),), np.array([False]))
    assert int(single) == 1


@pytest.mark.parametrize("observation", ["onehot", "features"])
def test_predict_decodes_box_observations(mdp, observation):
    pi = nsrl.Deterministic(np.random.default_rng(0).integers(0, 2, mdp.n_states))
    model = to_sb3(pi, mdp, observation)
    states = np.arange(mdp.n_states)[::-1]
    venv = SB3VecEnv(mdp, 1, observation)
    actions, _ = model.predict(venv.observe(states))
    np.testing.assert_array_equal(actions, pi.actions[states])


def test_vecenv_passes_sb3_checks_and_trains(mdp):
    for observation in MODES:
        venv = VecMonitor(VecCheckNan(SB3VecEnv(mdp, 8, observation, max_episode_steps=7),
                                      raise_exception=True))
        check_for_correct_spaces(venv, venv.observation_space, venv.action_space)
        obs = venv.reset()
        assert venv.observation_space.contains(obs[0])
        for t in range(1, 15):
            obs, rewards, dones, infos = venv.step(np.full(8, t % 2))
            assert dones.all() == (t % 7 == 0) and rewards.dtype == np.float32
        assert all(i["TimeLimit.truncated"] and i["episode"]["l"] == 7 for i in infos)
        assert all(venv.observation_space.contains(i["terminal_observation"]) for i in infos)
        A2C("MlpPolicy", venv, n_steps=4, device="cpu", seed=0).learn(64)
        DQN("MlpPolicy", venv, learning_starts=16, device="cpu", seed=0).learn(64)


def test_vecenv_autoresets_in_the_same_step_and_follows_P():
    # From state 0 every step returns to state 0 with probability P[0, a, 0]; episodes of
    # length one show the same-step reset: the returned observation is a fresh start state.
    g = nsrl.garnet(5, 2, 3, gamma=0.9, seed=4)
    mdp = nsrl.FiniteMDP(g.P, g.R, 0.9, start=np.eye(5)[2])
    venv = SB3VecEnv(mdp, 4096, max_episode_steps=1, seed=0)
    assert (venv.reset() == 2).all()
    for a in (0, 1):
        obs, rewards, dones, infos = venv.step(np.full(4096, a))
        assert dones.all() and (obs == 2).all() and (rewards == np.float32(mdp.R[2, a])).all()
        freq = np.bincount([i["terminal_observation"] for i in infos], minlength=5) / 4096
        np.testing.assert_allclose(freq, mdp.P[2, a], atol=0.03)  # 4 standard errors


def test_vecenv_seeding_and_reset_to_state(mdp):
    def trajectory(seed_call):
        venv = SB3VecEnv(mdp, 3, max_episode_steps=4)
        seed_call(venv)
        return np.stack([venv.reset()] + [venv.step(np.ones(3, int))[0] for _ in range(9)])

    first = trajectory(lambda v: v.seed(7))
    np.testing.assert_array_equal(first, trajectory(lambda v: v.seed(7)))
    assert not np.array_equal(first, trajectory(lambda v: v.seed(8)))
    venv = SB3VecEnv(mdp, 3, seed=0)
    venv.set_options({"state": 11})
    assert venv.reset().tolist() == [11, 11, 11]
    with pytest.raises(ValueError, match="actions"):
        venv.step(np.array([0, 5, 0]))
    with pytest.raises(ValueError, match="observation"):
        SB3VecEnv(mdp, 3, "pixels")


@pytest.mark.parametrize("observation", MODES)
def test_vecenv_follows_the_native_vector_env_step_for_step(observation):
    # Same kernel, same seed, same start draws: identical until the first truncation, where
    # SB3's same-step autoreset and gymnasium's NEXT_STEP autoreset part ways.
    from nsrl.envs import GarnetVectorEnv

    native = GarnetVectorEnv(num_envs=8, n_states=30, n_actions=3, branching=3, seed=2,
                             observation=observation, max_episode_steps=20)
    venv = SB3VecEnv.from_env(native, seed=9)
    assert venv.observation_space == native.single_observation_space
    expected, _ = native.reset(seed=9)
    np.testing.assert_array_equal(venv.reset(), expected)
    actions = np.random.default_rng(0).integers(0, 3, (19, 8))
    for a in actions:
        expected, rewards, *_ = native.step(a)
        obs, sb3_rewards, dones, _ = venv.step(a)
        np.testing.assert_array_equal(obs, expected)
        np.testing.assert_array_equal(sb3_rewards, rewards.astype(np.float32))
        assert not dones.any()
    assert venv.step(actions[0])[2].all()


def test_sb3_learners_return_checkpoints_in_sample_order(mdp):
    from nsrl.sb3.learners import LEARNERS, checkpoints, learn

    assert set(LEARNERS) == {"ppo", "a2c", "dqn"}
    out = LEARNERS["a2c"](mdp, 2400, 0)
    samples = [n for n, _ in out]
    assert samples == sorted(samples) and samples[-1] >= 2400 and len(samples) >= 2
    assert all(np.isfinite(nsrl.loss(mdp, pi)) for _, pi in out)
    dqn = learn("dqn", mdp, 300, 0, max_episode_steps=50)
    assert not dqn[-1][1].stochastic
    assert checkpoints(10**6).tolist()[::11] == [1000, 10**6]
    with pytest.raises(ValueError, match="algo"):
        learn("sac", mdp, 100, 0)


def test_nsrl_compare_includes_the_sb3_learners(tmp_path):
    import pandas as pd

    from nsrl.cli import main

    argv = ["compare", "--garnet", "10,2,2", "--schemes", "api", "--operators", "exact",
            "--sb3", "a2c,dqn", "--run-budget", "1200", "--seeds", "1", "--iterations", "2",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    df = pd.read_csv(tmp_path / "compare.csv")
    assert {"a2c", "dqn"} <= set(df.learner)
    assert (df[df.learner == "a2c"].samples.max() >= 1200) and (df.loss >= -1e-9).all()
