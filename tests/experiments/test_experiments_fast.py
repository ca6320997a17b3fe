"""The batched engines at their default thresholds equal the reference loop."""

import numpy as np
import pytest
from test_batched_equality import registered_names

import nsrl
from nsrl.schemes import make_scheme


def simulate(mdp, scheme, rngs, k, **operator_options):
    """The batched engine's History for these runs (nsrl.run, engine="batched")."""
    return nsrl.run(scheme, nsrl.OperatorSpec("projected", **operator_options), k,
                    rng=list(rngs), mdp=mdp, engine="batched")


def test_fast_path_absolute_noise_matches_reference():
    mdp = nsrl.garnet(12, 2, 2, seed=5)
    ref = nsrl.run(nsrl.NSPI(3), nsrl.ProjectedGreedy(mdp, noise=0.5, noise_model="absolute"), 8,
                   rng=np.random.default_rng(0))
    out = simulate(mdp, "nspi(3)", [np.random.default_rng(0)], 8, noise=0.5,
                   noise_model="absolute")
    np.testing.assert_allclose(out.losses[0], ref.losses, atol=1e-8)


def test_nspi1_is_api_and_runs_are_independent():
    """NSPI(1) == API (paper, section 2); a run's numbers do not depend on its batch."""
    mdp = nsrl.garnet(15, 3, 2, seed=2)
    rngs = [np.random.default_rng(i) for i in range(3)]
    api = simulate(mdp, "api", rngs, 10).losses
    nspi = simulate(mdp, "nspi(1)", [np.random.default_rng(i) for i in range(3)], 10).losses
    np.testing.assert_allclose(api, nspi, atol=1e-9)
    alone = simulate(mdp, "api", [np.random.default_rng(2)], 10).losses
    np.testing.assert_allclose(alone[0], api[2], rtol=0, atol=1e-9)


def test_losses_are_non_negative_and_noise_free_runs_do_not_depend_on_the_seed():
    """L = mu(v* - v_pi) >= 0 for any policy; with iota = 0 the operator draws nothing."""
    mdp = nsrl.garnet(20, 2, 2, seed=3)
    a = simulate(mdp, "psdp", [np.random.default_rng(0)], 15, noise=0.0)
    b = simulate(mdp, "psdp", [np.random.default_rng(9)], 15, noise=0.0)
    assert np.all(a.losses >= -1e-9)
    np.testing.assert_array_equal(a.losses, b.losses)  # no noise: the seed does not matter


def test_bad_input():
    mdp = nsrl.garnet(10, 2, 1, seed=0)
    with pytest.raises(ValueError, match="n_iterations"):
        simulate(mdp, "api", [np.random.default_rng(0)], 0)
    with pytest.raises(ValueError, match="scheme"):
        simulate(mdp, "sarsa", [np.random.default_rng(0)], 3)
    no_features = nsrl.FiniteMDP(mdp.P, mdp.R, mdp.gamma)
    with pytest.raises(ValueError, match="features"):
        simulate(no_features, "api", [np.random.default_rng(0)], 3)


@pytest.mark.parametrize("shape", [(40, 3, 1), (40, 2, 3), (40, 4, 10)])
@pytest.mark.parametrize("scheme", registered_names())
def test_fast_path_matches_reference_on_larger_mdps(shape, scheme):
    """The Krylov, subspace and functional solves pick the reference's actions and steps."""
    mdp = nsrl.garnet(*shape, seed=21)
    ref = [nsrl.run(make_scheme(scheme), nsrl.ProjectedGreedy(mdp), 15,
                    rng=np.random.default_rng(i)) for i in range(3)]
    out = simulate(mdp, scheme, [np.random.default_rng(i) for i in range(3)], 15)
    np.testing.assert_allclose(out.losses, [h.losses for h in ref], rtol=0, atol=1e-8)
    np.testing.assert_allclose(out.steps, [h.steps for h in ref], atol=1e-12)


@pytest.mark.parametrize("branching", [1, 2])
def test_subspace_values_are_within_their_certified_bounds(branching):
    """|v_a - subspace value| <= err for every candidate, even with a stale inverse."""
    from nsrl.batched.linalg.linesearch import System, subspace_values
    from nsrl.batched.linalg.state import Batch
    from nsrl.schemes.rules import line_search_steps

    mdp = nsrl.garnet(30, 3, branching, seed=4)
    b = Batch(mdp)
    rng = np.random.default_rng(0)
    table = rng.dirichlet(np.ones(3), size=(2, 30))
    Ppi = np.einsum("sat,rsa->rst", mdp.P, table)
    rpi = (table * mdp.R).sum(axis=2)
    v = b.evaluate(Ppi, rpi)
    stale = np.linalg.inv(b.eye - b.gamma * np.einsum("sat,rsa->rst", mdp.P, 0.999 * table
                                                       + 0.001 / 3))
    acts = rng.integers(0, 3, size=(2, 30))
    owner, steps = line_search_steps(np.array([1e-4, 3e-3]))
    A = b.eye - b.gamma * Ppi
    op = System(b, table)
    values, err = subspace_values(b, stale, op, rpi, v, acts, owner, steps)
    exact = b.evaluate_mixtures(A, np.arange(2), rpi, acts, owner, steps)
    gap = np.abs(values - exact).max(axis=1)
    assert np.all(gap <= err + 1e-12)
    assert err[steps < 2e-4].max() < 1e-9  # the smallest steps: as good as a direct solve
    if branching == 1:  # the greedy policy's own Krylov vectors resolve a = 1 as well
        assert err[steps == 1.0].max() < 1e-9
    else:
        assert err[steps == 1.0].min() > 1e-6


@pytest.mark.parametrize("scheme", registered_names())
def test_paths_for_larger_mdps_match_reference(scheme):
    """n_S = 150, b = 2, default thresholds: API's low-rank updates (woodbury) and the
    single-precision LU refined to double precision give the reference's losses."""
    mdp = nsrl.garnet(150, 4, 2, seed=3)
    ref = [nsrl.run(make_scheme(scheme), nsrl.ProjectedGreedy(mdp), 12,
                    rng=np.random.default_rng(i)) for i in range(2)]
    out = simulate(mdp, scheme, [np.random.default_rng(i) for i in range(2)], 12)
    np.testing.assert_allclose(out.losses, [h.losses for h in ref], rtol=0, atol=1e-8)
