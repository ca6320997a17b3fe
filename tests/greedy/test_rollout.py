"""Rollout greedy operators: the cost-sensitive reduction, refusals, determinism, schemes."""

import gymnasium as gym
import numpy as np
import pytest
from fixtures import CountingEnv
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.tree import DecisionTreeClassifier

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import RolloutCSC, RolloutRegression
from nsrl.policies import action_table, stationary_table
from nsrl.schemes.api import fold_in


@pytest.fixture(scope="module")
def mdp():
    return nsrl.garnet(12, 4, 2, gamma=0.8, seed=5)


def csc(mdp, **kw):
    kw.setdefault("n_states", mdp.n_states)
    return RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                      features="onehot", **kw)


def test_reduction_with_exact_costs_returns_the_exact_greedy_policy(mdp):
    """Weighted all-pairs labels + a classifier that can fit them = argmax_a Q."""
    for seed in range(3):
        pi = nsrl.Deterministic(np.random.default_rng(seed).integers(0, 4, mdp.n_states))
        q = nsrl.q_values(mdp, nsrl.evaluate(mdp, pi))
        x = np.eye(mdp.n_states)
        exact = np.argmax(q, axis=1)
        policy = csc(mdp).fit(x, q)
        np.testing.assert_array_equal(action_table(policy, mdp), exact)
        reg = RolloutRegression(FiniteMDPVectorEnv(mdp), LinearRegression(), n_states=12,
                                features="onehot")
        np.testing.assert_array_equal(action_table(reg.fit(x, q), mdp), exact)


def test_reduction_weights_bound_the_regret():
    """Predicting c instead of a* costs at least Q(a*) - Q(c) in weighted error."""
    rng = np.random.default_rng(0)
    q = rng.normal(size=(50, 5))
    w = np.clip(q[:, :, None] - q[:, None, :], 0, None).sum(axis=2)
    np.testing.assert_array_equal(np.argmax(w, axis=1), np.argmax(q, axis=1))
    error = w.sum(axis=1, keepdims=True) - w  # weighted error of predicting each action
    regret = q.max(axis=1, keepdims=True) - q
    best = error.min(axis=1, keepdims=True)
    assert np.all(error - best >= regret - 1e-12)


def test_large_budget_gives_a_nearly_greedy_policy(mdp):
    pi = nsrl.constant(0)
    op = csc(mdp, n_states=200, n_rollouts=100)  # 200 draws: every state seen (p > 0.99999)
    g = op.greedy(pi, nsrl.Nu(), np.random.default_rng(0))
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, pi))
    chosen = q[np.arange(mdp.n_states), action_table(g.policy, mdp)]
    gap = mdp.start @ (q.max(axis=1) - chosen)  # nu(T v - T_pi' v), the greedy error
    uniform_gap = mdp.start @ (q.max(axis=1) - q.mean(axis=1))  # that of a blind guess
    assert gap < 0.25 * uniform_gap
    # The advantage estimate: within the sampling error of 200 states (measured spread 0.04).
    assert abs(g.advantage - mdp.start @ (chosen - q[:, 0])) < 0.1


def test_refusals(mdp):
    env = FiniteMDPVectorEnv(mdp)
    with pytest.raises(TypeError, match="classifier"):
        RolloutCSC(env, Ridge(), n_states=5)
    with pytest.raises(TypeError, match="regressor"):
        RolloutRegression(env, LogisticRegression(), n_states=5)
    with pytest.raises(TypeError, match="needs a scikit-learn classifier, got str"):
        RolloutCSC(env, "tree", n_states=5)
    with pytest.raises(ValueError, match="too small.*4 actions"):
        RolloutCSC(env, LogisticRegression(), budget=4 * 2 * 10 - 1, n_rollouts=2, horizon=10)
    RolloutCSC(env, LogisticRegression(), budget=4 * 2 * 10, n_rollouts=2, horizon=10)
    with pytest.raises(ValueError, match="exactly one"):
        RolloutCSC(env, LogisticRegression())


