"""Rollout greedy operators: cost-sensitive classification and Q regression.

At each call (Lagoudakis & Parr 2003; Lazaric, Ghavamzadeh & Munos 2010; paper, section 1):

1. draw N states from rho: nu (the env's reset distribution) or d_{pi,nu} (geometric
   stopping, for the CPI family);
2. in each state, K rollouts per action a estimate ``Q_target(s, a)`` (``nsrl.greedy.sampling``);
3. fit a scikit-learn estimator, cloned at each call, on the state features:

   * :class:`RolloutCSC`: a classifier, through the **weighted all-pairs label** reduction
     of cost-sensitive classification: state s gives one example per action a, labelled a,
     with weight ``w(s, a) = sum_b (Q(s, a) - Q(s, b))^+`` (the all-pairs weights gathered by
     label). A classifier that minimises the weighted error predicts ``argmax_a w(s, a)``,
     which is ``argmax_a Q(s, a)`` because w is strictly increasing in Q(s, a); choosing c
     instead of the best action costs at least ``Q(s, a*) - Q(s, c)`` in weighted error, so
     the weighted error bounds the greedy regret. With two actions it is the usual
     classification weighted by ``|Q(s, 0) - Q(s, 1)|``. Weights are rescaled to mean 1.
   * :class:`RolloutRegression`: one regressor of ``Q(., a)`` per action; the policy is the
     argmax of their predictions.

The returned policy is an :class:`~nsrl.greedy.features.EstimatorPolicy`. ``Greedy.advantage``
is the rollout estimate of ``rho (T_{pi'} v_pi - v_pi)``: the mean over the sampled states of
``Q(s, pi'(s)) - sum_a pi(a|s) Q(s, a)``. ``value(policy, rng)`` estimates ``nu v_pi`` by
rollouts from nu (CPI+'s line search). ``samples_used`` counts every transition drawn,
greedy steps and value estimates alike.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils.validation import has_fit_parameter

from nsrl.greedy.base import Greedy, Occupancy
from nsrl.greedy.features import EstimatorPolicy, make_features
from nsrl.greedy.sampling import action_probs, make_sampler, sample_states
from nsrl.policies import NonStationary


class _RolloutOperator:
    """Sampling, budget and bookkeeping shared by the two rollout operators."""

    def __init__(self, env, estimator, *, budget=None, n_states=None, n_rollouts=1,
                 horizon=None, features=None, value_rollouts=None, gamma=None):
        self.sampler = make_sampler(env, gamma)
        self.gamma, self.n_actions = self.sampler.gamma, self.sampler.n_actions
        if self.sampler.mdp is not None:
            self.mdp = self.sampler.mdp
        self.estimator = self._check_estimator(estimator)
        self.features = make_features(features, env, self.sampler.mdp)
        if horizon is not None and (int(horizon) != horizon or horizon < 1):
            raise ValueError(f"horizon should be a positive int or None, got {horizon!r}.")
        if int(n_rollouts) != n_rollouts or n_rollouts < 1:
            raise ValueError(f"n_rollouts should be a positive int, got {n_rollouts!r}.")
        self.horizon, self.n_rollouts = horizon, int(n_rollouts)
        if (budget is None) == (n_states is None):
            raise ValueError("give exactly one of budget= (transitions per call) or n_states=.")
        least = self.n_actions * self.n_rollouts * self._length(None)
        if budget is not None and budget < least:
            raise ValueError(
                f"budget={budget} transitions is too small for one state with {self.n_rollouts}"
                f" rollout(s) per action: {self.n_actions} actions x {self.n_rollouts} x "
                f"{self._length(None):g} expected transitions = {least:g}; raise the budget, "
                f"or lower n_rollouts or horizon."
            )
        if n_states is not None and (int(n_states) != n_states or n_states < 1):
            raise ValueError(f"n_states should be a positive int, got {n_states!r}.")
        self.budget, self.n_states = budget, n_states
        self.value_rollouts = value_rollouts
        self.samples_used = 0

    def _check_estimator(self, estimator):
        raise NotImplementedError

    def _length(self, target) -> float:
        """Expected transitions of one rollout following ``target``."""
        length = self.horizon if self.horizon is not None else 1.0 / (1.0 - self.gamma)
        if isinstance(target, NonStationary) and not target.loop:
            length = min(length, len(target) + 1 + int(self.sampler.state_reward))
        return float(length)

    def states_per_call(self, target, rho) -> int:
        """N: the states a greedy call draws (from ``budget``, or ``n_states``)."""
        if self.n_states is not None:
            return self.n_states
        cost = self.n_actions * self.n_rollouts * self._length(target)
        if isinstance(rho, Occupancy):
            cost += self.gamma / (1.0 - self.gamma)  # the walk to a d_{pi,nu} state
        return max(1, int(self.budget // cost))

    def q_estimates(self, target, states, rng) -> tuple[np.ndarray, int]:
        """Monte-Carlo Q_target(s, a) for each state, shape (N, n_actions), and the count."""
        n, A, K = len(states), self.n_actions, self.n_rollouts
        s = np.repeat(states, A * K, axis=0)
        a = np.tile(np.repeat(np.arange(A), K), n)
        returns, count = self.sampler.rollouts(target, s, a, rng, self.horizon)
        return returns.reshape(n, A, K).mean(axis=2), count

    def _baseline(self, target, states, obs, q, rng) -> np.ndarray:
        """sum_a pi(a|s) Q(s, a) for a stationary target (NaN for a non-stationary one)."""
        if isinstance(target, NonStationary):
            return np.full(len(states), np.nan)
        return (action_probs(self.sampler, target, states, obs, rng) * q).sum(axis=1)

    def greedy(self, target, rho, rng) -> Greedy:
        """An approximately greedy policy w.r.t. v_target, learned from rollouts under rho."""
        n = self.states_per_call(target, rho)
        states, walk = sample_states(self.sampler, rho, n, rng)
        q, count = self.q_estimates(target, states, rng)
        obs = self.sampler.observe(states)
        policy = self.fit(self.features(obs), q)
        chosen = q[np.arange(n), policy.act(obs)]
        advantage = float(np.mean(chosen - self._baseline(target, states, obs, q, rng)))
        self.samples_used += walk + count
        return Greedy(policy, advantage, walk + count)

    def value(self, policy, rng) -> float:
        """Rollout estimate of nu v_policy (CPI+'s line search); its samples are counted."""
        n = self.value_rollouts or self.states_per_call(policy, None) * self.n_rollouts
        returns, count = self.sampler.from_start(policy, n, rng, self.horizon)
        self.samples_used += count
        return float(returns.mean())

    def _policy(self, **kwargs) -> EstimatorPolicy:
        return EstimatorPolicy(self.features, observe=self.sampler.observe, **kwargs)


class RolloutCSC(_RolloutOperator):
    """Rollouts + cost-sensitive classification (weighted all-pairs labels, see module).

    Args:
        env: a Gymnasium env: the native vector env (fast path) or any env with
            ``reset(options={"state": s})`` (generic path).
        classifier: any scikit-learn classifier whose ``fit`` takes ``sample_weight``.
        budget: transitions per greedy call (sets the number of states N), or
        n_states: N directly.
        n_rollouts: K rollouts per state and action.
        horizon: H, or None for a geometric random horizon (unbiased Q).
        features: see :func:`nsrl.greedy.features.make_features`.
        value_rollouts: rollouts per ``value`` call (default N K).
        gamma: discount, for an env without a model.

    Examples:
        >>> import numpy as np, nsrl
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from nsrl.envs import FiniteMDPVectorEnv
        >>> env = FiniteMDPVectorEnv(nsrl.garnet(20, 2, 2, seed=0), num_envs=1)
        >>> op = RolloutCSC(env, DecisionTreeClassifier(), n_states=20, horizon=50)
        >>> g = op.greedy(nsrl.constant(), nsrl.Nu(), np.random.default_rng(0))
        >>> g.samples == op.samples_used == 20 * 2 * 50
        True
    """

    def _check_estimator(self, estimator):
        if not is_classifier(estimator):
            raise TypeError(
                f"RolloutCSC needs a scikit-learn classifier, got {type(estimator).__name__}; "
                f"e.g. LogisticRegression() or DecisionTreeClassifier() (for a regressor use "
                f"RolloutRegression)."
            )
        if not has_fit_parameter(estimator, "sample_weight"):
            raise TypeError(
                f"{type(estimator).__name__}.fit takes no sample_weight, which the cost-"
                f"sensitive reduction needs; pick a classifier that does, and pass a feature "
                f"transformer through features= rather than a Pipeline."
            )
        return estimator

    def fit(self, x: np.ndarray, q: np.ndarray) -> EstimatorPolicy:
        """Weighted all-pairs labels from Q estimates, then a clone of the classifier."""
        w = np.clip(q[:, :, None] - q[:, None, :], 0.0, None).sum(axis=2)  # w[s, a]
        rows, labels = np.nonzero(w > 0)
        weights = w[rows, labels]
        if rows.size == 0:  # every sampled state is a tie: plain labels
            rows, labels = np.arange(len(q)), np.argmax(q, axis=1)
            weights = np.ones(len(q))
        if np.unique(labels).size == 1:
            return self._policy(constant=int(labels[0]))
        clf = clone(self.estimator)
        clf.fit(x[rows], labels, sample_weight=weights / weights.mean())
        return self._policy(classifier=clf)


class RolloutRegression(_RolloutOperator):
    """Rollouts + regression of Q(., a) with one clone of a scikit-learn regressor per action.

    Takes the same arguments as :class:`RolloutCSC`, with a ``regressor`` instead of a
    classifier (any scikit-learn regressor, Pipelines included).
    """

    def _check_estimator(self, estimator):
        if not is_regressor(estimator):
            raise TypeError(
                f"RolloutRegression needs a scikit-learn regressor, got "
                f"{type(estimator).__name__}; e.g. Ridge() (for a classifier use RolloutCSC)."
            )
        return estimator

    def fit(self, x: np.ndarray, q: np.ndarray) -> EstimatorPolicy:
        """One regressor per action on the Q estimates."""
        regs = [clone(self.estimator).fit(x, q[:, a]) for a in range(self.n_actions)]
        return self._policy(regressors=regs)
