"""State features for sample-based greedy operators, and policies made of fitted estimators.

A sample-based operator learns on *observations* (what the env returns), turned into a
feature matrix X by a :class:`StateFeatures` map: the Garnet's Phi or one-hot vectors for
index observations, the observation itself for vector observations, or any scikit-learn
transformer (e.g. ``RBFSampler`` for CartPole). The greedy policy it returns is an
:class:`EstimatorPolicy`: a stationary deterministic policy that wraps the fitted (cloned)
estimator, acts on observations, and is tabulated on a finite model for the exact loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nsrl.greedy.base import Estimator
from nsrl.model.mdp import FiniteMDP


class StateFeatures:
    """A map from a batch of observations to a feature matrix X, shape (n, p).

    Args:
        kind: "table" (rows of ``table`` indexed by the observation), "identity" (the
            observation itself, flattened), or "transformer".
        table: (n_states, p) array for kind "table" (Phi, or the identity for one-hot).
        transformer: a scikit-learn transformer for kind "transformer"; if it is not fitted
            yet, it is fitted once on the first batch it sees and shared afterwards
            (:func:`make_features` gives it a clone of an unfitted transformer).
    """

    def __init__(self, kind: str, table: np.ndarray | sp.csr_matrix | None = None,
                 transformer: Estimator = None) -> None:
        self.kind, self.table, self.transformer = kind, table, transformer
        self._fitted = transformer is not None and _is_fitted(transformer)

    def __repr__(self) -> str:
        return f"StateFeatures({self.kind})"

    def __call__(self, obs: npt.ArrayLike) -> np.ndarray | sp.csr_matrix:
        """Features of a batch of observations."""
        obs = np.asarray(obs)
        if self.kind == "table":
            assert self.table is not None  # kind "table" has one
            return self.table[obs.astype(np.int64)]
        x = obs.reshape(len(obs), -1).astype(np.float64)
        if self.kind == "identity":
            return x
        if not self._fitted:
            self.transformer.fit(x)
            self._fitted = True
        return np.asarray(self.transformer.transform(x), dtype=np.float64)


def _is_fitted(estimator: Estimator) -> bool:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    return True


def _index_observations(env: Any) -> bool:
    import gymnasium

    space = getattr(env, "single_observation_space", None) or env.observation_space
    return isinstance(space, gymnasium.spaces.Discrete)


# One-hot tables up to this many states are dense (np.eye: 128 MiB at 4096 states), above a
# scipy.sparse identity (O(n) memory): every consumer takes either.
DENSE_ONE_HOT_MAX = 4096


def one_hot_table(n: int) -> np.ndarray | sp.csr_matrix:
    """The one-hot feature table of n states: the identity, dense or sparse by size."""
    if n <= DENSE_ONE_HOT_MAX:
        return np.eye(n)
    import scipy.sparse as sp

    return sp.identity(n, format="csr")


def make_features(spec: object, env: Any, mdp: FiniteMDP | None) -> StateFeatures:
    """The feature map named by ``spec`` for observations of ``env``.

    Args:
        spec: None (Phi for index observations of a model with features, one-hot for index
            observations without, the observation itself otherwise), "phi", "onehot",
            "identity", an (n_states, p) array, or a scikit-learn transformer.
        env: the environment (its observation space tells index from vector observations).
        mdp: the env's finite model, or None.
    """
    index = _index_observations(env)
    if spec is None:
        spec = ("phi" if mdp is not None and mdp.features is not None else "onehot") if index \
            else "identity"
    if hasattr(spec, "transform"):
        if not _is_fitted(spec):  # fit a clone: the caller's object is left untouched
            from sklearn.base import clone

            spec = clone(spec)
        return StateFeatures("transformer", transformer=spec)
    if isinstance(spec, str):
        if spec == "identity":
            return StateFeatures("identity")
        if spec not in ("phi", "onehot"):
            raise ValueError(
                f"features should be None, 'phi', 'onehot', 'identity', an array or a "
                f"scikit-learn transformer, got {spec!r}."
            )
        if not index:
            raise ValueError(f"features={spec!r} needs state-index observations (Discrete).")
        n = int(env.single_observation_space.n if hasattr(env, "single_observation_space")
                else env.observation_space.n)
        if spec == "onehot":
            return StateFeatures("table", table=one_hot_table(n))
        if mdp is None or mdp.features is None:
            raise ValueError("features='phi' needs a model with features (e.g. nsrl.garnet).")
        return StateFeatures("table", table=np.asarray(mdp.features))
    import scipy.sparse as sp

    # scipy-stubs: issparse narrows to SparseABC, which declares none of a matrix's API
    table = (sp.csr_matrix(spec, dtype=np.float64)  # type: ignore[call-overload]
             if sp.issparse(spec) else np.asarray(spec, dtype=np.float64))
    if table.ndim != 2 or not index:
        raise ValueError(
            f"a feature array should be (n_states, p) for index observations, got shape "
            f"{table.shape}; for vector observations pass a scikit-learn transformer."
        )
    return StateFeatures("table", table=table)


class EstimatorPolicy:
    """A stationary deterministic policy given by fitted scikit-learn estimator(s).

    Args:
        features: the :class:`StateFeatures` map the estimator was trained on.
        classifier: a fitted classifier whose labels are actions, or
        regressors: one fitted regressor of Q(., a) per action (the policy is their argmax).
        constant: the action taken everywhere when the training labels had a single class.
        observe: maps state indices of a finite model to the env's observations (for
            :meth:`action_table`); the identity when None.
    """

    memory = 1
    stochastic = False

    def __init__(self, features: StateFeatures, classifier: Estimator = None,
                 regressors: list[Estimator] | None = None, constant: int | None = None,
                 observe: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.features, self.classifier, self.regressors = features, classifier, regressors
        self.constant, self.observe = constant, observe
        self._table: tuple[object, np.ndarray] | None = None

    def __repr__(self) -> str:
        inner = self.classifier if self.classifier is not None else self.regressors
        return f"EstimatorPolicy({inner if self.constant is None else self.constant})"

    def act(self, obs: npt.ArrayLike, phase: int = 0,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """Actions for a batch of observations."""
        obs = np.asarray(obs)
        if self.constant is not None:
            return np.full(len(obs), self.constant, dtype=np.int64)
        x = self.features(obs)
        if self.classifier is not None:
            return np.asarray(self.classifier.predict(x), dtype=np.int64)
        assert self.regressors is not None  # a classifier or regressors
        q = np.stack([reg.predict(x) for reg in self.regressors], axis=1)
        return np.argmax(q, axis=1)

    def action_table(self, mdp: FiniteMDP) -> np.ndarray:
        """The action in every state of ``mdp`` (computed once per model, then reused)."""
        if self._table is None or self._table[0] is not mdp:
            states = np.arange(mdp.n_states)
            obs = states if self.observe is None else self.observe(states)
            actions = self.act(obs)
            actions.flags.writeable = False
            self._table = (mdp, actions)
        return self._table[1]

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The one-hot table pi[s, a]."""
        from nsrl.policies import one_hot

        return one_hot(self.action_table(mdp), mdp.n_actions)