def test_same_seeds_same_policies(mdp):
    def once(seed):
        op = RolloutCSC(FiniteMDPVectorEnv(mdp), LogisticRegression(), budget=4000)
        h = nsrl.run(nsrl.CPIAlpha(0.3), op, 3, rng=np.random.default_rng(seed),
                     keep_outputs=True)
        return [stationary_table(p, mdp) for p in h.outputs], h.samples

    a, b, c = once(1), once(1), once(2)
    for x, y in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a[1], b[1])
    assert any(not np.array_equal(x, y) for x, y in zip(a[0], c[0], strict=True))


@pytest.mark.parametrize("scheme", ["api", "api(0.1)", "cpi", "cpi(0.1)", "cpi+", "psdp",
                                    "nspi(3)"])
def test_every_scheme_runs_and_counts_samples(mdp, scheme):
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    op = RolloutRegression(env, Ridge(alpha=1e-3), budget=3000, horizon=20, features="onehot")
    h = nsrl.run(nsrl.make_scheme(scheme), op, 4, rng=np.random.default_rng(0))
    assert np.all(np.isfinite(h.losses)) and np.all(h.losses >= -1e-9)
    assert h.samples[-1] == env.count == op.samples_used
    assert np.all(np.diff(h.samples) >= 0)


def test_generic_env_path_runs_api():
    env = gym.make("Garnet-v0", n_states=8, n_actions=2, branching=2, gamma=0.8, seed=0)
    op = RolloutCSC(env, DecisionTreeClassifier(random_state=0), n_states=8, horizon=10)
    h = nsrl.run(nsrl.API(), op, 2, rng=np.random.default_rng(0))
    # first call: H = 10 transitions per rollout; then m = 1 and the critic
    assert h.samples.tolist() == [8 * 2 * 10, 8 * 2 * 10 + 8 * 2 * 1]
    assert np.all(np.isfinite(h.losses))


@pytest.mark.parametrize("scheme", ["api", "api(0.1)", "cpi", "cpi(0.1)", "cpi+", "psdp",
                                    "nspi(3)"])
def test_counts_with_the_defaults_are_exact(mdp, scheme):
    """Every transition is counted once: the greedy calls' and the line search's."""
    op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                    budget=2000, features="onehot")
    scheme = nsrl.make_scheme(scheme)
    scheme.start(nsrl.constant(0))
    total, rng = 0, np.random.default_rng(0)
    for _ in range(4):
        step = scheme.step(op, rng)
        total += step.greedy.samples if step.greedy is not None else 0
    assert op.samples_used >= total > 0
    if not isinstance(scheme, nsrl.CPIPlus):  # only CPI+ draws outside its greedy calls
        assert op.samples_used == total


