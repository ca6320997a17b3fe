"""Rollouts and d_{pi,nu} sampling: estimates against the exact backend, exact sample counts."""

import gymnasium as gym
import numpy as np
import pytest
from fixtures import CountingEnv, policies

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy.sampling import EnvSampler, ModelSampler, make_sampler, sample_states

# Five standard errors per entry: with about 20 entries tested together, a correct estimator
# fails with probability < 1e-5.
Z = 5.0


@pytest.fixture(scope="module")
def mdp():
    return nsrl.garnet(6, 2, 2, gamma=0.8, seed=3)


def q_estimates(sampler, policy, k, rng, horizon=None):
    S, A = sampler.mdp.n_states, sampler.mdp.n_actions
    s = np.repeat(np.arange(S), A * k)
    a = np.tile(np.repeat(np.arange(A), k), S)
    returns, count = sampler.rollouts(policy, s, a, rng, horizon)
    returns = returns.reshape(S, A, k)
    return returns.mean(axis=2), returns.std(axis=2) / np.sqrt(k), count


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite", "empty"])
def test_geometric_rollouts_converge_to_exact_q(mdp, kind):
    target = policies(mdp)[kind]
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    errors = []
    for k in (100, 10_000):
        q_hat, se, _ = q_estimates(sampler, target, k, np.random.default_rng(k))
        assert np.all(np.abs(q_hat - q) <= Z * se + 1e-12), kind
        errors.append(np.abs(q_hat - q).max())
    assert errors[1] < errors[0]  # 100x the rollouts: errors shrink about 10x


def test_fixed_horizon_bias_is_bounded(mdp):
    target = policies(mdp)["mixture"]
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    H = 10
    q_hat, se, count = q_estimates(sampler, target, 4000, np.random.default_rng(0), horizon=H)
    bias = mdp.gamma**H * mdp.r_max / (1 - mdp.gamma)
    assert np.all(np.abs(q_hat - q) <= Z * se + bias)
    assert count == mdp.n_states * mdp.n_actions * 4000 * H


def test_counts_are_exact(mdp):
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    sampler = ModelSampler(env)
    rng = np.random.default_rng(0)
    for kind, target in policies(mdp).items():
        for horizon in (None, 2, 50):
            env.count = 0
            _, _, count = q_estimates(sampler, target, 7, rng, horizon)
            assert count == env.count, (kind, horizon)
    # A finite sequence of 3 policies with state rewards: 1 + 3 + 1 (terminal) transitions.
    _, _, count = q_estimates(sampler, policies(mdp)["finite"], 7, rng, horizon=50)
    assert count == mdp.n_states * mdp.n_actions * 7 * 5
    env.count = 0
    _, count = sample_states(sampler, nsrl.Occupancy(policies(mdp)["mixture"]), 500, rng)
    assert count == env.count


@pytest.mark.parametrize("kind", ["deterministic", "mixture"])
def test_occupancy_histogram_matches_exact(mdp, kind):
    pi = policies(mdp)[kind]
    d = nsrl.occupancy(mdp, pi)
    n = 100_000
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    states, count = sample_states(sampler, nsrl.Occupancy(pi), n, np.random.default_rng(1))
    freq = np.bincount(states, minlength=mdp.n_states) / n
    assert np.all(np.abs(freq - d) <= Z * np.sqrt(d * (1 - d) / n) + 1e-12)
    # Each sample costs gamma / (1 - gamma) transitions on average (paper, footnote 1).
    mean = mdp.gamma / (1 - mdp.gamma)
    assert abs(count / n - mean) <= Z * np.sqrt(mdp.gamma) / (1 - mdp.gamma) / np.sqrt(n)


def test_nu_states_follow_the_start_distribution():
    start = np.array([0.5, 0.0, 0.25, 0.25])
    mdp = nsrl.FiniteMDP(np.full((4, 2, 4), 0.25), np.arange(4.0), 0.9, start=start)
    states, count = sample_states(ModelSampler(FiniteMDPVectorEnv(mdp)), nsrl.Nu(), 40_000,
                                  np.random.default_rng(0))
    freq = np.bincount(states, minlength=4) / 40_000
    assert count == 0 and freq[1] == 0
    assert np.all(np.abs(freq - start) <= Z * np.sqrt(start * (1 - start) / 40_000) + 1e-12)


def test_generic_path_estimates_q_through_reset_and_step():
    env = gym.make("Garnet-v0", n_states=4, n_actions=2, branching=2, gamma=0.5, seed=1)
    sampler = make_sampler(env)
    assert isinstance(sampler, EnvSampler)
    mdp = sampler.mdp
    target = nsrl.Mixture([(0.5, nsrl.Deterministic([0, 1, 0, 1])), (0.5, nsrl.constant(1))])
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    q_hat, se, count = q_estimates(sampler, target, 300, np.random.default_rng(0))
    assert np.all(np.abs(q_hat - q) <= Z * se + 1e-12)
    states, walk = sampler.occupancy_states(target, 50, np.random.default_rng(0))
    assert states.shape == (50,) and set(states.tolist()) <= set(range(4)) and walk >= 0


