"""The O(S A b) model: successor lists, both Garnet draws, lazy features, model files.

Each code path that the 10^6-state benchmark takes runs here at a small size.
"""

import importlib
import json

import numpy as np
import pytest
import scipy.sparse as sp

import nsrl
from nsrl.model import files
from nsrl.model.mdp import FiniteMDP

garnet_module = importlib.import_module("nsrl.model.garnet")


def _dense_garnet_of_before(S, A, b, p, seed):
    """The Garnet draw of earlier versions, with its dense sort keys (the reference)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    keys = rng.random((S, A, S))
    succ = np.argsort(keys, axis=2, kind="stable")[:, :, :b]
    cuts = np.sort(rng.random((S, A, b - 1)), axis=2)
    edges = np.concatenate([np.zeros((S, A, 1)), cuts, np.ones((S, A, 1))], axis=2)
    P = np.zeros((S, A, S))
    np.put_along_axis(P, succ, np.diff(edges, axis=2), axis=2)
    return P, rng.random(S), rng.random((S, p))


@pytest.mark.parametrize(("S", "A", "b"), [(50, 2, 1), (100, 5, 2), (200, 10, 10), (9, 3, 9)])
def test_classic_draw_is_the_instance_of_before_bit_for_bit(S, A, b, monkeypatch):
    monkeypatch.setattr(garnet_module, "_KEY_BLOCK", 3 * S + 1)  # many blocks of keys
    for seed in (0, 1):
        P, r, phi = _dense_garnet_of_before(S, A, b, max(1, S // 10), seed)
        mdp = nsrl.garnet(S, A, b, seed=seed)
        assert np.array_equal(mdp.P, P) and np.array_equal(mdp.R[:, 0], r)
        assert np.array_equal(mdp.features, phi)


@pytest.mark.parametrize(("S", "b"), [(400, 2), (400, 10), (30, 10), (5, 5)])
def test_scalable_draw_is_a_garnet(S, b):
    mdp = nsrl.garnet(S, 3, b, seed=4, draw="scalable")
    nxt, probs = mdp.successors
    assert nxt.shape == (S, 3, b) and (probs > 0).all()
    assert (np.diff(nxt, axis=2) > 0).all()  # b distinct successors, by state
    np.testing.assert_allclose(probs.sum(axis=2), 1.0, atol=1e-12)
    assert mdp == nsrl.garnet(S, 3, b, seed=4, draw="scalable")
    assert mdp != nsrl.garnet(S, 3, b, seed=5, draw="scalable")


def test_scalable_draw_is_uniform_over_successors():
    mdp = nsrl.garnet(20, 500, 3, seed=0, draw="scalable")
    counts = np.bincount(mdp.successors[0].ravel(), minlength=20)
    expected = 20 * 500 * 3 / 20
    assert abs(counts - expected).max() < 5 * np.sqrt(expected)


def test_auto_draw_switches_above_the_classic_limit(monkeypatch):
    monkeypatch.setattr(garnet_module, "CLASSIC_MAX_KEYS", 40 * 40 * 2 - 1)
    assert nsrl.garnet(40, 2, 2, seed=0) == nsrl.garnet(40, 2, 2, seed=0, draw="scalable")
    assert nsrl.garnet(39, 2, 2, seed=0) == nsrl.garnet(39, 2, 2, seed=0, draw="classic")
    with pytest.raises(ValueError, match="draw should be one of"):
        nsrl.garnet(10, 2, 2, seed=0, draw="fast")


def test_default_features_are_capped_and_large_ones_drawn_lazily(tmp_path, monkeypatch):
    assert garnet_module.default_features(50) == 5
    assert garnet_module.default_features(10**6) == 1000
    monkeypatch.setattr(garnet_module, "_EAGER_FEATURE_BYTES", 0)
    monkeypatch.setattr(files, "_EAGER_FEATURE_BYTES", 0)
    lazy = nsrl.garnet(60, 2, 2, seed=3)
    assert lazy._features is None and lazy.n_features == 6
    path = lazy.save(tmp_path / "g")  # saved as its recipe, not its numbers
    assert path.name == "g.npz"
    with np.load(path) as z:
        assert "features" not in z.files and json.loads(str(z["features_draw"]))["shape"] == [60, 6]
    back = FiniteMDP.load(tmp_path / "g")
    assert np.array_equal(back.features, _dense_garnet_of_before(60, 2, 2, 6, 3)[2])
    assert back == lazy and np.array_equal(lazy.features, back.features)
    rng, twin = np.random.default_rng(8), np.random.default_rng(8)
    lazy_from_rng = nsrl.garnet(60, 2, 2, seed=rng)
    monkeypatch.setattr(garnet_module, "_EAGER_FEATURE_BYTES", 10**9)
    eager = nsrl.garnet(60, 2, 2, seed=twin)
    assert lazy_from_rng._features is None and lazy_from_rng == eager
    assert rng.random() == twin.random()  # the Generator ends where the eager draw left it


def test_from_successors_and_from_sparse_give_the_dense_model():
    mdp = nsrl.garnet(30, 4, 3, seed=2)
    P = mdp.P
    csr = sp.csr_matrix(P.reshape(30 * 4, 30))
    per_action = [sp.csr_matrix(P[:, a, :]) for a in range(4)]
    for other in (FiniteMDP.from_sparse(csr, mdp.R, 0.99, features=mdp.features),
                  FiniteMDP.from_sparse(per_action, mdp.R, 0.99, features=mdp.features),
                  FiniteMDP.from_successors(*mdp.successors, mdp.R, 0.99, mdp.features)):
        assert other == mdp
    assert (mdp.P_csr != csr).nnz == 0


def test_successors_are_canonicalised():
    # unsorted, a repeated state, a zero entry: sorted, merged, dropped
    nxt = np.array([[[2, 0, 2, 1]], [[0, 0, 0, 0]], [[1, 1, 1, 1]]])
    probs = np.array([[[0.25, 0.5, 0.25, 0.0]], [[1.0, 0, 0, 0]], [[0.5, 0.5, 0, 0]]])
    mdp = FiniteMDP.from_successors(nxt, probs, np.zeros(3), 0.9)
    assert mdp.branching == 2
    assert mdp.successors[0][0, 0].tolist() == [0, 2]
    assert mdp.successors[1][0, 0].tolist() == [0.5, 0.5]
    assert mdp.successors[1][2, 0].tolist() == [1.0, 0.0]


@pytest.mark.parametrize(("change", "message"), [
    (lambda n, p: (n + 5, p), r"next_states\[0, 0, 0\] = 5 is not a state"),
    (lambda n, p: (n, np.where(p == 0.5, -0.5, p)), r"probs\[0, 0, 0\] = -0.5"),
    (lambda n, p: (n, np.where(p == 0.5, np.nan, p)), r"probs\[0, 0, 0\] = nan"),
    (lambda n, p: (n, p * 0.9), r"\(s=0, a=0\) have probabilities summing to 0.9"),
])
def test_bad_successor_lists_are_refused_naming_the_row(change, message):
    nxt = np.array([[[0, 1]], [[1, 2]], [[0, 2]]])
    probs = np.full((3, 1, 2), 0.5)
    with pytest.raises(ValueError, match=message):
        FiniteMDP.from_successors(*change(nxt, probs), np.zeros(3), 0.9)


def test_bad_sparse_rows_are_refused_naming_the_row():
    P = sp.csr_matrix(np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0], [0.3, 0.3]]))
    with pytest.raises(ValueError, match=r"\(s=1, a=1\) of P sums to 0.6"):
        FiniteMDP.from_sparse(P, np.zeros(2), 0.9)
    P[0, 0] = -0.5
    with pytest.raises(ValueError, match=r"-0.5 in the row of \(s=0, a=0\)"):
        FiniteMDP.from_sparse(P, np.zeros(2), 0.9)
    with pytest.raises(ValueError, match="n_states \\* n_actions, n_states"):
        FiniteMDP.from_sparse(sp.csr_matrix(np.ones((3, 2))), np.zeros(2), 0.9)


def test_a_dense_view_too_large_is_refused_naming_the_sparse_constructors(monkeypatch):
    import nsrl.model.memory as memory

    mdp = nsrl.garnet(400, 2, 2, seed=0)
    monkeypatch.setattr(memory, "available_memory", lambda: 10**6)  # fits b = 2, not S
    with pytest.raises(ValueError, match="FiniteMDP.from_successors"):
        _ = mdp.P
    with pytest.raises(ValueError, match="from_sparse"):
        FiniteMDP(np.zeros((400, 2, 400)), np.zeros(400), 0.9)


def test_model_files_are_written_atomically_and_checked_before_reading(tmp_path, monkeypatch):
    mdp = nsrl.garnet(20, 2, 2, seed=0)
    path = tmp_path / "g.npz"
    path.write_bytes(b"the old file")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez_compressed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        mdp.save(path)
    assert path.read_bytes() == b"the old file" and sorted(tmp_path.iterdir()) == [path]
    monkeypatch.undo()
    # declared shapes far beyond the file's size are refused before reading
    header = {"descr": "<f8", "fortran_order": False, "shape": (2000, 1000, 1000)}
    bad = tmp_path / "huge.npz"
    import zipfile

    with zipfile.ZipFile(bad, "w") as z:
        for key in ("R", "gamma", "next_states", "probs"):
            with z.open(f"{key}.npy", "w") as f:
                np.lib.format.write_array_header_2_0(f, header)
    with pytest.raises(ValueError, match="declare"):
        FiniteMDP.load(bad)


def test_files_of_earlier_versions_load(tmp_path):
    mdp = nsrl.garnet(15, 2, 2, seed=1)
    path = tmp_path / "old.npz"
    np.savez_compressed(path, P=mdp.P, R=mdp.R, gamma=np.float64(0.99), start=mdp.start,
                        features=mdp.features)
    assert FiniteMDP.load(path) == mdp
    np.savez_compressed(path, P=mdp.P, R=mdp.R, gamma=np.float64(0.99), features=np.ones(15))
    with pytest.raises(ValueError, match="features should be a 2-d array"):
        FiniteMDP.load(path)


def test_lstdq_on_sparse_one_hot_features_equals_the_dense_path(monkeypatch):
    """The path LSTD-Q takes at 10^6 states (sparse identity, operator solve), at 120."""
    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy import LSTDQ, features, lstd_system

    mdp = nsrl.garnet(120, 3, 2, seed=0)
    pi = nsrl.Deterministic(np.random.default_rng(1).integers(0, 3, 120))
    targets = {"stationary": pi, "loop": nsrl.NonStationary([pi, nsrl.Constant(1)], loop=True)}
    results = []
    for large in (False, True):
        if large:
            monkeypatch.setattr(features, "DENSE_ONE_HOT_MAX", 0)
            monkeypatch.setattr(lstd_system, "DENSE_MAX_STATES", 0)
        op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=5000, features="onehot")
        assert sp.issparse(op.features.table) == large
        rng = np.random.default_rng(2)
        results.append({k: op.greedy(t, nsrl.Nu(), rng).policy.q for k, t in targets.items()})
    for k in targets:
        np.testing.assert_allclose(results[0][k], results[1][k], atol=1e-8)
