"""Policies: deterministic, mixtures, and non-stationary (finite sequence or periodic loop).

Every policy can

* act in a simulator: ``policy.act(obs, phase=0, rng=None) -> actions`` for a batch of
  observations (``phase`` is the time step since the start, used by non-stationary policies;
  ``rng`` draws the component of a mixture);
* be tabulated on a finite model: ``policy.table(mdp) -> pi[s, a]`` for stationary policies,
  ``policy.tables(mdp) -> pi[i, s, a]`` for non-stationary ones (phase i);
* say how many deterministic stationary policies it stores: ``policy.memory``.

Where no table fits (a simulator's states), :class:`LinearScoringPolicy` acts on
observations: the legal action of best score ``w . phi(s, a)``. Policies that choose among
legal actions declare ``takes_mask = True`` and receive the env's ``info["action_mask"]``
(:func:`act_masked`); mixtures and sequences forward it to their components.

A *stationary deterministic* policy is any object with ``act``, ``table``, ``memory == 1``
and ``stochastic = False``: :class:`Deterministic` here, fitted classifiers in
:mod:`nsrl.greedy`. Sequences are written as in the paper: ``sigma_k = pi_k pi_{k-1} ...
pi_1`` acts first with ``pi_k``, i.e. ``NonStationary([pi_k, ..., pi_1])``.
"""

from nsrl.policies.linear import LinearScoringPolicy, first_best
from nsrl.policies.sequences import AnyPolicy, NonStationary
from nsrl.policies.stationary import (
    Constant,
    Deterministic,
    Mixture,
    Policy,
    Stochastic,
    act_masked,
    action_table,
    constant,
    one_hot,
    stationary_table,
)

__all__ = ["AnyPolicy", "Constant", "Deterministic", "LinearScoringPolicy", "Mixture",
           "NonStationary", "Policy", "first_best",
           "Stochastic", "act_masked", "action_table", "constant", "one_hot", "stationary_table"]
