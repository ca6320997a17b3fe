"""The readings added for issue 24: refused where they cannot apply, invisible at default."""

import numpy as np
import pytest

import nsrl
from nsrl.experiments.sweep import Sweep
from nsrl.greedy.model_based import projection_features


@pytest.mark.parametrize("field, value", [("value_estimate", "estimated"),
                                          ("feature_law", "gaussian")])
def test_a_projected_reading_is_refused_with_a_sample_based_operator(field, value):
    with pytest.raises(ValueError, match=rf"'{field}'.*lstdq operator has no such option "
                                         r"\(operators that take it: projected\)"):
        Sweep(operator="lstdq", **{field: value})


def test_the_default_feature_law_leaves_the_fingerprint_and_phi_unchanged():
    assert Sweep(feature_law="uniform").fingerprint() == Sweep().fingerprint()
    assert Sweep(feature_law="binary").fingerprint() != Sweep().fingerprint()
    phi = np.random.default_rng(0).uniform(size=(40, 4))
    assert projection_features(phi, False) is phi
    assert np.array_equal(projection_features(phi, False, "binary"), phi >= 0.5)
    gauss = projection_features(phi, False, "gaussian")
    assert np.all(np.argsort(gauss, axis=0) == np.argsort(phi, axis=0))  # a monotone map


def test_centred_features_with_a_constant_span_the_same_space():
    """2 Phi - 1 and Phi differ by a multiple of the constant column: same projection."""
    mdp = nsrl.garnet(30, 3, 2, seed=1)
    a, b = (nsrl.ProjectedGreedy(mdp, constant_feature=True, feature_law=law)
            for law in ("uniform", "centred"))
    v = np.random.default_rng(2).uniform(50, 80, size=30)
    rho = np.full(30, 1 / 30)
    np.testing.assert_allclose(a.project(v, rho), b.project(v, rho), rtol=1e-9)


def test_feature_fraction_sets_p_per_instance_and_leaves_the_instance_where_it_was():
    """p = round(f n_S); the Garnet draws Phi last, so transitions, rewards and the exact
    losses do not move with p (the reference losses of the study stay valid)."""
    from nsrl.experiments.shards import Shard

    assert Sweep(feature_fraction=0.1).features_of(200) == 20 == 200 // 10
    assert Sweep(feature_fraction=1 / 3).features_of(50) == 17
    assert Sweep(feature_fraction=0.001).features_of(50) == 1
    shard = Shard(50, 2, 2, 3)
    paper, half = ((Sweep(feature_fraction=f)).model(shard) for f in (None, 0.5))
    assert (paper.n_features, half.n_features) == (5, 25)
    for x, y in zip(paper.successors, half.successors, strict=True):
        assert np.array_equal(x, y)
    assert np.array_equal(paper.R, half.R)
    assert (Sweep(feature_fraction=0.1)).model(shard) == paper
    assert Sweep(feature_fraction=None).fingerprint() == Sweep().fingerprint()
    assert Sweep(feature_fraction=0.5).fingerprint() != Sweep().fingerprint()


@pytest.mark.parametrize("fields, match", [
    ({"feature_fraction": 0.5, "n_features": 10}, r"excludes n_features .*set one of them"),
    ({"feature_fraction": 0.5, "domain": "gridworld", "n_actions": (4,), "branching": (4,),
      "n_states": (100,)}, r"garnet domain only .*'gridworld'"),
    ({"feature_fraction": 0.0}, r"feature_fraction"),
    ({"feature_fraction": 1.5}, r"feature_fraction"),
])
def test_a_bad_feature_fraction_is_refused_naming_the_fix(fields, match):
    with pytest.raises(ValueError, match=match):
        Sweep(**fields)
