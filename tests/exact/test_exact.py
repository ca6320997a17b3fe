import numpy as np
import pytest

import nsrl
from nsrl.exact import bellman, evaluate_tables, q_values, transition_matrix


def _random_actions(mdp, seed):
    return nsrl.Deterministic(
        np.random.default_rng(seed).integers(mdp.n_actions, size=mdp.n_states)
    )


def test_value_is_fixed_point_of_bellman(small_garnet):
    pi = _random_actions(small_garnet, 0)
    v = nsrl.evaluate(small_garnet, pi)
    np.testing.assert_allclose(bellman(small_garnet, pi.table(small_garnet), v), v, atol=1e-10)


@pytest.mark.parametrize("gamma", [0.5, 0.99, 0.999])
def test_numerically_sound_up_to_gamma_0999(gamma):
    mdp = nsrl.garnet(60, 3, 1, gamma=gamma, seed=2)
    pi = _random_actions(mdp, 1)
    v = nsrl.evaluate(mdp, pi)
    residual = np.abs(bellman(mdp, pi.table(mdp), v) - v).max()
    assert residual < 1e-10 * mdp.r_max / (1 - gamma)
    v_star = nsrl.optimal_value(mdp)
    # v* is the fixed point of T and dominates every policy.
    np.testing.assert_allclose(q_values(mdp, v_star).max(axis=1), v_star, rtol=1e-11)
    assert (v_star >= v - 1e-9).all()


def test_optimal_value_matches_value_iteration(small_garnet):
    v = np.zeros(small_garnet.n_states)
    for _ in range(5000):
        v = q_values(small_garnet, v).max(axis=1)
    np.testing.assert_allclose(nsrl.optimal_value(small_garnet), v, atol=1e-9)


def test_greedy_policy_value_dominates(small_garnet):
    pi = _random_actions(small_garnet, 3)
    v = nsrl.evaluate(small_garnet, pi)
    improved = nsrl.Deterministic(nsrl.greedy_actions(small_garnet, v))
    assert (nsrl.evaluate(small_garnet, improved) >= v - 1e-10).all()


def test_greedy_ties_go_to_lowest_action():
    P = np.zeros((2, 3, 2))
    P[:, :, 0] = 1.0
    mdp = nsrl.FiniteMDP(P, np.zeros(2), 0.9)
    assert nsrl.greedy_actions(mdp, np.zeros(2)).tolist() == [0, 0]


def test_mixture_value_equals_its_stochastic_table(small_garnet):
    a, b, c = (_random_actions(small_garnet, s) for s in range(3))
    mix = nsrl.Mixture([(0.2, a), (0.5, b), (0.3, c)])
    table = mix.table(small_garnet)
    np.testing.assert_allclose(
        table,
        0.2 * a.table(small_garnet) + 0.5 * b.table(small_garnet) + 0.3 * c.table(small_garnet),
    )
    np.testing.assert_allclose(
        nsrl.evaluate(small_garnet, mix),
        nsrl.evaluate(small_garnet, nsrl.Stochastic(table)),
        rtol=1e-12,
    )


def test_periodic_value_is_fixed_point_of_compound_operator(small_garnet):
    pis = [_random_actions(small_garnet, s) for s in range(4)]
    v = nsrl.evaluate(small_garnet, nsrl.NonStationary(pis, loop=True))
    w = v
    for pi in reversed(pis):  # T_{pi_1} T_{pi_2} T_{pi_3} T_{pi_4} v
        w = bellman(small_garnet, pi.table(small_garnet), w)
    np.testing.assert_allclose(w, v, atol=1e-10)
    # the phase-1 value is the loop shifted by one: v = T_{pi_1} v_shifted
    shifted = nsrl.evaluate(small_garnet, nsrl.NonStationary(pis[1:] + pis[:1], loop=True))
    np.testing.assert_allclose(
        bellman(small_garnet, pis[0].table(small_garnet), shifted), v, atol=1e-10
    )


def test_loop_of_one_policy_is_the_stationary_policy(small_garnet):
    pi = _random_actions(small_garnet, 9)
    np.testing.assert_allclose(
        nsrl.evaluate(small_garnet, nsrl.NonStationary([pi], loop=True)),
        nsrl.evaluate(small_garnet, pi),
        rtol=1e-12,
    )


def test_finite_sequence_value_and_incremental_prepend(small_garnet):
    pis = [_random_actions(small_garnet, s) for s in range(5)]
    sigma = nsrl.NonStationary.empty()
    for pi in pis:
        sigma = sigma.prepend(pi)
    direct = nsrl.NonStationary(sigma.policies, loop=False)  # no parent: computed from scratch
    np.testing.assert_allclose(
        nsrl.evaluate(small_garnet, sigma), nsrl.evaluate(small_garnet, direct), rtol=1e-13
    )
    np.testing.assert_array_equal(
        nsrl.evaluate(small_garnet, nsrl.NonStationary.empty()), small_garnet.R[:, 0]
    )