def test_budget_is_spent_as_planned_under_nu(mdp):
    """Fixed lengths, rho = nu: N states x A actions x K rollouts x length, exactly."""
    op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                    budget=5000, n_rollouts=2, horizon=25, m=3, features="onehot")
    rng = np.random.default_rng(0)
    first = op.greedy(nsrl.constant(0), nsrl.Nu(), rng)
    second = op.greedy(first.policy, nsrl.Nu(), rng)
    assert first.samples == (5000 // (4 * 2 * 25)) * 4 * 2 * 25
    assert second.samples == (5000 // (4 * 2 * 3)) * 4 * 2 * 3
    sigma = nsrl.NonStationary.empty().prepend(first.policy)  # 1 + 1 + terminal < m + 1
    assert op.greedy(sigma, nsrl.Nu(), rng).samples == (5000 // (4 * 2 * 3)) * 4 * 2 * 3


def test_line_search_candidates_share_random_numbers(mdp):
    op = RolloutCSC(FiniteMDPVectorEnv(mdp), DecisionTreeClassifier(random_state=0),
                    budget=3000, features="onehot")
    rng = np.random.default_rng(0)
    g = op.greedy(nsrl.constant(0), nsrl.Nu(), rng)
    used = op.samples_used
    a = op.value(nsrl.constant(0), rng)
    assert op.value(nsrl.constant(0), rng) == a  # same numbers until the next greedy call
    assert op.samples_used - used == 2 * (3000 // (4 * 30)) * 30  # budget / (A H) rollouts
    mixtures = [fold_in(nsrl.constant(0), g.policy, alpha) for alpha in (0.1, 0.2)]
    common, independent = [], []
    for seed in range(30):
        op._value_seed = seed  # what a greedy call sets
        v0, v1 = op.value(mixtures[0], rng), op.value(mixtures[1], rng)
        op._value_seed = 1000 + seed
        common.append(v1 - v0)
        independent.append(op.value(mixtures[1], rng) - v0)
    # measured spreads of the difference over these 30 seeds: 0.039 with CRN, 0.078 without
    assert np.std(common) < 0.7 * np.std(independent)
    op.greedy(g.policy, nsrl.Nu(), rng)
    assert op.value(nsrl.constant(0), rng) != a


def test_merged_repeated_states_fit_as_the_repeated_rows(mdp):
    """Least squares on means weighted by counts = on the repeated rows."""
    rng = np.random.default_rng(0)
    x, q = np.eye(6)[rng.integers(0, 6, 200)], rng.normal(size=(200, 4))
    reg = RolloutRegression(FiniteMDPVectorEnv(mdp), LinearRegression(), n_states=5)
    from nsrl.greedy.sampling.common import merge_states

    states = x.argmax(axis=1)
    uniq, mean, counts = merge_states(states, q)
    assert counts.sum() == 200 and np.allclose(mean[0], q[states == uniq[0]].mean(axis=0))
    grouped = reg.fit(np.eye(6)[uniq], mean, counts)
    plain = reg.fit(x, q)
    for a in range(4):
        np.testing.assert_allclose(grouped.regressors[a].predict(np.eye(6)),
                                   plain.regressors[a].predict(np.eye(6)), atol=1e-10)


def test_one_hot_rows_reach_the_classifier_sparse_with_the_dense_fit(mdp, monkeypatch):
    """One-hot rows go to the classifier as CSR: same policy as the dense fit; a classifier
    that refuses sparse input gets the dense rows, from the first refusal on."""
    from scipy import sparse
    from sklearn.naive_bayes import GaussianNB

    from nsrl.greedy import rollout

    monkeypatch.setattr(rollout, "SPARSE_SIZE", 0)  # the rule for large matrices, on a small one
    x = np.eye(mdp.n_states)
    q = np.random.default_rng(0).normal(size=(mdp.n_states, 4))
    op = RolloutCSC(FiniteMDPVectorEnv(mdp), LogisticRegression(max_iter=1000),
                    features="onehot", n_states=mdp.n_states)
    assert sparse.issparse(op._sparse_design(x)) and not sparse.issparse(op._sparse_design(q))
    monkeypatch.setattr(rollout, "SPARSE_SIZE", x.size + 1)
    assert not sparse.issparse(op._sparse_design(x))  # small: dense
    monkeypatch.setattr(rollout, "SPARSE_SIZE", 0)
    fitted = op.fit(x, q)
    dense = LogisticRegression(max_iter=1000)
    w = np.clip(q[:, :, None] - q[:, None, :], 0.0, None).sum(axis=2)
    rows, labels = np.nonzero(w > 0)
    dense.fit(x[rows], labels, sample_weight=w[rows, labels] * len(rows) / w[rows, labels].sum())
    np.testing.assert_allclose(fitted.classifier.coef_, dense.coef_, atol=1e-10)
    np.testing.assert_array_equal(fitted.act(np.arange(mdp.n_states)),
                                  dense.predict(x))

    nb = RolloutCSC(FiniteMDPVectorEnv(mdp), GaussianNB(), features="onehot",
                    n_states=mdp.n_states)
    policy = nb.fit(x, q)
    assert nb._sparse is False and not sparse.issparse(nb._sparse_design(x))
    assert policy.act(np.arange(mdp.n_states)).shape == (mdp.n_states,)
