"""The exact methods for v*, by name: one seam, as QuantEcon's ``DiscreteDP.solve(method=)``.

Each method computes v* with a certified bound ``|v - v*|_inf <= bound`` (a recomputed
Bellman residual, :mod:`nsrl.exact.optimal`), or raises
:class:`~nsrl.exact.iterative.NotCertifiedError`:

* ``"dense"``: exact policy iteration, each evaluation a dense LU (small models; the numbers
  of every earlier release, bit for bit);
* ``"mpi"``: modified policy iteration, compiled (needs numba), O(S A b) memory;
* ``"pi"``: policy iteration whose evaluations are certified iterative solves, O(S A b);
* ``"auto"`` (default): ``"dense"`` up to :data:`nsrl.exact.dense.DENSE_MAX_STATES`
  states, ``"mpi"`` above (``"pi"`` without numba).

:func:`nsrl.optimal_value` returns v* as a :class:`CertifiedValue`: an array that carries its
certificate (``.bound``) and the method that produced it (``.method``). A method of your own
is one :func:`register_exact_method` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from nsrl.exact import transform
from nsrl.exact.dense import DENSE_MAX_STATES
from nsrl.exact.optimal import Evaluate, optimal_dense, optimal_modified, optimal_pi
from nsrl.model.kernels import HAVE_NUMBA
from nsrl.model.mdp import FiniteMDP
from nsrl.plugins import BUILT_IN, origin
from nsrl.registry import Entry, Registry

AUTO = "auto"


class CertifiedValue(np.ndarray):
    """v*, an array of ``n_states`` values with its certificate (read-only).

    Attributes:
        bound: ``|v - v*|_inf <= bound`` (certified; it holds for every entry, and so for any
            slice).
        method: the exact method that produced it (e.g. ``"dense"``, ``"mpi"``).

    Arithmetic on it gives plain arrays (the certificate describes v itself, not its
    transforms).
    """

    bound: float
    method: str

    def __new__(cls, values: np.ndarray, bound: float, method: str) -> CertifiedValue:
        """``values`` (read-only) with their certified ``bound`` and ``method``."""
        out = np.asarray(values, dtype=np.float64).view(cls)
        out.bound, out.method = float(bound), method
        out.flags.writeable = False
        return out

    def __array_finalize__(self, obj: Any) -> None:
        self.bound = getattr(obj, "bound", float("nan"))
        self.method = getattr(obj, "method", "")

    def __array_wrap__(self, array: Any, context: Any = None,
                       return_scalar: bool = False) -> Any:
        result = np.asarray(array)
        return result[()] if return_scalar else result

    def __reduce__(self) -> tuple:
        return CertifiedValue, (np.asarray(self), self.bound, self.method)


@dataclass(frozen=True)
class ExactMethodEntry(Entry):
    """One exact method: ``factory(mdp, tol, evaluate) -> (v, bound)``.

    Attributes:
        available: ``available() -> bool``: whether it can run in this installation.
    """

    available: Callable[[], bool] = lambda: True

    kind = "exact"


EXACT: Registry[ExactMethodEntry] = Registry("exact", "nsrl.exact.methods.register_exact_method")


def register_exact_method(name: str, method: Callable[..., tuple[np.ndarray, float]], *,
                          summary: str = "", available: Callable[[], bool] = lambda: True,
                          replace: bool = False) -> ExactMethodEntry:
    """Register ``method(mdp, tol, evaluate) -> (v, bound)`` under ``name``.

    ``bound`` must certify ``|v - v*|_inf <= bound <= tol`` (else raise
    :class:`~nsrl.exact.iterative.NotCertifiedError`); ``evaluate(actions, tol)`` is the exact
    backend's certified evaluation of a deterministic policy, for methods that iterate on
    policies.
    """
    if not isinstance(name, str) or not name or name != name.strip().lower() or name == AUTO:
        raise ValueError(f"an exact method's name should be lower-case, without spaces and "
                         f"not {AUTO!r}, got {name!r}.")
    return EXACT.register(ExactMethodEntry(name, method, summary=summary, available=available),
                          replace=replace)


def method_for(mdp: FiniteMDP, method: str = AUTO) -> ExactMethodEntry:
    """The entry ``method`` names on ``mdp`` (``"auto"``: by size and installation).

    Raises:
        ValueError: an unknown method, or one that cannot run here (numba missing).
    """
    if method == AUTO:
        method = "dense" if mdp.n_states <= DENSE_MAX_STATES else "mpi" if HAVE_NUMBA else "pi"
    entry = EXACT.lookup(method)
    if not entry.available():
        raise ValueError(f"the exact method {entry.name!r} cannot run in this installation "
                         f"(its dependency is missing); use method='auto'.")
    return entry


def solve(mdp: FiniteMDP, method: str, tol: float, evaluate: Evaluate,
          evaluate_on: Callable[[FiniteMDP], Evaluate]) -> CertifiedValue:
    """v* of ``mdp`` by ``method``, certified to ``tol`` (what the exact backend calls).

    Where rewards are tiny or huge, or gamma so close to 1 that rounding nears the
    certificate, the method runs on an equivalent model with scaled and shifted rewards
    (:mod:`nsrl.exact.transform`) and v* is mapped back with its bound. ``evaluate_on(model)``
    gives the evaluations on such a model (the backend passes a backend of its own: this
    module does not import the backend, which imports it).
    """
    entry = method_for(mdp, method)
    fn = entry.resolve()

    def run(model: FiniteMDP, tol: float) -> tuple[np.ndarray, float]:
        return fn(model, tol, evaluate if model is mdp else evaluate_on(model))

    v, bound = transform.solve(mdp, tol, run)
    return CertifiedValue(v, bound, entry.name)


with origin(BUILT_IN):
    register_exact_method("dense", optimal_dense,
                          summary="policy iteration, each evaluation a dense LU (small models)")
    register_exact_method("mpi", optimal_modified, available=lambda: HAVE_NUMBA,
                          summary="modified policy iteration, compiled; O(S A b) memory")
    register_exact_method("pi", optimal_pi,
                          summary="policy iteration with certified iterative evaluations")
EXACT.seal()
