"""The exact backend: values, optimal value, greedy, occupancy and loss on a finite model.

:mod:`nsrl.exact.evaluation` holds :class:`ExactBackend` and the public functions; small models
are solved by dense LU (:mod:`nsrl.exact.dense`), large ones by certified iterative solves on
the successor lists (:mod:`nsrl.exact.iterative`), both over the Bellman operators of
:mod:`nsrl.exact.operators`; v* by the method :mod:`nsrl.exact.optimal` picks (modified
policy iteration, :mod:`nsrl.exact.mpi`, above the dense size), always with a certified bound.
"""

from nsrl.exact.dense import evaluate_tables, transition_matrix
from nsrl.exact.evaluation import (
    DENSE_MAX_STATES,
    ExactBackend,
    backend,
    evaluate,
    loss,
    occupancy,
    optimal_value,
)
from nsrl.exact.iterative import NotCertifiedError, certified_solve, functional_solve
from nsrl.exact.operators import (
    apply_policy,
    bellman,
    check_mdp,
    greedy_actions,
    policy_rows,
    q_values,
)

__all__ = ["DENSE_MAX_STATES", "ExactBackend", "NotCertifiedError", "apply_policy", "backend",
           "bellman", "certified_solve", "check_mdp", "evaluate", "evaluate_tables",
           "functional_solve", "greedy_actions", "loss", "occupancy", "optimal_value",
           "policy_rows", "q_values", "transition_matrix"]