def test_same_seed_same_numbers(mdp):
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    target = policies(mdp)["mixture"]
    a = q_estimates(sampler, target, 50, np.random.default_rng(7))
    b = q_estimates(sampler, target, 50, np.random.default_rng(7))
    np.testing.assert_array_equal(a[0], b[0])
    assert a[2] == b[2]


def test_vector_env_without_generative_model_is_refused():
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("Garnet-v0")])
    with pytest.raises(TypeError, match="batched generative model"):
        make_sampler(envs)


def test_env_ignoring_reset_to_state_is_refused():
    sampler = make_sampler(gym.make("FrozenLake-v1"), gamma=0.9)
    with pytest.raises(ValueError, match="ignored reset"):
        sampler.rollouts(nsrl.constant(0), np.array([5]), np.array([0]),
                         np.random.default_rng(0))


def test_generic_path_same_seed_same_numbers():
    env = gym.make("Garnet-v0", n_states=5, n_actions=2, branching=2, gamma=0.7, seed=0)
    sampler = make_sampler(env)
    target = nsrl.Mixture([(0.5, nsrl.constant(0)), (0.5, nsrl.constant(1))])
    runs = []
    for seed in (5, 5, 6):
        rng = np.random.default_rng(seed)
        q = q_estimates(sampler, target, 20, rng)[0]
        states, _ = sampler.occupancy_states(target, 30, rng)
        runs.append((q, states))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert not np.array_equal(runs[0][0], runs[2][0])


# --- Common random numbers, the rollout kernel, stratified states -------------------------

@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite", "empty"])
@pytest.mark.parametrize("horizon", [None, 7])
def test_kernel_backends_give_the_same_numbers(mdp, kind, horizon):
    target = policies(mdp)[kind]
    outs = []
    for backend in ("numba", "numpy"):
        sampler = ModelSampler(FiniteMDPVectorEnv(mdp, backend=backend))
        outs.append(sampler.q_rollouts(target, np.arange(mdp.n_states), np.random.default_rng(3),
                                       5, horizon, crn=True))
    for field in ("returns", "states", "steps"):
        np.testing.assert_array_equal(getattr(outs[0], field), getattr(outs[1], field))
    assert outs[0].count == outs[1].count == outs[0].steps.sum()


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite"])
def test_crn_rollouts_stay_unbiased(mdp, kind):
    """Sharing random numbers across actions leaves each Q estimate's distribution alone."""
    target = policies(mdp)[kind]
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    out = sampler.q_rollouts(target, np.arange(mdp.n_states), np.random.default_rng(0), 4000,
                             None, crn=True)
    r = out.returns.reshape(mdp.n_states, mdp.n_actions, -1)
    se = r.std(axis=2) / np.sqrt(r.shape[2])
    assert np.all(np.abs(r.mean(axis=2) - q) <= Z * se + 1e-12)


def difference_variance(sampler, target, n_states, k, horizon, crn, seed=0):
    out = sampler.q_rollouts(target, np.arange(n_states), np.random.default_rng(seed), k,
                             horizon, crn)
    r = out.returns.reshape(n_states, sampler.n_actions, k)
    return (r[:, 1:] - r[:, :1]).var(axis=2).mean()


def test_crn_reduces_the_variance_of_q_differences():
    """Continuations that meet go on together: differences lose what follows (measured)."""
    mdp = nsrl.garnet(8, 3, 2, gamma=0.95, seed=5)
    target = nsrl.Mixture([(0.5, nsrl.Deterministic([0, 2, 1, 1, 0, 2, 2, 1])),
                           (0.5, nsrl.constant(1))])
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    # Geometric horizon: 306 -> 0.07 (the shared length removes the length's variance);
    # H = 40: 0.18 -> 0.06, at seed 0.
    for horizon, factor in ((None, 100), (40, 2)):
        independent = difference_variance(sampler, target, 8, 400, horizon, crn=False)
        common = difference_variance(sampler, target, 8, 400, horizon, crn=True)
        assert common * factor < independent


def test_generic_path_crn_by_seed_reduces_the_variance_too():
    env = gym.make("Garnet-v0", n_states=8, n_actions=3, branching=2, gamma=0.95, seed=5)
    sampler = make_sampler(env)
    target = nsrl.Mixture([(0.5, nsrl.Deterministic([0, 2, 1, 1, 0, 2, 2, 1])),
                           (0.5, nsrl.constant(1))])
    independent = difference_variance(sampler, target, 4, 30, 25, crn=False)
    common = difference_variance(sampler, target, 4, 30, 25, crn=True)
    assert common * 2 < independent  # measured 0.139 -> 0.059


