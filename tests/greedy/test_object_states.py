"""States as objects: the sampling layer on envs whose states are not model indices.

Facts checked:
- SavedState puts MountainCar-v0 back into a saved state exactly (a deterministic env: the same
  action from the same state reaches the same next state, bit for bit);
- rollouts from tuple states equal the same episodes stepped by hand, and on MountainCar far
  from the goal a fixed-horizon return is exactly -(1 - gamma^H) / (1 - gamma);
- d_{pi,nu} walks, thinning and merging work on object states;
- policies that choose among legal actions get the env's ``info["action_mask"]`` through
  mixtures and sequences, and never play an illegal action;
- RolloutCSC learns on such an env end to end (its policy acts on observations).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from nsrl.envs import SavedState
from nsrl.greedy.base import Nu, Occupancy
from nsrl.greedy.sampling import EnvSampler, sample_states
from nsrl.greedy.sampling.common import merge_states
from nsrl.greedy.sampling.states import as_states, same_state, state_key, unique_states
from nsrl.policies import (
    Constant,
    LinearScoringPolicy,
    Mixture,
    NonStationary,
    act_masked,
    first_best,
)


def car() -> SavedState:
    return SavedState(gym.make("MountainCar-v0", max_episode_steps=10_000))


def test_saved_state_round_trip_is_exact() -> None:
    env = car()
    _, info = env.reset(seed=3)
    s = info["state"]
    assert isinstance(s, tuple) and len(s) == 2
    for a in (2, 2, 0):
        env.step(a)
    after = env.step(1)[4]["state"]
    obs, info = env.reset(options={"state": s})
    assert info["state"] == s and np.array_equal(obs, np.asarray(s, dtype=np.float32))
    for a in (2, 2, 0):
        env.step(a)
    assert env.step(1)[4]["state"] == after  # deterministic dynamics, same state: same path


def test_saved_state_refuses_a_state_of_the_wrong_shape() -> None:
    env = car()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        env.reset(options={"state": (0.1, 0.2, 0.3)})
    with pytest.raises(TypeError, match="keeps no state in .nowhere"):
        SavedState(gym.make("MountainCar-v0"), attribute="nowhere").reset(seed=0)


def test_q_rollouts_on_tuple_states_equal_episodes_by_hand() -> None:
    gamma, horizon = 0.9, 7
    sampler = EnvSampler(car(), gamma)
    states = sampler.start(3, np.random.default_rng(0))
    assert states.dtype == object and all(isinstance(s, tuple) for s in states)
    out = sampler.q_rollouts(Constant(2), states, np.random.default_rng(1), 1, horizon)
    # far from the goal from a reset (position in [-0.6, -0.4]): -1 per step, H steps
    assert np.allclose(out.returns, -(1 - gamma**horizon) / (1 - gamma), rtol=0, atol=1e-12)
    hand = car()
    for i, (s, a) in enumerate((s, a) for s in states for a in range(3)):
        hand.reset(options={"state": s})
        first = hand.step(a)[4]["state"]
        for _ in range(horizon - 1):
            end = hand.step(2)[4]["state"]
        assert out.first_states[i] == first and out.states[i] == end


def test_occupancy_walks_thin_and_merge_object_states() -> None:
    sampler = EnvSampler(car(), 0.8)
    states, count = sample_states(sampler, Occupancy(Constant(0)), 40, np.random.default_rng(2),
                                  every_state=True)
    assert states.dtype == object and count > 0 and len(states) > 0
    assert all(len(s) == 2 for s in states)
    starts, zero = sample_states(sampler, Nu(), 5, np.random.default_rng(2))
    assert zero == 0 and len(starts) == 5
    uniq, q, counts = merge_states(as_states([(0.0, 1.0), (0.5, 0.0), (0.0, 1.0)]),
                                   np.array([[1.0, 2.0], [3.0, 4.0], [3.0, 0.0]]))
    assert counts.sum() == 3 and q.shape[1] == 2 and len(uniq) == len(q)


def test_state_keys_arrays_and_tuples() -> None:
    a, b = np.array([[1, 0], [0, 1]], dtype=np.int8), np.array([[1, 0], [0, 1]], dtype=np.int8)
    assert same_state(a, b) and not same_state(a, b.astype(np.int16))
    assert state_key((a, 3)) == state_key((b, np.int64(3)))
    first, inverse = unique_states(as_states([(a, 1), (b, 1), (a, 2)]))
    assert first.tolist() == [0, 2] and inverse.tolist() == [0, 0, 1]
    assert as_states([np.int64(2), 5]).dtype == np.int64


class MaskedWalk(gym.Env):
    """A walk on a line whose states are tuples; action 0 is never legal (stepping it raises)."""

    observation_space = spaces.Box(-100.0, 100.0, (1,), np.float64)
    action_space = spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = float((options or {}).get("state", (0.0,))[0])
        return np.array([self.x]), self._info()

    def _info(self):
        return {"state": (self.x,), "action_mask": np.array([0, 1, 1], dtype=np.int8)}

    def step(self, action):
        if action == 0:
            raise ValueError("illegal action 0")
        self.x += 1.0 if action == 1 else -1.0
        return np.array([self.x]), float(self.x > 0), False, False, self._info()


def prefer(action: int) -> LinearScoringPolicy:
    """Scores action ``action`` highest, whatever the state."""
    def features(obs, mask=None):
        phi = np.zeros((len(obs), 3, 3))
        phi[:, np.arange(3), np.arange(3)] = 1.0
        legal = np.ones((len(obs), 3), bool) if mask is None else np.asarray(mask, bool)
        return phi, legal, None
    w = np.zeros(3)
    w[action] = 1.0
    return LinearScoringPolicy(features, w)


def test_masks_reach_policies_through_mixtures_and_sequences() -> None:
    obs, mask = np.zeros((4, 1)), np.tile([False, True, True], (4, 1))
    assert prefer(0).act(obs).tolist() == [0] * 4
    assert act_masked(prefer(0), obs, None, mask).tolist() == [1] * 4  # first legal of ties
    mix = Mixture([(0.5, prefer(0)), (0.5, prefer(2))])
    assert set(act_masked(mix, obs, np.random.default_rng(0), mask).tolist()) <= {1, 2}
    seq = NonStationary([prefer(0), prefer(2)], loop=True)
    assert act_masked(seq, obs, None, mask, phase=0).tolist() == [1] * 4
    sampler = EnvSampler(MaskedWalk(), 0.9)
    starts = as_states([(0.0,), (3.0,)])
    out = sampler.q_rollouts(mix, starts, np.random.default_rng(3), 2, 6)
    q = out.returns.reshape(2, 3, 2)  # (state, action, rollout)
    assert np.isnan(q[:, 0]).all() and (out.steps.reshape(2, 3, 2)[:, 0] == 0).all()
    assert np.isfinite(q[:, 1:]).all() and (out.steps.reshape(2, 3, 2)[:, 1:] == 6).all()
    with pytest.raises(ValueError, match="illegal action 0"):  # the env does refuse it
        MaskedWalk().step(0)


def test_first_best_takes_the_first_of_ties_and_skips_illegal() -> None:
    scores = np.array([[1.0, 1.0 + 1e-31, 0.5], [0.0, 2.0, 2.0], [5.0, 1.0, 1.0]])
    legal = np.array([[True, True, True], [True, True, True], [False, True, True]])
    assert first_best(scores, legal).tolist() == [0, 1, 1]


def test_rollout_csc_learns_on_a_simulator_state_with_and_without_a_critic() -> None:
    from nsrl.greedy import RolloutCSC, SoftmaxCSC

    env = SavedState(gym.make("MountainCar-v0", max_episode_steps=10_000))
    obs = np.array([[-0.5, 0.0], [-0.4, 0.01]], dtype=np.float32)
    plain = RolloutCSC(env, SoftmaxCSC(), gamma=0.9, n_states=8, horizon=5, critic=None)
    greedy = plain.greedy(Constant(1), Nu(), np.random.default_rng(0))
    assert set(greedy.policy.act(obs).tolist()) <= {0, 1, 2} and greedy.samples > 0
    # the default critic off a model: a regression on the observations, fitted on the first
    # call's estimates, ends the second call's m-step rollouts
    cbmpi = RolloutCSC(env, SoftmaxCSC(), gamma=0.9, n_states=8, horizon=5, m=2)
    first = cbmpi.greedy(Constant(1), Nu(), np.random.default_rng(1))
    second = cbmpi.greedy(first.policy, Nu(), np.random.default_rng(2))
    assert second.samples < first.samples  # m = 2 steps then the critic, not H = 5
    assert np.isfinite(second.advantage)


def test_monte_carlo_score_is_the_same_games_every_call() -> None:
    from nsrl.greedy.sampling.quality import MonteCarlo

    mc = MonteCarlo(gym.make("CartPole-v1"), games=4, seed=5)
    a, b = mc(Constant(1)), mc(Constant(1))
    assert a == b and a.games == 4 and a.ci >= 0
    returns = [mc.episode(Constant(1), i) for i in range(4)]
    assert a.mean == pytest.approx(np.mean(returns), abs=1e-12)
    with pytest.raises(ValueError, match="games should be an int >= 2"):
        MonteCarlo(gym.make("CartPole-v1"), games=1)


@pytest.mark.parametrize("scheme", ["api", "cpi", "nspi(2)"])
def test_schemes_run_on_a_simulator_with_an_estimated_score(scheme: str) -> None:
    import nsrl
    from nsrl.greedy import RolloutCSC, SoftmaxCSC
    from nsrl.greedy.sampling.quality import MonteCarlo

    def history(estimate: MonteCarlo | None) -> nsrl.History:
        env = SavedState(gym.make("MountainCar-v0", max_episode_steps=10_000))
        op = RolloutCSC(env, SoftmaxCSC(), gamma=0.9, n_states=4, horizon=3, critic=None)
        return nsrl.run(scheme, op, 2, rng=np.random.default_rng(0), estimate=estimate)

    mc = MonteCarlo(gym.make("MountainCar-v0"), games=2, max_steps=20, seed=1)
    with_score, without = history(mc), history(None)
    assert np.isnan(with_score.losses).all()  # no model: no exact loss
    assert np.all(with_score.scores == -20.0) and with_score.games.tolist() == [2, 2]
    assert np.isnan(without.scores).all() and without.games.tolist() == [0, 0]
    # the estimate draws nothing from the run's Generator: the same run, sample for sample
    assert with_score.samples.tolist() == without.samples.tolist()
