"""Rollout greedy operators: cost-sensitive classification and Q regression.

At each call (Lagoudakis & Parr 2003; Lazaric, Ghavamzadeh & Munos 2010; CBMPI, Scherrer et
al. 2015; paper, section 1):

1. draw N states from rho: nu (the env's reset distribution) or d_{pi,nu} (geometric
   stopping, for the CPI family), stratified by default (``nsrl.greedy.sampling``);
2. in each state, K rollouts per action a estimate ``Q_target(s, a)``, the actions of a
   state driven by common random numbers (``crn``). Once a critic has data (every call but
   the first), a rollout is m transitions long and ends with ``gamma^m V_hat(s_m)``, V_hat
   the value of the target's tail estimated from earlier calls' data (CBMPI;
   :mod:`nsrl.greedy.critic`); otherwise it has the ``horizon`` H (fixed, or "geometric"
   for an unbiased estimate). A finite sequence shorter than m runs to its end;
3. average the estimates of repeated states (the reduction below is not linear in Q), then
   fit a scikit-learn estimator, cloned at each call, on the state features:

   * :class:`RolloutCSC`: a classifier, through the **weighted all-pairs label** reduction
     of cost-sensitive classification: state s gives one example per action a, labelled a,
     with weight ``w(s, a) = sum_b (Q(s, a) - Q(s, b))^+`` (the all-pairs weights gathered by
     label) times the number of times s was drawn. A classifier that minimises the weighted
     error predicts ``argmax_a w(s, a)``, which is ``argmax_a Q(s, a)`` because w is
     strictly increasing in Q(s, a); choosing c instead of the best action costs at least
     ``Q(s, a*) - Q(s, c)`` in weighted error, so the weighted error bounds the greedy
     regret. With two actions it is the usual classification weighted by
     ``|Q(s, 0) - Q(s, 1)|``. Weights are rescaled to sum to the number of (draw, label)
     examples, as without the merging (a regularised classifier keeps its data scale).
   * :class:`RolloutRegression`: one regressor of ``Q(., a)`` per action; the policy is the
     argmax of their predictions.

The returned policy is an :class:`~nsrl.greedy.features.EstimatorPolicy`. ``Greedy.advantage``
is the rollout estimate of ``rho (T_{pi'} v_pi - v_pi)``: the mean over the sampled states of
``Q(s, pi'(s)) - sum_a pi(a|s) Q(s, a)``. ``value(policy, rng)`` estimates ``nu v_pi`` by
H-step rollouts from nu (CPI+'s line search); the candidates compared between two greedy
calls share their random numbers. ``samples_used`` counts every transition drawn, greedy
steps and value estimates alike (the critic draws none: it reuses the calls' data).

The defaults (``DEFAULTS``: m = 1 with the LSTD critic on a finite model, H = 30 for the
first call, one rollout per state and action, CRN, stratified states, every state of the
d_{pi,nu} walks) were chosen by the study of ``benchmarks/study_rollouts.py``
(docs/rollout_study.md): m = 1 had the lowest final loss of API and PSDP at every budget
tried (3 000 to 50 000 transitions per call) on Garnet(50, 4, 2).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.linear_model import LinearRegression
from sklearn.utils.validation import has_fit_parameter

from nsrl.greedy.base import Estimator, Greedy, Occupancy, Rho
from nsrl.greedy.critic import Record, fit_weighted, make_critic, tail
from nsrl.greedy.csc import SoftmaxCSC
from nsrl.greedy.features import EstimatorPolicy, StateFeatures, make_features
from nsrl.greedy.sampling import action_probs, make_sampler, sample_states
from nsrl.greedy.sampling.common import Rollouts, dense_indices, merge_states
from nsrl.model.memory import check_memory
from nsrl.policies import AnyPolicy, NonStationary

#: Defaults of the rollout operators, from benchmarks/study_rollouts.py (critic="auto":
#: "lstd" on a finite model, else LinearRegression() on the critic features).
# Feature matrices of at least SPARSE_SIZE entries with at most SPARSE_DENSITY of them
# non-zero reach the classifier as CSR (below that size scipy.sparse's per-product overhead
# outweighs the saving: measured with LogisticRegression on one-hot states, Garnet(50, 5)).
SPARSE_DENSITY = 0.1
SPARSE_SIZE = 100_000
DEFAULTS = {"m": 1, "horizon": 30, "n_rollouts": 1, "critic": "auto"}
# Bytes of one greedy call per (state, action, rollout) drawn: returns, steps, end states,
# the critic's first transitions, the label weights (tracemalloc on Garnets, 4 and 10
# actions: 95 to 330), with a margin.
BYTES_PER_ROLLOUT = 400
_DEFAULT = object()


def _is(test: Callable[[Estimator], object], estimator: Estimator) -> bool:
    try:  # recent scikit-learn raises on objects that are not estimators at all
        return bool(test(estimator))
    except (AttributeError, TypeError):
        return False


def _check_int(name: str, value: object, hint: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise ValueError(f"{name} should be an int >= 1, got {value!r}; {hint}")
    return int(value)


def label_weights(q: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The weighted all-pairs labels as a matrix: ``out[s, a]``, the weight of s labelled a.

    ``w(s, a) = sum_b (Q(s, a) - Q(s, b))^+`` times the draws of s, rescaled so that the
    weights sum to the number of (draw, label) examples with a positive weight (module
    docstring); where every state is a tie, the argmax of Q with the draws as weights.

    Examples:
        >>> label_weights(np.array([[1.0, 0.0, 0.0], [2.0, 2.0, 2.0]]), np.array([1.0, 3.0]))
        array([[1., 0., 0.],
               [0., 0., 0.]])
    """
    w = np.clip(q[:, :, None] - q[:, None, :], 0.0, None).sum(axis=2) * counts[:, None]
    if not np.any(w > 0):  # every sampled state is a tie: plain labels
        w = np.zeros(q.shape)
        w[np.arange(len(q)), np.argmax(q, axis=1)] = counts
    return w * (float(counts @ np.count_nonzero(w > 0, axis=1)) / w.sum())


