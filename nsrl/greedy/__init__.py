"""Greedy operators: exact, the paper's noisy projection, and sample-based ones.

The sample-based operators (RolloutCSC, RolloutRegression, LSTDQ), LSTD-Q's
TransitionStore and the feature maps of coordinates (TileCoding, RBFGrid) load lazily, so that
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
    "RBFGrid",
    "RegressionCritic",
    "RolloutCSC",
    "RolloutRegression",
    "TileCoding",
    "TransitionStore",
    "check_operator",
    "coordinate_features",
    "make_feature_map",
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
    "TileCoding": "nsrl.greedy.feature_maps",
    "RBFGrid": "nsrl.greedy.feature_maps",
    "make_feature_map": "nsrl.greedy.feature_maps",
    "coordinate_features": "nsrl.greedy.feature_maps",
}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nsrl.greedy' has no attribute {name!r}")
