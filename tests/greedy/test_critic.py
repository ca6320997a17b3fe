"""Truncated m-step rollouts with a critic (CBMPI): tails, unbiasedness, consistency, refusals."""

import gymnasium as gym
import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import RolloutCSC, RolloutRegression
from nsrl.greedy.critic import ExactCritic, tail
from nsrl.schemes.base import Step, greedy_error

Z = 5.0  # standard errors: about 100 entries tested, a correct estimator fails w.p. < 1e-4



@pytest.fixture(scope="module")
def mdp():
    return nsrl.garnet(7, 3, 2, gamma=0.9, seed=2)


def deterministic(mdp, seed):
    return nsrl.Deterministic(np.random.default_rng(seed).integers(0, mdp.n_actions,
                                                                   mdp.n_states))


def psdp_sequence(mdp, k):
    sigma = nsrl.NonStationary.empty()
    for i in range(k):
        sigma = sigma.prepend(deterministic(mdp, 10 + i))
    return sigma


def targets(mdp):
    p = [deterministic(mdp, i) for i in range(3)]
    return {
        "stationary": p[0],
        "mixture": nsrl.Mixture([(0.4, p[0]), (0.6, p[1])]),
        "loop": nsrl.NonStationary(p, loop=True),
        "finite": psdp_sequence(mdp, 6),
    }


def test_tails_keep_the_phase():
    mdp = nsrl.garnet(5, 2, 2, seed=0)
    a, b, c = (deterministic(mdp, i) for i in range(3))
    assert tail(a, 4) is a
    loop = nsrl.NonStationary([a, b, c], loop=True)
    assert tail(loop, 1) is loop and tail(loop, 4) is loop
    assert tail(loop, 3).policies == (c, a, b) and tail(loop, 3).loop
    sigma = psdp_sequence(mdp, 5)  # sigma_5 = pi_5 ... pi_1, built by prepend
    assert tail(sigma, 1) is sigma
    assert tail(sigma, 3) is sigma.parent.parent  # sigma_3, an earlier PSDP target
    assert tail(sigma, 5).policies == sigma.policies[4:] and tail(sigma, 6) is None
    loose = nsrl.NonStationary(sigma.policies, loop=False)  # no parent chain
    assert tail(loose, 3).policies == sigma.policies[2:] and not tail(loose, 3).loop


def m_step_draws(mdp, target, m, draws, seed):
    op = RolloutRegression(FiniteMDPVectorEnv(mdp), LinearRegression(), n_states=1, m=m,
                           critic=ExactCritic(mdp), features="onehot")
    states = np.repeat(np.arange(mdp.n_states), draws)
    q, count, _ = op.q_estimates(target, states, np.random.default_rng(seed))
    return q.reshape(mdp.n_states, draws, mdp.n_actions), count


@pytest.mark.parametrize("kind", ["stationary", "mixture", "loop", "finite"])
@pytest.mark.parametrize("m", [1, 2, 4])
def test_m_step_estimate_with_an_oracle_critic_is_unbiased(mdp, kind, m):
    target = targets(mdp)[kind]
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    draws, count = m_step_draws(mdp, target, m, 3000, seed=m)
    se = draws.std(axis=1) / np.sqrt(draws.shape[1])
    assert np.all(np.abs(draws.mean(axis=1) - q) <= Z * se + 1e-9), kind
    assert count == mdp.n_states * 3000 * mdp.n_actions * m  # m transitions each, exactly


def test_a_finite_sequence_shorter_than_m_runs_to_its_end(mdp):
    sigma = psdp_sequence(mdp, 2)  # 1 + 2 + 1 (terminal) transitions < m = 6: no critic
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, sigma))
    draws, count = m_step_draws(mdp, sigma, 6, 2000, seed=0)
    se = draws.std(axis=1) / np.sqrt(2000)
    assert np.all(np.abs(draws.mean(axis=1) - q) <= Z * se + 1e-9)
    assert count == mdp.n_states * 2000 * mdp.n_actions * 4


def test_greedy_step_converges_to_the_exact_greedy_policy_with_the_defaults():
    """A fixed target called repeatedly (a scheme's steady state): error -> 0 with budget."""
    mdp = nsrl.garnet(12, 4, 2, gamma=0.8, seed=5)
    for seed in (2, 3):  # the smallest gaps between the two best actions: 0.024 and 0.015
        pi = nsrl.Deterministic(np.random.default_rng(seed).integers(0, 4, 12))
        errors = []
        for budget in (1_000, 10_000, 100_000):
            op = RolloutCSC(FiniteMDPVectorEnv(mdp), LogisticRegression(max_iter=1000),
                            budget=budget, features="onehot")
            rng = np.random.default_rng(seed)
            for _ in range(3):  # the first call has no critic data yet
                g = op.greedy(pi, nsrl.Nu(), rng)
            errors.append(greedy_error(mdp, Step(target=pi, rho=nsrl.Nu(), greedy=g)))
        assert errors[0] > 0 and errors[-1] == 0.0, errors


