"""Feature maps of coordinates: tile coding, RBF grid, random Fourier features; every consumer."""

import gymnasium as gym
import numpy as np
import pytest
from sklearn.base import clone

import nsrl
from nsrl.greedy.feature_maps import (
    KINDS,
    RBFGrid,
    TileCoding,
    coordinate_features,
    make_feature_map,
)
from nsrl.model.structured import with_features


def test_tile_coding_activates_one_tile_per_tiling_and_separates_far_points():
    X = np.random.default_rng(0).random((200, 2))
    tc = TileCoding(n_tiles=4, n_tilings=3).fit(X)
    Z = tc.transform(X)
    assert Z.shape == (200, 3 * 25) and (Z.sum(axis=1) == 3).all()
    assert (Z.reshape(200, 3, 25).sum(axis=2) == 1).all()  # one tile in each tiling
    a, b, far = tc.transform([[0.5, 0.5], [0.51, 0.5], [0.0, 1.0]])
    assert a @ b >= 2 and a @ far == 0  # near points share most tiles, far ones none
    assert (tc.transform(X[:5]) == TileCoding(4, 3, sparse_output=True).fit(X)
            .transform(X[:5]).toarray()).all()


def test_rbf_grid_peaks_at_its_centres():
    X = np.array([[0.0, -1.0], [2.0, 1.0]])
    rbf = RBFGrid(n_centres=(3, 2), width=0.5).fit(X)
    Z = rbf.transform([[1.0, 1.0]])
    assert Z.shape == (1, 6) and Z.max() == 1.0 and Z.argmax() == 3  # centre (1, 1)


def test_transformers_follow_scikit_learn_conventions():
    for t in (TileCoding(), RBFGrid()):
        assert clone(t).get_params() == t.get_params()
        assert not hasattr(t, "low_") and not hasattr(t, "axes_")  # __init__ only stores


@pytest.mark.parametrize(("make", "match"), [
    (lambda: TileCoding(n_tiles=0), "n_tiles should be an int >= 1"),
    (lambda: TileCoding(n_tilings=2.5), "n_tilings"),
    (lambda: TileCoding(n_tiles=(2, 2, 2)), "one per coordinate"),
    (lambda: RBFGrid(width=0.0), "width should be a float > 0"),
    (lambda: RBFGrid(n_centres=-1), "n_centres"),
])
def test_bad_settings_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make().fit(np.random.default_rng(0).random((10, 2)))


def test_a_constant_coordinate_gives_zero_width_tiles_and_is_refused():
    X = np.c_[np.arange(5.0), np.zeros(5)]
    for t in (TileCoding(), RBFGrid()):
        with pytest.raises(ValueError, match="width 0; drop that column"):
            t.fit(X)
    with pytest.raises(ValueError, match="kind should be one of"):
        make_feature_map("fourier")


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_gives_about_the_features_asked(kind):
    phi = coordinate_features(nsrl.mountain_car(12, 12).features, kind, 100)
    assert phi.shape == (144, 100) and np.isfinite(phi).all()


def test_rbf_features_make_the_projected_operator_improve_on_pi0():
    mdp = nsrl.mountain_car(30, 30)
    phi = coordinate_features(mdp.features, "rbf", 49)
    op = nsrl.ProjectedGreedy(mdp, noise=0.0, features=phi)
    step = op.greedy(nsrl.constant(), nsrl.Nu(), None).policy
    assert nsrl.loss(mdp, step) < 0.8 * nsrl.loss(mdp, nsrl.constant())
    # the same Phi through the model (the batched engines' path) gives the same step
    same = nsrl.ProjectedGreedy(with_features(mdp, phi), noise=0.0)
    assert (same.greedy(nsrl.constant(), nsrl.Nu(), None).policy.actions == step.actions).all()


def test_lstdq_and_rollouts_take_a_table_or_a_transformer():
    from nsrl.envs import FiniteMDPVectorEnv, GridWorldVectorEnv
    from nsrl.greedy.lstdq import LSTDQ
    from nsrl.greedy.rollout import RolloutCSC

    mdp = nsrl.gridworld(8, seed=0)
    phi = coordinate_features(mdp.features, "tiles", 36)
    rng = np.random.default_rng(0)
    table = LSTDQ(FiniteMDPVectorEnv(mdp), budget=3000, features=phi)
    assert table.greedy(nsrl.constant(), nsrl.Nu(), rng).policy.action_table(mdp).shape \
        == (mdp.n_states,)
    coords = GridWorldVectorEnv(size=8, seed=0, observation="coordinates")
    for op in (LSTDQ(coords, budget=3000, features=make_feature_map("rbf", 36)),
               RolloutCSC(coords, _classifier(), budget=3000,
                          features=make_feature_map("rff", 36))):
        pi = op.greedy(nsrl.constant(), nsrl.Nu(), rng).policy
        assert pi.action_table(mdp).shape == (mdp.n_states,)


def _classifier():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=200)


def test_gym_env_coordinates_feed_a_feature_map():
    env = gym.make("GridWorld-v0", size=5, observation="coordinates")
    obs, _ = env.reset(seed=0)
    assert make_feature_map("rbf", 9).fit(env.unwrapped.mdp.features).transform([obs]).shape \
        == (1, 9)
