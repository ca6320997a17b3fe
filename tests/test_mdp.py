import numpy as np
import pytest

import nsrl
from nsrl import FiniteMDP


def _valid():
    P = np.zeros((3, 2, 3))
    P[:, 0, 0] = 1.0
    P[:, 1, :] = 1.0 / 3
    return P, np.array([0.0, 0.5, 1.0])


def test_state_reward_vector_broadcasts_to_columns():
    P, r = _valid()
    mdp = FiniteMDP(P, r, 0.9)
    assert mdp.R.shape == (3, 2) and mdp.state_reward
    np.testing.assert_array_equal(mdp.terminal_value, r)


def test_action_reward_has_zero_terminal_value():
    P, _ = _valid()
    mdp = FiniteMDP(P, np.arange(6.0).reshape(3, 2), 0.9)
    assert not mdp.state_reward
    np.testing.assert_array_equal(mdp.terminal_value, 0.0)


def test_arrays_are_read_only_copies():
    P, r = _valid()
    mdp = FiniteMDP(P, r, 0.9)
    P[0, 0, 0] = 0.5
    assert mdp.P[0, 0, 0] == 1.0
    with pytest.raises(ValueError):
        mdp.P[0, 0, 0] = 0.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda P, r: (P[:, :, :2], r), "shape"),
        (lambda P, r: (P[0], r), "3-d"),
        (lambda P, r: (np.where(P == 1.0, np.nan, P), r), "non-finite"),
        (lambda P, r: (P, np.array([0.0, np.inf, 1.0])), "non-finite"),
        (lambda P, r: (P, np.zeros(4)), "R should have shape"),
    ],
)
def test_bad_shapes_and_values_are_refused(mutate, message):
    P, r = mutate(*_valid())
    with pytest.raises(ValueError, match=message):
        FiniteMDP(P, r, 0.9)


def test_negative_entry_is_named():
    P, r = _valid()
    P[1, 1, 0], P[1, 1, 1] = -0.1, 1.0 / 3 + 0.1
    with pytest.raises(ValueError, match=r"negative entry P\[1, 1, 0\]"):
        FiniteMDP(P, r, 0.9)


def test_first_bad_row_and_its_sum_are_named():
    P, r = _valid()
    P[2, 1, 2] = 0.5
    with pytest.raises(ValueError, match=r"P\[2, 1, :\] sums to 1.1666"):
        FiniteMDP(P, r, 0.9)


@pytest.mark.parametrize("gamma", [0.0, 1.0, -0.5, 1.5])
def test_gamma_out_of_range(gamma):
    with pytest.raises(ValueError, match="gamma should be in"):
        FiniteMDP(*_valid(), gamma)


def test_gamma_wrong_type():
    with pytest.raises(TypeError, match="gamma"):
        FiniteMDP(*_valid(), "0.9")


def test_features_and_start_are_checked():
    with pytest.raises(ValueError, match="features should have 3 rows"):
        FiniteMDP(*_valid(), 0.9, features=np.ones((2, 1)))
    with pytest.raises(ValueError, match="start should sum to 1"):
        FiniteMDP(*_valid(), 0.9, start=[0.5, 0.5, 0.5])


def test_save_load_round_trip_exact(tmp_path):
    mdp = nsrl.garnet(20, 3, 4, seed=3, gamma=0.95)
    path = tmp_path / "g.npz"
    mdp.save(path)
    back = FiniteMDP.load(path)
    assert back == mdp and back.gamma == 0.95
    with np.load(path, allow_pickle=False) as z:
        assert {"next_states", "probs", "R", "gamma", "features"} <= set(z.files)


def test_save_load_without_features(tmp_path):
    mdp = FiniteMDP(*_valid(), 0.9)
    mdp.save(tmp_path / "m.npz")
    assert FiniteMDP.load(tmp_path / "m.npz").features is None


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no MDP file"):
        FiniteMDP.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot read"):
        FiniteMDP.load(bad)
    np.savez(tmp_path / "other.npz", x=np.zeros(2))
    with pytest.raises(ValueError, match="keys"):
        FiniteMDP.load(tmp_path / "other.npz")


def test_sparse_successors_reproduce_dense_expectation(small_garnet):
    nxt, probs = small_garnet.successors
    v = np.random.default_rng(0).random(small_garnet.n_states)
    np.testing.assert_allclose((probs * v[nxt]).sum(-1), small_garnet.P @ v, atol=1e-14)