@pytest.mark.parametrize("kind", ["stationary", "mixture"])
def test_lstd_critic_is_consistent_for_a_stationary_target(mdp, kind):
    """The previous call's transitions evaluate the target on the empirical model: V_hat
    converges to v_target as that call's budget grows (no chaining of earlier critics)."""
    target = targets(mdp)[kind]
    v = nsrl.evaluate(mdp, target)
    errors = []
    for budget in (1_000, 100_000):
        op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                        budget=budget, features="onehot", critic="lstd")
        rng = np.random.default_rng(1)
        op.greedy(nsrl.constant(0), nsrl.Nu(), rng)  # its data, whatever its target
        states = np.arange(mdp.n_states)
        errors.append(np.abs(op.critic.values(target, states, states, rng) - v).max())
    assert errors[1] < 0.3 * errors[0]  # 100x the data: about 10x smaller


def test_lstd_critic_falls_back_where_it_has_no_data(mdp):
    """States the previous call did not sample take the regression critic's values."""
    op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                    n_states=3, features="onehot", critic="lstd", stratified=False)
    rng = np.random.default_rng(0)
    op.greedy(nsrl.constant(0), nsrl.Nu(), rng)
    states = np.arange(mdp.n_states)
    seen = np.unique(op.critic.fallback.records[-1].states)
    lstd = op.critic.values(nsrl.constant(1), states, states, rng)
    regression = op.critic.fallback.values(nsrl.constant(1), states, states, rng)
    unseen = np.setdiff1d(states, seen)
    assert len(unseen) > 0 and np.allclose(lstd[unseen], regression[unseen])
    assert np.all(np.isfinite(lstd))
    # a loop's tail is not stationary: the regression critic answers
    loop = targets(mdp)["loop"]
    np.testing.assert_array_equal(op.critic.values(loop, states, states, rng),
                                  op.critic.fallback.values(loop, states, states, rng))


def test_psdp_critic_is_consistent(mdp):
    """For PSDP the critic's data are unbiased samples of the tail's value: its V_hat of the
    tail converges to the exact value as the budget grows."""
    errors = []
    for budget in (2_000, 200_000):
        op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                        budget=budget, features="onehot", m=2)
        scheme, rng = nsrl.PSDP(), np.random.default_rng(0)
        scheme.start(None)
        for _ in range(4):
            scheme.step(op, rng)
        rest = tail(scheme.sigma, 2)  # sigma_4 after m = 2 steps: sigma_3
        assert rest is scheme.sigma.parent
        states = np.arange(mdp.n_states)
        v_hat = op.critic.values(rest, states, op.sampler.observe(states), rng)
        errors.append(np.abs(v_hat - nsrl.evaluate(mdp, rest)).max())
    assert errors[1] < 0.3 * errors[0]  # 100x the data: about 10x smaller


def test_critic_and_m_refusals():
    env = FiniteMDPVectorEnv(nsrl.garnet(6, 2, 2, seed=0))
    clf = LogisticRegression()
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="m should be an int >= 1"):
            RolloutCSC(env, clf, n_states=5, m=bad)
    with pytest.raises(TypeError, match="critic should be 'lstd', a scikit-learn regressor"):
        RolloutCSC(env, clf, n_states=5, critic=LogisticRegression())
    with pytest.raises(TypeError, match="critic should be"):
        RolloutCSC(env, clf, n_states=5, critic="lsdt")
    generic = gym.make("CartPole-v1")
    with pytest.raises(ValueError, match="critic='lstd' needs an env with a finite model"):
        RolloutCSC(generic, clf, n_states=5, critic="lstd", gamma=0.99)
    with pytest.raises(ValueError, match="horizon='geometric'"):
        RolloutCSC(env, clf, n_states=5, horizon=None)
    with pytest.raises(ValueError, match="horizon should be an int >= 1"):
        RolloutCSC(env, clf, n_states=5, horizon=0)
    with pytest.raises(ValueError, match="n_rollouts should be an int >= 1"):
        RolloutCSC(env, clf, n_states=5, n_rollouts=0)
    with pytest.raises(ValueError, match="too small"):
        RolloutCSC(env, clf, budget=2 * 30 - 1)  # the first call's H = 30 for 2 actions


@pytest.mark.parametrize("kind", ["stationary", "mixture"])
def test_lstd_critic_sparse_solve_equals_the_dense_one(mdp, kind, monkeypatch):
    """Above _DENSE_CRITIC_MAX states the empirical model is solved sparse: same values."""
    from nsrl.greedy import critic

    op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                    n_states=4, features="onehot", critic="lstd",
                    stratified=False)
    rng = np.random.default_rng(3)
    op.greedy(nsrl.constant(0), nsrl.Nu(), rng)
    states, target = np.arange(mdp.n_states), targets(mdp)[kind]
    dense = op.critic.values(target, states, states, np.random.default_rng(0))
    monkeypatch.setattr(critic, "_DENSE_CRITIC_MAX", 0)
    sparse = op.critic.values(target, states, states, np.random.default_rng(0))
    assert len(np.unique(op.critic.fallback.records[-1].states)) < mdp.n_states  # both parts
    np.testing.assert_allclose(sparse, dense, rtol=1e-12, atol=1e-12)
