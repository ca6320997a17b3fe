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


# --- autoreset modes, against gymnasium's SyncVectorEnv of the single envs -------------------


def deterministic_mdp():
    """Branching 1 and a point-mass start: every run is the same, whatever the Generators."""
    n_states, n_actions = 7, 3
    P = np.zeros((n_states, n_actions, n_states))
    for s in range(n_states):
        for a in range(n_actions):
            P[s, a, (2 * s + a + 1) % n_states] = 1.0
    R = np.arange(n_states * n_actions, dtype=float).reshape(n_states, n_actions) / 10
    start = np.eye(n_states)[2]
    return nsrl.FiniteMDP(P, R, 0.9, features=np.eye(n_states)[:, :4] + 0.5, start=start)


def make_pair(mdp, num_envs, mode, **kwargs):
    native = gym.make_vec("FiniteMDP-v0", num_envs, mdp=mdp, autoreset_mode=mode, **kwargs)
    sync = gym.make_vec(
        "FiniteMDP-v0",
        num_envs,
        vectorization_mode="sync",
        mdp=mdp,
        vector_kwargs={"autoreset_mode": mode},
        **kwargs,
    )
    assert type(native) is FiniteMDPVectorEnv and isinstance(sync, gym.vector.SyncVectorEnv)
    return native, sync


def assert_same(a, b, where="output"):
    """Equal values, dtypes, keys and masks, recursively (info dicts, object arrays of obs)."""
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b), (where, sorted(a), sorted(b))
        for key in b:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(b, np.ndarray) and b.dtype == object:
        assert a.dtype == object and a.shape == b.shape, where
        for x, y in zip(a, b, strict=True):
            assert (x is None) == (y is None), where
            if y is not None:
                assert_same(x, y, where)
    else:
        np.testing.assert_array_equal(a, b, err_msg=where)
        assert np.asarray(a).dtype == np.asarray(b).dtype, where


def drive_both(native, sync, n_steps, seed, masked_resets):
    """Step both with the same actions; masked resets at given steps; DISABLED resets too."""
    rng = np.random.default_rng(seed)
    n = native.num_envs
    assert_same(
        native.reset(seed=seed, options={"state": 1}),
        sync.reset(seed=seed, options={"state": 1}),
        "reset",
    )
    disabled = native.autoreset_mode is AutoresetMode.DISABLED
    for t in range(n_steps):
        actions = rng.integers(0, native.mdp.n_actions, n)
        out = native.step(actions)
        assert_same(out, sync.step(actions), f"step {t}")
        mask = out[3].copy() if disabled else np.zeros(n, dtype=bool)
        if t in masked_resets:
            mask |= masked_resets[t]
        if mask.any():  # Sync pops "reset_mask" from options: one dict each
            options = {"reset_mask": mask}
            if t % 2:
                options["state"] = 5
            assert_same(
                native.reset(options=dict(options)),
                sync.reset(options=dict(options)),
                f"masked reset after step {t}",
            )


@pytest.mark.parametrize("observation", ["index", "onehot", "features"])
@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_each_autoreset_mode_matches_sync_vector_env(mode, observation):
    n = 6
    native, sync = make_pair(
        deterministic_mdp(), n, mode, max_episode_steps=4, observation=observation
    )
    assert native.autoreset_mode is mode and native.metadata["autoreset_mode"] is mode
    assert sync.metadata["autoreset_mode"] is mode
    # Masked resets at different steps put the copies out of phase.
    masked = {2: np.arange(n) % 2 == 0, 6: np.arange(n) < 2, 9: np.arange(n) == 5}
    drive_both(native, sync, 25, 0, masked)


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.DISABLED])
def test_one_random_copy_equals_sync_step_for_step(mode):
    # One copy, one Generator seeded alike, the same draws in the same order (transition, then
    # start state on a reset) as SyncVectorEnv's single env. Under NEXT_STEP the native env
    # also draws the ignored transition of the reset step, so only the semantics agree there.
    mdp = nsrl.garnet(20, 3, 4, seed=1)
    native, sync = make_pair(mdp, 1, mode, max_episode_steps=3)
    drive_both(native, sync, 40, 7, {10: np.array([True])})


