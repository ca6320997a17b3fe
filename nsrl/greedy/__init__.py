"""Greedy operators: exact, the paper's noisy projection, and sample-based ones.

The sample-based operators (RolloutCSC, RolloutRegression, LSTDQ) and LSTD-Q's
TransitionStore load lazily, so that
``import nsrl`` does not import scikit-learn.
"""

from nsrl.greedy.base import Greedy, GreedyOperator, Nu, Occupancy, check_operator
from nsrl.greedy.model_based import ExactGreedy, ProjectedGreedy

__all__ = [
    "EstimatorPolicy",
    "ExactCritic",
    "ExactGreedy",
    "Greedy",
    "GreedyOperator",
    "LSTDQ",
    "Nu",
    "Occupancy",
    "ProjectedGreedy",
    "QTablePolicy",
    "RegressionCritic",
    "RolloutCSC",
    "RolloutRegression",
    "TransitionStore",
    "check_operator",
]

_LAZY = {
    "RolloutCSC": "nsrl.greedy.rollout",
    "RolloutRegression": "nsrl.greedy.rollout",
    "LSTDQ": "nsrl.greedy.lstdq",
    "TransitionStore": "nsrl.greedy.transitions",
    "QTablePolicy": "nsrl.greedy.qpolicy",
    "EstimatorPolicy": "nsrl.greedy.features",
    "ExactCritic": "nsrl.greedy.critic",
    "RegressionCritic": "nsrl.greedy.critic",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nsrl.greedy' has no attribute {name!r}")