def test_generic_path_counts_every_step():
    base = gym.make("Garnet-v0", n_states=6, n_actions=2, branching=2, gamma=0.8, seed=0)

    class Counting(gym.Wrapper):
        steps = 0

        def step(self, action):
            Counting.steps += 1
            return self.env.step(action)

    sampler = make_sampler(Counting(base))
    rng = np.random.default_rng(0)
    for target in policies(sampler.mdp).values():
        for horizon in (None, 3):
            Counting.steps = 0
            out = sampler.q_rollouts(target, np.arange(6), rng, 2, horizon)
            assert out.count == Counting.steps == out.steps.sum()
    Counting.steps = 0
    states, count = sampler.occupancy_states(policies(sampler.mdp)["mixture"], 40, rng, True,
                                             every_state=True)
    # ceil(40 (1 - gamma)) = 8 walks, each keeping its start and every state it reaches
    assert count == Counting.steps and len(states) == count + 8
    assert set(states.tolist()) <= set(range(6))


def test_stratified_nu_states_take_floor_or_ceil_of_each_share():
    start = np.array([0.5, 0.0, 0.3, 0.2])
    mdp = nsrl.FiniteMDP(np.full((4, 2, 4), 0.25), np.arange(4.0), 0.9, start=start)
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    for n in (7, 10, 33):
        counts = np.bincount(sampler.start(n, np.random.default_rng(n), stratified=True),
                             minlength=4)
        assert counts.sum() == n and np.all(np.abs(counts - n * start) < 1)


@pytest.mark.parametrize("stratified", [False, True])
@pytest.mark.parametrize("every_state", [False, True])
def test_occupancy_draws_match_exact(mdp, stratified, every_state):
    pi = policies(mdp)["mixture"]
    d = nsrl.occupancy(mdp, pi)
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    states, count = sample_states(sampler, nsrl.Occupancy(pi), 60_000, np.random.default_rng(2),
                                  stratified, every_state)
    n = len(states)
    freq = np.bincount(states, minlength=mdp.n_states) / n
    # Every state of a walk is kept: the states of one walk (1 / (1 - gamma) = 5 on average)
    # are correlated, which at most multiplies the variance by that length.
    inflation = 1 / (1 - mdp.gamma) if every_state else 1
    assert np.all(np.abs(freq - d) <= Z * np.sqrt(inflation * d * (1 - d) / n) + 1e-12)
    per_state = mdp.gamma if every_state else mdp.gamma / (1 - mdp.gamma)
    assert abs(count / 60_000 - per_state) < 0.05 * per_state
    if every_state:
        assert abs(n - 60_000) < 0.05 * 60_000


def test_q_rollout_counts_are_exact(mdp):
    sampler = ModelSampler(FiniteMDPVectorEnv(mdp))
    S, A, rng = mdp.n_states, mdp.n_actions, np.random.default_rng(0)
    for kind, target in policies(mdp).items():
        for crn in (False, True):
            out = sampler.q_rollouts(target, np.arange(S), rng, 3, 9, crn)
            # first action + 3 policies + the terminal step (state rewards) for "finite"
            length = {"finite": 5, "empty": 2}.get(kind, 9)
            assert out.count == S * A * 3 * length == out.steps.sum(), (kind, crn)


@pytest.mark.parametrize("kind", ["uniform", "deterministic", "mixture"])
def test_compiled_walks_equal_their_numpy_fallback_and_visit_d_b_nu(kind):
    """The walk kernel (nsrl.greedy.sampling.walks): both backends give the same transitions,
    bit for bit, and the states visited by uniform-action walks follow d_{b,nu}."""
    from nsrl.greedy.sampling import walks
    from nsrl.greedy.sampling.common import Plan

    mdp = nsrl.garnet(30, 3, 3, seed=2)
    pi = nsrl.Deterministic(np.random.default_rng(0).integers(0, 3, 30))
    behaviour = {"uniform": None, "deterministic": pi,
                 "mixture": nsrl.Mixture([(0.4, pi), (0.6, nsrl.constant(2))])}[kind]
    program = None
    if behaviour is not None:
        actions, cdf = Plan(behaviour, False).tables(0, mdp)
        program = ((actions, np.zeros((1, 1)), False) if actions is not None
                   else (np.zeros(30, dtype=np.int64), cdf, True))
    args = (mdp, 20_011, 37)
    fast = walks.walk(*args, np.random.default_rng(5), program, 0.3, backend="numba")
    slow = walks.walk(*args, np.random.default_rng(5), program, 0.3, backend="numpy")
    for x, y in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(fast[2], mdp.R[fast[0], fast[1]])
    assert np.all(mdp.P[fast[0], fast[1], fast[3]] > 0)
    if kind == "uniform":  # long walks: the visit frequencies converge to d_{b,nu}
        s = walks.walk(mdp, 1_000_000, 1000, np.random.default_rng(1))[0]
        d = nsrl.occupancy(mdp, nsrl.Stochastic(np.full((30, 3), 1 / 3)))
        np.testing.assert_allclose(np.bincount(s, minlength=30) / s.size, d, atol=3e-3)
