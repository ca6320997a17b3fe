"""The one small interface every greedy operator implements.

A scheme asks an operator for a policy that is (approximately) greedy with respect to the
value of a *target* policy, under a distribution *rho* (Scherrer 2014, eq. defgreedy):

    result = operator.greedy(target, rho, rng)     # -> Greedy(policy, advantage, samples)
    estimate = operator.value(policy, rng)         # nu v_pi, for CPI+'s line search

``rho`` is a description, not an array, so that sample-based operators can draw states from
it: :class:`Nu` (the start distribution nu) or :class:`Occupancy` (d_{pi,nu} of a policy).
Exact operators turn it into an array with the model; sample-based ones draw from the
environment (reset distribution; geometric stopping for d_{pi,nu}).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

import numpy as np
import numpy.typing as npt

from nsrl.exact import backend
from nsrl.model.mdp import FiniteMDP
from nsrl.policies import AnyPolicy, Policy


@dataclass(frozen=True)
class Nu:
    """The start distribution nu (the MDP's start distribution, or the env's reset)."""


@dataclass(frozen=True)
class Occupancy:
    """The discounted occupancy d_{pi,nu} = (1 - gamma) nu (I - gamma P_pi)^{-1} of ``policy``."""

    policy: Policy


Rho = Nu | Occupancy | np.ndarray  # a greedy step's distribution rho

# A scikit-learn estimator or transformer: scikit-learn ships no annotations.
Estimator: TypeAlias = Any


@dataclass
class Greedy:
    """What a greedy step returns.

    Attributes:
        policy: the (approximately) greedy stationary deterministic policy pi'.
        advantage: the operator's estimate of rho (T_{pi'} v_pi - v_pi) for a stationary
            target pi, in value units (not normalised by 1 - gamma); NaN when not estimated.
        samples: environment transitions this call drew (0 for model-based operators).
    """

    policy: Policy
    advantage: float = float("nan")
    samples: int = 0


@runtime_checkable
class GreedyOperator(Protocol):
    """Anything with ``greedy(target, rho, rng)`` and ``value(policy, rng)``."""

    def greedy(self, target: AnyPolicy, rho: Rho, rng: np.random.Generator) -> Greedy:
        """An approximately greedy policy w.r.t. v_target under rho."""

    def value(self, policy: AnyPolicy, rng: np.random.Generator) -> float:
        """An estimate of nu v_policy."""


def check_operator(operator: object) -> GreedyOperator:
    """Raise TypeError unless ``operator`` implements the greedy-operator interface."""
    if not isinstance(operator, GreedyOperator):
        raise TypeError(
            f"expected a greedy operator with greedy(target, rho, rng) and value(policy, rng), "
            f"got {type(operator).__name__}; see nsrl.greedy.ExactGreedy for an example."
        )
    return operator


def policy_advantage(rho: np.ndarray, q: np.ndarray, table: np.ndarray,
                     actions: npt.ArrayLike) -> np.ndarray | float:
    """rho (Q(., pi'(.)) - sum_a pi(a|.) Q(., a)): the advantage of pi' over pi under rho.

    With q = Q_{pi}, it is rho (T_{pi'} v_pi - v_pi) (value units), what CPI's step reads
    (Kakade & Langford 2002); an operator that estimates Q passes its estimate. Works on one
    run (``q[s, a]``) or many (``q[r, s, a]``, a result per run).

    Args:
        rho: the distribution, ``[..., s]``.
        q: action values, ``[..., s, a]``.
        table: the current policy pi as a table, ``[..., s, a]``.
        actions: the new deterministic policy pi', ``[..., s]``.

    Examples:
        >>> q = np.array([[1.0, 3.0], [2.0, 0.0]])
        >>> float(policy_advantage(np.array([0.5, 0.5]), q, np.eye(2)[[0, 0]], np.array([1, 0])))
        1.0
    """
    new = np.take_along_axis(q, np.asarray(actions)[..., None], axis=-1)[..., 0]
    gain = (rho * (new - (table * q).sum(axis=-1))).sum(axis=-1)
    return float(gain) if np.ndim(gain) == 0 else gain


def rho_array(mdp: FiniteMDP, rho: Rho) -> np.ndarray:
    """The distribution ``rho`` (Nu(), Occupancy(policy) or an array) as an array on ``mdp``."""
    if isinstance(rho, Nu):
        return mdp.start
    if isinstance(rho, Occupancy):
        return backend(mdp).occupancy(rho.policy)
    arr = np.asarray(rho, dtype=np.float64)
    if arr.shape != (mdp.n_states,):
        raise TypeError(f"rho should be Nu(), Occupancy(policy) or an array, got {rho!r}.")
    return arr