@pytest.mark.parametrize("mode", list(AutoresetMode))
def test_restarts_are_drawn_from_nu_in_every_mode(mode):
    # Every copy truncated after each step; the restarted states must follow nu.
    rng = np.random.default_rng(0)
    nu = rng.dirichlet(np.ones(6))
    mdp = nsrl.FiniteMDP(rng.dirichlet(np.ones(6), (6, 2)), np.ones((6, 2)), 0.9, start=nu)
    n = 20_000
    envs = FiniteMDPVectorEnv(mdp, n, max_episode_steps=1, autoreset_mode=mode)
    envs.reset(seed=1, options={"state": 0})
    obs, _, _, trunc, info = envs.step(np.zeros(n, dtype=int))
    assert trunc.all()
    if mode is AutoresetMode.SAME_STEP:
        restarted = obs
        np.testing.assert_array_equal(info["_final_obs"], trunc)
        final = np.array(list(info["final_obs"]))
        np.testing.assert_array_equal(final, info["final_info"]["state"])
        freq = np.bincount(final, minlength=6) / n  # where the episodes ended: P[0, 0]
        assert np.all(np.abs(freq - mdp.P[0, 0]) <= 5 * np.sqrt(mdp.P[0, 0] / n) + 1e-12)
    elif mode is AutoresetMode.NEXT_STEP:
        restarted, r, _, trunc, _ = envs.step(np.zeros(n, dtype=int))
        assert not trunc.any() and not r.any()
    else:
        restarted, _ = envs.reset(options={"reset_mask": trunc})
    freq = np.bincount(restarted, minlength=6) / n
    assert np.all(np.abs(freq - nu) <= 5 * np.sqrt(nu * (1 - nu) / n))


def test_record_episode_statistics_sees_full_episodes_in_every_mode():
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        envs = gym.wrappers.vector.RecordEpisodeStatistics(
            gym.make_vec("Garnet-v0", 4, n_states=10, max_episode_steps=5, autoreset_mode=mode)
        )
        envs.reset(seed=0)
        for _ in range(12):
            *_, info = envs.step(np.zeros(4, dtype=int))
        assert list(envs.length_queue) == [5] * 8


def test_autoreset_mode_arguments_and_disabled_misuse():
    assert GarnetVectorEnv(2, autoreset_mode="SameStep").autoreset_mode is AutoresetMode.SAME_STEP
    assert GarnetVectorEnv.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    with pytest.raises(ValueError, match=r"autoreset_mode should be one of .*got 'same'"):
        GarnetVectorEnv(2, autoreset_mode="same")
    envs = GarnetVectorEnv(3, n_states=10, max_episode_steps=1, autoreset_mode="Disabled")
    envs.reset(seed=0)
    envs.step(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match=r"copies \[0, 1, 2\] were truncated .*reset_mask"):
        envs.step(np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match=r"numpy bool array of shape \(3,\), got list"):
        envs.reset(options={"reset_mask": [True, True, True]})
    with pytest.raises(TypeError, match=r"got dtype int64"):
        envs.reset(options={"reset_mask": np.ones(3, dtype=np.int64)})
    with pytest.raises(ValueError, match=r"shape \(3,\), got shape \(2,\)"):
        envs.reset(options={"reset_mask": np.ones(2, dtype=bool)})
    with pytest.raises(ValueError, match="at least one copy"):
        envs.reset(options={"reset_mask": np.zeros(3, dtype=bool)})
    with pytest.raises(ValueError, match='keys "state" and/or "reset_mask"'):
        envs.reset(options={"mask": 1})
    obs, info = envs.reset(options={"reset_mask": np.array([True, False, True]), "state": 7})
    assert obs[[0, 2]].tolist() == [7, 7] and info["_state"].tolist() == [True, False, True]
    with pytest.raises(ValueError, match=r"copies \[1\] were truncated"):
        envs.step(np.zeros(3, dtype=int))
    envs.reset(options={"reset_mask": np.array([False, True, False])})
    assert envs.step(np.zeros(3, dtype=int))[3].all()  # none was left truncated: allowed


def test_step_before_reset_raises_gymnasiums_reset_needed():
    from gymnasium.error import ResetNeeded

    envs = gym.make_vec("Garnet-v0", num_envs=3, n_states=10)
    with pytest.raises(ResetNeeded, match="before calling env.reset"):
        envs.step(np.zeros(3, dtype=int))
    with pytest.raises(ResetNeeded, match="reset\\(\\) first"):
        envs.reset(options={"reset_mask": np.array([True, False, False])})
    envs.reset(seed=0)
    envs.step(np.zeros(3, dtype=int))  # fine once reset


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
def test_the_vector_env_renders_one_frame_per_copy_as_sync_does(mode):
    mdp = nsrl.garnet(9, 2, 2, seed=0)
    native = gym.make_vec("FiniteMDP-v0", num_envs=3, mdp=mdp, render_mode=mode)
    native.reset(seed=0, options={"state": np.array([0, 4, 8])})
    single = gym.make("FiniteMDP-v0", mdp=mdp, render_mode=mode)
    frames = native.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    for frame, state in zip(frames, [0, 4, 8], strict=True):
        single.reset(options={"state": state})
        assert np.array_equal(np.asarray(frame), np.asarray(single.render()))
