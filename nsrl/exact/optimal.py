"""The exact methods for v*, each returning it with a certified max-norm bound.

* up to ``DENSE_MAX_STATES`` states: exact policy iteration, each evaluation a dense LU (the
  numbers of every earlier version, bit for bit), then the certificate of the result from its
  recomputed Bellman residual, ``|v - v*|_inf <= (|T v - v|_inf + delta) / (1 - gamma)``
  (delta bounds the rounding of the residual: :func:`nsrl.exact.operators.residual_rounding`);
  0 only if both are 0;
* above, with numba: modified policy iteration (:mod:`nsrl.exact.mpi`), certified by the
  same recomputed residual;
* above, without numba: policy iteration whose evaluations are certified iterative solves
  (:mod:`nsrl.exact.iterative`), each asked 1/10 of the current Bellman residual.

Every method is ``method(mdp, tol, evaluate) -> (v, bound)`` with ``bound <= tol`` or raises
:class:`nsrl.exact.iterative.NotCertifiedError`; ``evaluate(actions, tol) -> v`` is the
caller's certified evaluation of a deterministic policy (the exact backend's, warm-started),
which policy iteration uses. :mod:`nsrl.exact.methods` registers them by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import numpy as np

from nsrl.exact import dense
from nsrl.exact.iterative import NotCertifiedError
from nsrl.exact.operators import q_values, residual_rounding
from nsrl.model.mdp import FiniteMDP

# evaluate(actions, tol) -> the value of the deterministic policy ``actions``, certified to tol
Evaluate = Callable[[np.ndarray, float], np.ndarray]

MAX_PI_ITERATIONS = 10_000
_EVAL_FRACTION = 10  # PI (no numba) evaluates to 1/10 of the current Bellman residual


def _refuse(mdp: FiniteMDP, bound: float, tol: float, method: str) -> NoReturn:
    raise NotCertifiedError(
        f"{method} on {mdp!r} stopped at a certified error of {bound:.3g} on v*, above the "
        f"tolerance {tol:.3g} (values of scale R_max / (1 - gamma) = "
        f"{mdp.r_max / (1 - mdp.gamma):.3g}); try another exact method "
        f"(nsrl.optimal_value(mdp, method='mpi' or 'pi')) or a smaller gamma."
    )


def optimal_dense(mdp: FiniteMDP, tol: float,
                  evaluate: Evaluate | None = None) -> tuple[np.ndarray, float]:
    """Exact policy iteration by dense LU, then the residual certificate of its result.

    An action is improved when its q beats the current one's by ``1e-12 max(R_max, 1) /
    (1 - gamma)`` (every earlier version's threshold, so their numbers stay bit for bit).
    That threshold can exceed the residual a certificate needs (gamma near 1, or R_max far
    below 1: rewards near 1e-50 stopped at once, issue 47); then policy iteration goes on
    from the policy reached with a threshold of 4 times the rounding of a q
    (:func:`nsrl.exact.operators.residual_rounding`), and only then refuses.
    """
    actions = np.argmax(q_values(mdp, mdp.terminal_value), axis=1)
    v, actions, residual = _policy_iteration(
        mdp, actions, lambda v: 1e-12 * max(mdp.r_max, 1.0) / (1.0 - mdp.gamma))
    bound = (residual + residual_rounding(mdp, v)) / (1.0 - mdp.gamma)
    if not bound <= tol:
        v, actions, residual = _policy_iteration(mdp, actions,
                                                 lambda v: 4 * residual_rounding(mdp, v))
        bound = (residual + residual_rounding(mdp, v)) / (1.0 - mdp.gamma)
    if not bound <= tol:
        _refuse(mdp, bound, tol, "policy iteration (dense)")
    return v, bound


def _policy_iteration(mdp: FiniteMDP, actions: np.ndarray,
                      threshold: Callable[[np.ndarray], float]
                      ) -> tuple[np.ndarray, np.ndarray, float]:
    """Policy iteration by dense LU from ``actions``: (v, actions, Bellman residual of v).

    A state changes action when the best q beats its current one by ``threshold(v)``.
    """
    s = np.arange(mdp.n_states)
    for _ in range(MAX_PI_ITERATIONS):
        v = dense.evaluate_actions(mdp, actions)
        q = q_values(mdp, v)
        best = np.argmax(q, axis=1)
        improve = q[s, best] > q[s, actions] + threshold(v)
        if not improve.any():
            break
        actions = np.where(improve, best, actions)
    return v, actions, float(np.abs(q[s, best] - v).max())


def optimal_modified(mdp: FiniteMDP, tol: float,
                     evaluate: Evaluate | None = None) -> tuple[np.ndarray, float]:
    """v* by modified policy iteration, compiled (:mod:`nsrl.exact.mpi`; needs numba)."""
    from nsrl.exact.mpi import optimal_mpi

    v, bound, _ = optimal_mpi(mdp, tol)
    return v, bound


def optimal_pi(mdp: FiniteMDP, tol: float, evaluate: Evaluate) -> tuple[np.ndarray, float]:
    """Policy iteration with inexact, warm-started evaluations (the caller's ``evaluate``).

    Each evaluation asks a tolerance of 1/10 of the current Bellman residual (never below
    the final one), so early ones are cheap; PI stops when the Bellman residual certifies
    ``|v - v*|_inf <= (|T v - v|_inf + delta) / (1 - gamma) <= tol``.
    """
    n = np.arange(mdp.n_states)
    target = tol * (1.0 - mdp.gamma)  # Bellman residual to reach
    actions = np.argmax(q_values(mdp, mdp.terminal_value), axis=1)
    residual = previous = np.inf
    for _ in range(MAX_PI_ITERATIONS):
        eval_tol = max(min(previous / _EVAL_FRACTION, mdp.r_max / (1 - mdp.gamma)), target / 2)
        v = evaluate(actions, eval_tol / (1 - mdp.gamma))
        q = q_values(mdp, v)
        best = np.argmax(q, axis=1)
        residual = float(np.abs(q[n, best] - v).max()) + residual_rounding(mdp, v)
        if residual <= target:
            return v, residual / (1.0 - mdp.gamma)
        improve = q[n, best] > q[n, actions] + target / 2
        previous = residual
        if not improve.any() and eval_tol <= target / 2:
            break
        actions = np.where(improve, best, actions)
    _refuse(mdp, residual / (1.0 - mdp.gamma), tol, "policy iteration")