class _RolloutOperator:
    """Sampling, budget, critic and bookkeeping shared by the two rollout operators."""

    def __init__(self, env: Any, estimator: Estimator, *, budget: int | None = None,
                 n_states: int | None = None, n_rollouts: Any = _DEFAULT, horizon: Any = _DEFAULT,
                 m: Any = _DEFAULT, critic: object = "auto", critic_features: Any = _DEFAULT,
                 crn: bool = True, stratified: bool = True, every_state: bool = True,
                 features: object = None, value_rollouts: int | None = None,
                 gamma: float | None = None) -> None:
        self.sampler = make_sampler(env, gamma)
        self.gamma, self.n_actions = self.sampler.gamma, self.sampler.n_actions
        if self.sampler.mdp is not None:
            self.mdp = self.sampler.mdp
        self.estimator = self._check_estimator(estimator)
        self.features = make_features(features, env, self.sampler.mdp)
        self.horizon = self._check_horizon(DEFAULTS["horizon"] if horizon is _DEFAULT
                                           else horizon)
        self.m = _check_int("m", DEFAULTS["m"] if m is _DEFAULT else m,
                            "m is the rollout length before the critic's bootstrap "
                            "gamma^m V(s_m) (m=1: one transition, then the critic).")
        self.n_rollouts = _check_int("n_rollouts", DEFAULTS["n_rollouts"] if n_rollouts is
                                     _DEFAULT else n_rollouts, "e.g. n_rollouts=1.")
        if isinstance(critic, str) and critic == "auto":
            critic = "lstd" if self.sampler.mdp is not None else LinearRegression()
        self.critic = make_critic(critic, self._critic_features(critic_features, env),
                                  self.sampler, memory=self.m + 16)
        self.crn, self.stratified = bool(crn), bool(stratified)
        self.every_state = bool(every_state)
        if (budget is None) == (n_states is None):
            raise ValueError("give exactly one of budget= (transitions per call) or n_states=.")
        per_state = self.n_actions * self.n_rollouts * max(
            self._length(None, bootstrap=False), self._length(None, bootstrap=True))
        if budget is not None and budget < per_state:
            raise ValueError(
                f"budget={budget} transitions is too small for one state with {self.n_rollouts}"
                f" rollout(s) per action: {self.n_actions} actions x {self.n_rollouts} x "
                f"{per_state / self.n_actions / self.n_rollouts:g} expected transitions = "
                f"{per_state:g}; raise the budget, or lower n_rollouts, horizon or m."
            )
        if n_states is not None:
            _check_int("n_states", n_states, "the number of states drawn per greedy call.")
        self.budget, self.n_states = budget, n_states
        self.value_rollouts = value_rollouts
        self._check_memory()
        self.samples_used = 0
        self._value_seed: int | None = None

    def _check_estimator(self, estimator: Estimator) -> Estimator:
        raise NotImplementedError

    def _check_memory(self) -> None:
        """Refuse a budget whose greedy calls cannot fit in memory, before any allocation.

        A call draws at most budget / (n_actions n_rollouts) states (rollouts of one
        transition: m = 1, or a sequence that ends at once), each with its row of features.
        """
        states = self.n_states or (self.budget or 0) // (self.n_actions * self.n_rollouts)
        table = self.features.table
        per_row = 0 if table is None else (12 * table.nnz // max(table.shape[0], 1) + 8
                                           if sparse.issparse(table) else 8 * table.shape[1])
        need = states * (self.n_actions * self.n_rollouts * BYTES_PER_ROLLOUT + per_row)
        given = f"n_states={self.n_states}" if self.n_states else f"budget={self.budget}"
        check_memory(need, f"{type(self).__name__}({given}), up to {states:,} states per "
                           f"greedy call,", "lower the budget (transitions per greedy call) "
                           "or n_states")

    def fit(self, x: np.ndarray | sparse.csr_matrix, q: np.ndarray,
            counts: np.ndarray | None = None) -> EstimatorPolicy:
        """The greedy policy learned from Q estimates ``q`` at features ``x``."""
        raise NotImplementedError

    def _critic_features(self, spec: object, env: Any) -> StateFeatures:
        """One-hot for state-index observations (a tabular critic), else the features."""
        if spec is _DEFAULT:
            try:
                return make_features("onehot", env, self.sampler.mdp)
            except ValueError:  # vector observations: the operator's own features
                return self.features
        return self.features if spec is None else make_features(spec, env, self.sampler.mdp)

    @staticmethod
    def _check_horizon(horizon: object) -> int | None:
        if horizon == "geometric":
            return None
        if horizon is None:
            raise ValueError("horizon=None is ambiguous: pass horizon='geometric' for the "
                             "unbiased geometric horizon (high variance at gamma near 1), or "
                             "an int H for H-step rollouts.")
        return _check_int("horizon", horizon, "or 'geometric'.")

    def _schedule(self, target: AnyPolicy) -> tuple[int | None, AnyPolicy | None]:
        """(rollout length or None for geometric, tail to bootstrap from or None)."""
        if self.critic is not None:
            rest = tail(target, self.m)
            if rest is not None and self.critic.ready(rest):
                return self.m, rest
        return self.horizon, None

    def _length(self, target: AnyPolicy | None, bootstrap: bool | None = None) -> float:
        """Expected transitions of one rollout following ``target``."""
        length: float | None
        if bootstrap is None and target is not None:
            length, _ = self._schedule(target)
        else:
            length = self.m if bootstrap else self.horizon
        length = length if length is not None else 1.0 / (1.0 - self.gamma)
        if isinstance(target, NonStationary) and not target.loop:
            length = min(length, len(target) + 1 + int(self.sampler.state_reward))
        return float(length)

    def states_per_call(self, target: AnyPolicy, rho: Rho) -> int:
        """N: the states a greedy call draws (from ``budget``, or ``n_states``)."""
        if self.n_states is not None:
            return self.n_states
        cost = self.n_actions * self.n_rollouts * self._length(target)
        walk = self.gamma / (1.0 - self.gamma)  # expected transitions of one walk
        assert self.budget is not None  # exactly one of budget and n_states is set
        if not isinstance(rho, Occupancy):
            return max(1, int(self.budget // cost))
        if not self.every_state:  # one walk per state
            return max(1, int(self.budget // (cost + walk)))
        # ceil(N (1 - gamma)) walks, each state of them costing one transition
        return max(1, int((self.budget - walk) // (cost + self.gamma)))

    def q_estimates(self, target: AnyPolicy, states: np.ndarray,
                    rng: np.random.Generator) -> tuple[np.ndarray, int, tuple | None]:
        """Q_target(s, a) for each state, shape (N, n_actions), and the transitions drawn.

        Also returns the first transitions ``(s, a, r, s')`` of the rollouts (the LSTD
        critic's data; None when the sampler does not report them).
        """
        n, A, K = len(states), self.n_actions, self.n_rollouts
        horizon, rest = self._schedule(target)
        out = self.sampler.q_rollouts(target, states, rng, K, horizon, self.crn)
        returns = out.returns
        # truncated at m (not ended, not terminated): bootstrap
        if rest is not None and horizon is not None:
            cut = np.flatnonzero(out.steps == horizon)
            returns[cut] += self.gamma**horizon * self._values(rest, out, cut, rng)
        first = None
        if out.first_states is not None:
            first = (np.repeat(np.asarray(states), A * K), np.tile(np.repeat(np.arange(A), K), n),
                     out.first_rewards, np.asarray(out.first_states))
        return returns.reshape(n, A, K).mean(axis=2), out.count, first

    def _values(self, rest: AnyPolicy, out: Rollouts, cut: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
        """The critic at the end states ``out.states[cut]``, once per distinct state."""
        critic, ends = self.critic, out.states[cut]
        assert critic is not None  # called once the critic is ready (see _schedule)
        if out.obs is None and dense_indices(ends):
            present = np.flatnonzero(np.bincount(ends))
            table = np.zeros(present[-1] + 1)
            table[present] = critic.values(rest, present, self.sampler.observe(present), rng)
            return table[ends]
        obs = self.sampler.observe(ends) if out.obs is None else out.obs[cut]
        values = critic.values(rest, ends, obs, rng)
        assert values is not None  # a ready critic has data
        return values

    def _baseline(self, target: AnyPolicy, states: np.ndarray, obs: np.ndarray, q: np.ndarray,
                  rng: np.random.Generator) -> np.ndarray:
        """sum_a pi(a|s) Q(s, a) for a stationary target (NaN for a non-stationary one)."""
        if isinstance(target, NonStationary):
            return np.full(len(states), np.nan)
        return (action_probs(self.sampler, target, states, obs, rng) * q).sum(axis=1)

    def greedy(self, target: AnyPolicy, rho: Rho, rng: np.random.Generator) -> Greedy:
        """An approximately greedy policy w.r.t. v_target, learned from rollouts under rho."""
        states, walk = sample_states(self.sampler, rho, self.states_per_call(target, rho), rng,
                                     self.stratified, self.every_state)
        q, count, first = self.q_estimates(target, states, rng)
        uniq, q_mean, counts = merge_states(states, q)
        obs = self.sampler.observe(uniq)
        policy = self.fit(self.features(obs), q_mean, counts)
        chosen = q_mean[np.arange(len(uniq)), policy.act(obs)]
        base = self._baseline(target, uniq, obs, q_mean, rng)
        advantage = float(np.average(chosen - base, weights=counts))
        if self.critic is not None:
            self.critic.record(Record(target, policy, uniq, obs, q_mean, counts, first))
        self.samples_used += walk + count
        self._value_seed = int(rng.integers(2**63))  # CRN for the value() calls that follow
        return Greedy(policy, advantage, walk + count)

    def value(self, policy: AnyPolicy, rng: np.random.Generator) -> float:
        """Rollout estimate of nu v_policy (CPI+'s line search); its samples are counted.

        Every call between two greedy calls uses the same random numbers (start states,
        uniforms), so the candidates of a line search are compared with common random
        numbers.
        """
        if self._value_seed is None:
            self._value_seed = int(rng.integers(2**63))
        crn = np.random.default_rng(self._value_seed)
        length = self._length(policy, bootstrap=False)
        n = self.value_rollouts or (self.n_states * self.n_rollouts if self.n_states else
                                    max(1, int((self.budget or 0) // (self.n_actions * length))))
        returns, count = self.sampler.from_start(policy, n, crn, self.horizon, self.stratified)
        self.samples_used += count
        return float(returns.mean())

    def _policy(self, **kwargs: Any) -> EstimatorPolicy:
        return EstimatorPolicy(self.features, observe=self.sampler.observe, **kwargs)


class RolloutCSC(_RolloutOperator):
    """Rollouts + cost-sensitive classification (weighted all-pairs labels, see module).

    Args:
        env: a Gymnasium env: the native vector env (fast path) or any env with
            ``reset(options={"state": s})`` (generic path).
        classifier: any scikit-learn classifier whose ``fit`` takes ``sample_weight``
            (fitted on one weighted row per state and label), or a
            :class:`~nsrl.greedy.csc.SoftmaxCSC` (fitted on one row per state with the
            weights as soft labels, the same objective as ``LogisticRegression``'s; the
            registry's ``rollout-csc`` default), warm-started from the previous call's fit.
        budget: transitions per greedy call (sets the number of states N), or
        n_states: N directly.
        n_rollouts: K rollouts per state and action (default ``DEFAULTS["n_rollouts"]``).
        horizon: H, the rollout length when there is no critic value to end on (no critic,
            the first call): an int (discounted H-step return, bias at most
            ``gamma^H V_max``) or "geometric" (unbiased, high variance).
        m: rollout length before the critic's bootstrap ``gamma^m V_hat(s_m)`` (CBMPI).
        critic: what ends the m-step rollouts (:mod:`nsrl.greedy.critic`): "lstd" (LSTD(0)
            with one-hot features on the previous call's transitions, for stationary
            tails; needs a finite model), a scikit-learn regressor fitted on the previous
            calls' Q estimates (:class:`~nsrl.greedy.critic.RegressionCritic`), an
            :class:`~nsrl.greedy.critic.ExactCritic`, or None (plain H-step rollouts).
            Default "auto": "lstd" on a finite model, else ``LinearRegression()``.
        critic_features: the regression critic's features (default: one-hot for
            state-index observations, a tabular critic; else ``features``).
        crn: common random numbers across the actions of a state.
        stratified: stratified draws of the states (see ``nsrl.greedy.sampling``).
        features: see :func:`nsrl.greedy.features.make_features`.
        value_rollouts: rollouts per ``value`` call (default: budget / (n_actions H)).
        gamma: discount, for an env without a model.

    Examples:
        >>> import numpy as np, nsrl
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from nsrl.envs import FiniteMDPVectorEnv
        >>> env = FiniteMDPVectorEnv(nsrl.garnet(20, 2, 2, seed=0), num_envs=1)
        >>> op = RolloutCSC(env, DecisionTreeClassifier(), n_states=20, horizon=50, m=5)
        >>> g = op.greedy(nsrl.constant(), nsrl.Nu(), np.random.default_rng(0))
        >>> g.samples == op.samples_used == 20 * 2 * 50   # first call: no critic yet
        True
        >>> op.greedy(g.policy, nsrl.Nu(), np.random.default_rng(1)).samples == 20 * 2 * 5
        True
    """

    _sparse = True  # set to False once the classifier has refused sparse input
    _previous: SoftmaxCSC | None = None  # the last call's fit (SoftmaxCSC's warm start)

    def _check_estimator(self, estimator: Estimator) -> Estimator:
        if not _is(is_classifier, estimator):
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

    def fit(self, x: np.ndarray | sparse.csr_matrix, q: np.ndarray,
            counts: np.ndarray | None = None) -> EstimatorPolicy:
        """Weighted all-pairs labels from Q estimates, then a clone of the classifier.

        ``counts[i]`` (default 1) is how many draws row i stands for. A
        :class:`~nsrl.greedy.csc.SoftmaxCSC` gets the weights as one row per state
        (:func:`label_weights`), any other classifier one weighted row per (state, label).
        """
        counts = np.ones(len(q)) if counts is None else np.asarray(counts, dtype=np.float64)
        if isinstance(self.estimator, SoftmaxCSC):
            return self._fit_soft(x, q, counts)
        w = np.clip(q[:, :, None] - q[:, None, :], 0.0, None).sum(axis=2)  # w[s, a]
        rows, labels = np.nonzero(w > 0)
        weights = w[rows, labels] * counts[rows]
        if rows.size == 0:  # every sampled state is a tie: plain labels
            rows, labels = np.arange(len(q)), np.argmax(q, axis=1)
            weights = counts
        if np.unique(labels).size == 1:
            return self._policy(constant=int(labels[0]))
        # Weights sum to the number of (draw, label) examples they stand for, so that a
        # regularised classifier sees the data size it would without the merging.
        weights = weights * (counts[rows].sum() / weights.sum())
        dense = x[rows]
        design = self._sparse_design(dense)
        clf = clone(self.estimator)
        try:
            clf.fit(design, labels, sample_weight=weights)
        except (TypeError, ValueError):
            if design is dense:
                raise
            self._sparse = False  # this classifier wants dense input: give it that from now on
            clf = clone(self.estimator)
            clf.fit(dense, labels, sample_weight=weights)
        return self._policy(classifier=clf)

    def _fit_soft(self, x: np.ndarray | sparse.csr_matrix, q: np.ndarray,
                  counts: np.ndarray) -> EstimatorPolicy:
        """The same objective as the weighted rows, one row per state (SoftmaxCSC).

        With ``warm_start`` the fit starts from the previous call's coefficients.
        """
        weights = label_weights(q, counts)
        used = np.flatnonzero(weights.sum(axis=0) > 0)
        if used.size == 1:
            return self._policy(constant=int(used[0]))
        clf = clone(self.estimator)
        previous = self._previous if self.estimator.warm_start else None
        clf.fit_label_weights(self._sparse_design(x), weights, init=previous)
        self._previous = clf
        return self._policy(classifier=clf)

    def _sparse_design(self, x: np.ndarray | sparse.csr_matrix) -> np.ndarray | sparse.csr_matrix:
        """``x`` as CSR when it is large and mostly zeros (one-hot rows of many states).

        scikit-learn's linear classifiers then cost time in the non-zeros rather than the
        entries (same coefficients; docs/benchmarks.md); a classifier that refuses sparse
        input is refitted on the dense array and gets it from then on.
        """
        if isinstance(x, sparse.csr_matrix):  # a sparse feature table's rows already
            return x
        if not self._sparse or x.size < SPARSE_SIZE \
                or np.count_nonzero(x) > SPARSE_DENSITY * x.size:
            return x
        return sparse.csr_matrix(x)


class RolloutRegression(_RolloutOperator):
    """Rollouts + regression of Q(., a) with one clone of a scikit-learn regressor per action.

    Takes the same arguments as :class:`RolloutCSC`, with a ``regressor`` instead of a
    classifier (any scikit-learn regressor, Pipelines included).
    """

    def _check_estimator(self, estimator: Estimator) -> Estimator:
        if not _is(is_regressor, estimator):
            raise TypeError(
                f"RolloutRegression needs a scikit-learn regressor, got "
                f"{type(estimator).__name__}; e.g. Ridge() (for a classifier use RolloutCSC)."
            )
        return estimator

    def fit(self, x: np.ndarray | sparse.csr_matrix, q: np.ndarray,
            counts: np.ndarray | None = None) -> EstimatorPolicy:
        """One regressor per action on the Q estimates (rows weighted by ``counts``).

        Least squares on the mean of a repeated state weighted by its count has the same
        minimiser as on the repeated rows; a regressor without ``sample_weight`` gets the
        rows repeated.
        """
        regs = [fit_weighted(clone(self.estimator), x, q[:, a], counts)
                for a in range(self.n_actions)]
        return self._policy(regressors=regs)
