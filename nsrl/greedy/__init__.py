"""Greedy operators: exact, the paper's noisy projection, and (later) sample-based ones."""

from nsrl.greedy.base import Greedy, GreedyOperator, Nu, Occupancy, check_operator
from nsrl.greedy.exact import ExactGreedy, ProjectedGreedy

__all__ = [
    "ExactGreedy",
    "Greedy",
    "GreedyOperator",
    "Nu",
    "Occupancy",
    "ProjectedGreedy",
    "check_operator",
]
