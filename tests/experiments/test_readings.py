"""The readings added for issue 24: refused where they cannot apply, invisible at default."""

import numpy as np
import pytest

import nsrl
from nsrl.experiments.presets import Sweep
from nsrl.greedy.model_based import projection_features


@pytest.mark.parametrize("field, value", [("line_search_scores", "estimated"),
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