def test_occupancy_is_a_distribution_and_matches_simulation(small_garnet):
    mdp = small_garnet
    pi = nsrl.Mixture([(0.5, _random_actions(mdp, 1)), (0.5, _random_actions(mdp, 2))])
    d = nsrl.occupancy(mdp, pi)
    assert (d >= 0).all() and abs(d.sum() - 1) < 1e-12
    # Simulation: start from nu, stop each step w.p. 1 - gamma: the stopping state ~ d_{pi,nu}.
    rng = np.random.default_rng(0)
    n = 40_000
    s = rng.choice(mdp.n_states, size=n, p=mdp.start)
    final = np.full(n, -1)
    alive = np.ones(n, dtype=bool)
    P_pi = transition_matrix(mdp, pi.table(mdp))
    cdf = np.cumsum(P_pi, axis=1)
    while alive.any():
        stop = alive & (rng.random(n) < 1 - mdp.gamma)
        final[stop] = s[stop]
        alive &= ~stop
        u = rng.random(n)[:, None]
        s = np.where(alive, np.minimum((u >= cdf[s]).sum(axis=1), mdp.n_states - 1), s)
    freq = np.bincount(final, minlength=mdp.n_states) / n
    # each bin is a binomial proportion: 5 standard errors is far beyond chance
    assert np.all(np.abs(freq - d) <= 5 * np.sqrt(d * (1 - d) / n) + 1e-3)


def test_loss_is_zero_for_optimal_and_positive_otherwise(small_garnet):
    opt = nsrl.Deterministic(nsrl.greedy_actions(small_garnet, nsrl.optimal_value(small_garnet)))
    assert abs(nsrl.loss(small_garnet, opt)) < 1e-9
    assert nsrl.loss(small_garnet, nsrl.Constant(0)) > 0
    mu = np.zeros(small_garnet.n_states)
    mu[0] = 1.0
    gap = nsrl.optimal_value(small_garnet) - nsrl.evaluate(small_garnet, nsrl.Constant(0))
    assert nsrl.loss(small_garnet, nsrl.Constant(0), mu=mu) == pytest.approx(gap[0])


def test_batched_evaluation_matches_single(small_garnet):
    tables = np.stack([_random_actions(small_garnet, s).table(small_garnet) for s in range(3)])
    batch = evaluate_tables(small_garnet, tables)
    for i in range(3):
        np.testing.assert_allclose(
            batch[i], nsrl.evaluate(small_garnet, nsrl.Stochastic(tables[i]))
        )


def test_bad_inputs(small_garnet):
    with pytest.raises(TypeError, match="FiniteMDP"):
        nsrl.evaluate("mdp", nsrl.Constant(0))
    with pytest.raises(ValueError, match="states"):
        nsrl.evaluate(small_garnet, nsrl.Deterministic([0, 1]))
    with pytest.raises(TypeError, match="cannot evaluate"):
        nsrl.evaluate(small_garnet, object())
    with pytest.raises(ValueError, match="mu should sum to 1"):
        nsrl.loss(small_garnet, nsrl.Constant(0), mu=np.ones(small_garnet.n_states))


def test_a_shared_backend_goes_with_its_model():
    """backend(mdp) is keyed weakly by the model and must not hold it back: a model, its v*
    and the memo of policies are freed once the caller drops it (they used to live for the
    whole process, held by a global table: hundreds of MB per model at 10^5 states). The
    collector is run first: numba's first compilation of a kernel in a process (no disk cache
    yet, as in a fresh clone) leaves the calling frames, and the model in them, in a reference
    cycle until the next collection; the old global reference survives a collection."""
    import gc
    import weakref

    from nsrl.exact.evaluation import _BACKENDS, ExactBackend, backend

    mdp = nsrl.garnet(400, 3, 2, seed=3)  # above the dense size: the iterative path
    b = backend(mdp)
    v = b.value(_random_actions(mdp, 1))
    assert b.mdp is mdp and backend(mdp) is b and b.loss(_random_actions(mdp, 1)) > 0
    model, shared, before = weakref.ref(mdp), weakref.ref(b), len(_BACKENDS)
    del mdp, b
    gc.collect()
    assert model() is None and shared() is None and len(_BACKENDS) == before - 1
    orphan = backend(nsrl.garnet(30, 2, 2, seed=0))  # its model is gone at once
    gc.collect()
    with pytest.raises(ReferenceError, match="keep a reference to the MDP"):
        orphan.optimal_value()
    own = ExactBackend(nsrl.garnet(400, 3, 2, seed=3))  # built directly: holds its model
    np.testing.assert_allclose(own.value(_random_actions(own.mdp, 1)), v, rtol=1e-8)
