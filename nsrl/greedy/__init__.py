"""Greedy operators: exact, the paper's noisy projection, and sample-based ones.

The sample-based operators (RolloutCSC, RolloutRegression, LSTDQ) and SoftmaxCSC, LSTD-Q's
TransitionStore and the feature maps of coordinates (TileCoding, RBFGrid) load lazily, so that
``import nsrl`` does not import scikit-learn.
"""

from typing import TYPE_CHECKING, Any

from nsrl.greedy.base import Greedy, GreedyOperator, Nu, Occupancy, check_operator
from nsrl.greedy.model_based import ExactGreedy, ProjectedGreedy

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from nsrl.greedy.critic import ExactCritic, RegressionCritic
    from nsrl.greedy.csc import SoftmaxCSC
    from nsrl.greedy.feature_maps import (
        RBFGrid,
        TileCoding,
        coordinate_features,
        make_feature_map,
    )
    from nsrl.greedy.features import EstimatorPolicy
    from nsrl.greedy.lstdq import LSTDQ
    from nsrl.greedy.qpolicy import QTablePolicy
    from nsrl.greedy.rollout import RolloutCSC, RolloutRegression
    from nsrl.greedy.transitions import TransitionStore

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
    "SoftmaxCSC",
    "TileCoding",
    "TransitionStore",
    "check_operator",
    "coordinate_features",
    "make_feature_map",
]

_LAZY = {
    "RolloutCSC": "nsrl.greedy.rollout",
    "RolloutRegression": "nsrl.greedy.rollout",
    "SoftmaxCSC": "nsrl.greedy.csc",
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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nsrl.greedy' has no attribute {name!r}")
