"""nsrl.model.kernels: the batched transition kernel, its two backends and its sampling law."""

import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import nsrl
from nsrl.model import kernels

BACKENDS = ("numba", "numpy")


def frozen_lake():
    # Rows of different widths: sparse successor lists padded with probability 0.
    return nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.9)


@pytest.mark.parametrize(
    "mdp", [nsrl.garnet(100, 4, 5, seed=0), nsrl.garnet(20, 2, 1, seed=0), frozen_lake()], ids=repr
)
def test_backends_give_identical_numbers_and_consume_the_same_draws(mdp):
    pick = np.random.default_rng(0)
    s = pick.integers(0, mdp.n_states, 5000)
    a = pick.integers(0, mdp.n_actions, 5000)
    out = {}
    for backend in BACKENDS:
        rng = np.random.default_rng(42)
        out[backend] = kernels.sample(mdp, s, a, rng, backend=backend) + (rng.random(),)
    for x, y in zip(out["numba"], out["numpy"], strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empirical_frequencies_match_P(backend):
    mdp = nsrl.garnet(10, 2, 4, seed=3)
    n = 40_000
    s = np.repeat(np.arange(10), 2 * n // 20)
    a = np.tile(np.repeat([0, 1], n // 20), 10)
    s1, r = kernels.sample(mdp, s, a, np.random.default_rng(1), backend=backend)
    np.testing.assert_array_equal(r, mdp.R[s, a])
    counts = np.zeros((10, 2, 10))
    np.add.at(counts, (s, a, s1), 1)
    freq = counts / counts.sum(axis=2, keepdims=True)
    # 5 binomial standard deviations per entry: a false alarm has probability < 1e-4 overall.
    sd = np.sqrt(mdp.P * (1 - mdp.P) / (n // 20))
    assert np.all(np.abs(freq - mdp.P) <= 5 * sd + 1e-12)
    assert np.all(freq[mdp.P == 0] == 0)  # never a transition outside the support


def test_start_states_follow_start_distribution():
    P = np.full((4, 1, 4), 0.25)
    mdp = nsrl.FiniteMDP(P, np.zeros(4), 0.9, start=[0.5, 0.0, 0.2, 0.3])
    s = kernels.start_states(mdp, 50_000, np.random.default_rng(0))
    freq = np.bincount(s, minlength=4) / s.size
    assert freq[1] == 0
    np.testing.assert_allclose(freq, mdp.start, atol=5 * np.sqrt(0.25 / s.size))


def test_same_seed_same_numbers():
    mdp = nsrl.garnet(30, 3, 2, seed=1)
    s, a = np.arange(30), np.zeros(30, dtype=int)
    x = kernels.sample(mdp, s, a, np.random.default_rng(9))
    y = kernels.sample(mdp, s, a, np.random.default_rng(9))
    np.testing.assert_array_equal(x[0], y[0])


@pytest.mark.parametrize(
    ("states", "actions", "error", "match"),
    [
        ([0, 30], [0, 0], ValueError, r"states should be in \[0, 30\), got 30"),
        ([0, 1], [0, 3], ValueError, r"actions should be in \[0, 3\)"),
        ([0, 1], [0], ValueError, r"shape \(2,\)"),
        ([0.0, 1.0], [0, 0], TypeError, "integers"),
        ([[0, 1]], [0, 0], ValueError, "1-d array"),
    ],
)
def test_bad_inputs_say_what_was_expected(states, actions, error, match):
    mdp = nsrl.garnet(30, 3, 2, seed=1)
    with pytest.raises(error, match=match):
        kernels.sample(mdp, states, actions, np.random.default_rng(0))


def test_bad_backend_and_rng():
    mdp = nsrl.garnet(5, 2, 2, seed=1)
    with pytest.raises(ValueError, match="backend should be one of"):
        kernels.sample(mdp, [0], [0], np.random.default_rng(0), backend="cuda")
    with pytest.raises(TypeError, match="numpy Generator"):
        kernels.sample(mdp, [0], [0], 0)


def test_env_var_forces_numpy_fallback_with_identical_trajectories():
    code = (
        "import numpy as np, nsrl\n"
        "from nsrl.model import kernels\n"
        "from nsrl.envs import GarnetVectorEnv\n"
        "e = GarnetVectorEnv(64, n_states=50)\n"
        "e.reset(seed=3)\n"
        "a = np.random.default_rng(0).integers(0, 4, (20, 64))\n"
        "print(kernels.DEFAULT_BACKEND, sum(int(e.step(x)[0].sum()) for x in a))\n"
    )
    out = {}
    for flag in ("1", "0"):
        env = dict(os.environ, NSRL_NO_NUMBA=flag)
        res = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        out[flag] = res.stdout.split()
    assert out["1"][0] == "numpy" and out["0"][0] == "numba"
    assert out["1"][1] == out["0"][1]


@pytest.mark.parametrize("max_steps", [None, 1, 3])
def test_clocked_step_is_the_plain_step_plus_the_clocks(max_steps):
    # The vector env's fused step: same successors and draws as sample(), clocks on top.
    mdp = nsrl.garnet(50, 3, 3, seed=1)
    pick = np.random.default_rng(0)
    s = pick.integers(0, 50, 300)
    a = pick.integers(0, 3, 300)
    clocks0 = pick.integers(0, 4, 300)
    plain = kernels.sample(mdp, s, a, np.random.default_rng(7))
    for backend in BACKENDS:
        elapsed = clocks0.copy()
        nxt, rew, trunc, count = kernels.step_clocked(
            mdp, s, a, np.random.default_rng(7), elapsed, max_steps, backend=backend
        )
        np.testing.assert_array_equal(nxt, plain[0])
        np.testing.assert_array_equal(rew, plain[1])
        np.testing.assert_array_equal(elapsed, clocks0 + 1)
        want = np.zeros(300, bool) if max_steps is None else clocks0 + 1 >= max_steps
        np.testing.assert_array_equal(trunc, want)
        assert count == int(want.sum())


@pytest.mark.skipif(not kernels.HAVE_NUMBA, reason="packed records belong to the numba backend")
@pytest.mark.parametrize(("width", "length"), [(1, 2), (2, 4), (3, 8), (4, 8), (5, 10), (9, 18)])
def test_packed_records_start_on_a_cache_line_and_short_ones_never_straddle_one(width, length):
    mdp = nsrl.garnet(30, 2, width, seed=0)
    packed = kernels._packed(mdp)
    rec = packed.records
    assert rec.shape == (30 * 2, length)
    assert rec.ctypes.data % 64 == 0 and np.shares_memory(rec, packed.flat)
    assert 64 % (8 * length) == 0 or width > 4
    nxt, _ = mdp.successors
    np.testing.assert_array_equal(rec[:, width - 1 : 2 * width - 1], nxt.reshape(-1, width))
    np.testing.assert_array_equal(rec[:, 2 * width - 1], mdp.R.ravel())
