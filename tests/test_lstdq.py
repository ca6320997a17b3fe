"""LSTD-Q: exact on exhaustive transitions for every target kind; runs without reset-to-state."""

import gymnasium as gym
import numpy as np
import pytest
from test_sampling import CountingEnv, policies

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import LSTDQ
from nsrl.greedy.sampling import Transitions
from nsrl.policies import action_table


def exhaustive(mdp):
    """Every (s, a, s') with P > 0, weighted by P(s' | s, a): the expected LSTD system."""
    s, a, t = np.nonzero(mdp.P > 0)
    data = Transitions(s, s, a, mdp.R[s, a], t, t, np.zeros(len(s), dtype=bool))
    return data, mdp.P[s, a, t]


def action_reward_mdp():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(7), size=(7, 3))
    return nsrl.FiniteMDP(P, rng.uniform(size=(7, 3)), gamma=0.85)


@pytest.mark.parametrize("kind", ["deterministic", "mixture", "loop", "finite", "empty"])
@pytest.mark.parametrize("which", ["state reward", "action reward"])
def test_exhaustive_one_hot_lstdq_is_exact(kind, which):
    mdp = nsrl.garnet(9, 3, 2, gamma=0.9, seed=2) if which == "state reward" else \
        action_reward_mdp()
    target = policies(mdp, seed=4)[kind]
    op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=10, features="onehot", ridge=0.0)
    data, weights = exhaustive(mdp)
    theta = op.solve(target, data, np.random.default_rng(0), weights=weights)
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, target))
    np.testing.assert_allclose(theta.T, q, rtol=0, atol=1e-9)


def test_lstdq_from_samples_approaches_the_exact_greedy_policy():
    mdp = nsrl.garnet(10, 2, 2, gamma=0.8, seed=1)
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    pi = nsrl.constant(0)
    q = nsrl.q_values(mdp, nsrl.evaluate(mdp, pi))
    op = LSTDQ(env, budget=40_000, features="onehot", ridge=1e-8)
    g = op.greedy(pi, nsrl.Nu(), np.random.default_rng(0))
    assert g.samples == env.count == 40_000
    chosen = q[np.arange(10), action_table(g.policy, mdp)]
    gap = mdp.start @ (q.max(axis=1) - chosen)
    assert gap < 0.1 * mdp.start @ np.abs(q[:, 1] - q[:, 0])
    assert abs(g.advantage - mdp.start @ (chosen - q[:, 0])) < 0.1


def test_every_scheme_runs_with_lstdq():
    mdp = nsrl.garnet(20, 3, 2, seed=0)
    env = CountingEnv(FiniteMDPVectorEnv(mdp))
    op = LSTDQ(env, budget=500, value_rollouts=5)
    for name in ("api", "api(0.1)", "cpi", "cpi(0.1)", "cpi+", "psdp", "nspi(3)"):
        h = nsrl.run(nsrl.make_scheme(name), op, 3, rng=np.random.default_rng(0))
        assert np.all(np.isfinite(h.losses)), name
    assert op.samples_used == env.count


class NoResetToState(gym.Wrapper):
    """An env that refuses reset(options=...): LSTD-Q must not need it."""

    def reset(self, *, seed=None, options=None):
        if options:
            raise AssertionError("LSTD-Q asked for reset-to-state")
        return self.env.reset(seed=seed)


def test_runs_on_envs_without_reset_to_state():
    lake = NoResetToState(gym.make("FrozenLake-v1", is_slippery=True))
    op = LSTDQ(lake, budget=300, gamma=0.9)
    h = nsrl.run(nsrl.NSPI(2), op, 2, rng=np.random.default_rng(0))
    assert h.samples.tolist() == [300, 600] and np.all(np.isnan(h.losses))
    pole = NoResetToState(gym.make("CartPole-v1"))
    op = LSTDQ(pole, budget=200, gamma=0.95, value_rollouts=3)
    g = op.greedy(nsrl.constant(0), nsrl.Nu(), np.random.default_rng(0))
    assert g.policy.act(np.zeros((5, 4))).shape == (5,)
    assert op.value(g.policy, np.random.default_rng(0)) > 0


def test_refusals():
    env = FiniteMDPVectorEnv(nsrl.garnet(5, 2, 2, seed=0))
    with pytest.raises(ValueError, match="budget"):
        LSTDQ(env, budget=0)
    with pytest.raises(ValueError, match="gamma"):
        LSTDQ(gym.make("CartPole-v1"), budget=10)
    with pytest.raises(ValueError, match="needs state-index"):
        LSTDQ(gym.make("CartPole-v1"), budget=10, gamma=0.9, features="onehot")


def test_same_seeds_same_policies():
    mdp = nsrl.garnet(15, 3, 2, seed=0)

    def once(seed):
        op = LSTDQ(FiniteMDPVectorEnv(mdp), budget=600, value_rollouts=4)
        h = nsrl.run(nsrl.CPIPlus(), op, 3, rng=np.random.default_rng(seed), keep_outputs=True)
        return h.losses, h.samples

    a, b, c = once(3), once(3), once(4)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])
