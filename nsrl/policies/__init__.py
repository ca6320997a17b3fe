"""Policies: deterministic, mixtures, and non-stationary (finite sequence or periodic loop).

Every policy can

* act in a simulator: ``policy.act(obs, phase=0, rng=None) -> actions`` for a batch of
  observations (``phase`` is the time step since the start, used by non-stationary policies;
  ``rng`` draws the component of a mixture);
* be tabulated on a finite model: ``policy.table(mdp) -> pi[s, a]`` for stationary policies,
  ``policy.tables(mdp) -> pi[i, s, a]`` for non-stationary ones (phase i);
* say how many deterministic stationary policies it stores: ``policy.memory``.

A *stationary deterministic* policy is any object with ``act``, ``table``, ``memory == 1``
and ``stochastic = False``: :class:`Deterministic` here, fitted classifiers in
:mod:`nsrl.greedy`. Sequences are written as in the paper: ``sigma_k = pi_k pi_{k-1} ...
pi_1`` acts first with ``pi_k``, i.e. ``NonStationary([pi_k, ..., pi_1])``.
"""

from nsrl.policies.sequences import AnyPolicy, NonStationary
from nsrl.policies.stationary import (
    Constant,
    Deterministic,
    Mixture,
    Policy,
    Stochastic,
    action_table,
    constant,
    one_hot,
    stationary_table,
)

__all__ = ["AnyPolicy", "Constant", "Deterministic", "Mixture", "NonStationary", "Policy",
           "Stochastic", "action_table", "constant", "one_hot", "stationary_table"]
