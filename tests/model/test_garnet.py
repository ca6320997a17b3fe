import numpy as np
import pytest

import nsrl


@pytest.mark.parametrize(("S", "A", "b"), [(50, 2, 1), (20, 5, 2), (30, 3, 10), (7, 2, 7)])
def test_structure(S, A, b):
    mdp = nsrl.garnet(S, A, b, seed=1)
    assert ((mdp.P > 0).sum(axis=2) == b).all()
    np.testing.assert_allclose(mdp.P.sum(axis=2), 1.0, atol=1e-12)
    assert mdp.state_reward and (0 <= mdp.R).all() and (mdp.R <= 1).all()
    assert mdp.features.shape == (S, max(1, S // 10)) and mdp.gamma == 0.99


def test_same_seed_same_instance_other_seed_other_instance():
    assert nsrl.garnet(40, 3, 2, seed=5) == nsrl.garnet(40, 3, 2, seed=5)
    assert nsrl.garnet(40, 3, 2, seed=5) != nsrl.garnet(40, 3, 2, seed=6)


def test_instance_is_pinned_across_machines():
    # PCG64 streams are platform independent: these numbers must never change.
    mdp = nsrl.garnet(5, 2, 2, seed=0)
    np.testing.assert_allclose(
        mdp.R[:, 0], [0.40455184, 0.19851304, 0.09075305, 0.58033239, 0.29869613], atol=1e-8
    )
    assert np.flatnonzero(mdp.P[0, 0]).tolist() == [2, 3]


def test_features_argument_and_gamma():
    mdp = nsrl.garnet(10, 2, 1, n_features=3, gamma=0.5, seed=0)
    assert mdp.features.shape == (10, 3) and mdp.gamma == 0.5


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((10, 2, 11), ValueError, "branching"),
        ((10, 0, 1), ValueError, "n_actions"),
        ((0, 2, 1), ValueError, "n_states"),
        ((10, 2, 0), ValueError, "branching"),
        ((10.0, 2, 1), TypeError, "n_states should be an int"),
    ],
)
def test_bad_parameters(args, error, match):
    with pytest.raises(error, match=match):
        nsrl.garnet(*args, seed=0)


def test_bad_seed():
    with pytest.raises(TypeError, match="seed"):
        nsrl.garnet(10, 2, 1, seed=-1)
