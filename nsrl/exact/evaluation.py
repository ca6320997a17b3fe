"""The exact backend: values of every policy kind, v*, d_{pi,nu} and losses, at any size.

Notation follows Scherrer (2014), section 1: ``T_pi v = r_pi + gamma P_pi v``,
``v_pi = (I - gamma P_pi)^{-1} r_pi``, ``d_{pi,nu} = (1 - gamma) nu (I - gamma P_pi)^{-1}``,
the loss of a policy is ``mu (v* - v_pi)``. Policies:

* stationary (deterministic, stochastic table, mixture): one linear solve;
* finite sequence ``sigma = pi_1 ... pi_k`` (pi_1 acts first):
  ``v_sigma = T_{pi_1} ... T_{pi_k} v_empty`` (v_empty = r for a state reward, else 0);
  a sequence built by ``prepend`` reuses its parent's value: one Bellman step;
* periodic loop ``(sigma)^inf``: the fixed point of ``T_{pi_1} ... T_{pi_m}``, i.e.
  ``v = c + M v`` with ``c = T_{pi_1} ... T_{pi_m} 0`` and ``M = gamma^m P_{pi_1} ... P_{pi_m}``.

Two methods, chosen by size (:data:`DENSE_MAX_STATES`): up to 300 states, dense LU
(:mod:`nsrl.exact.dense`; every earlier version's numbers, bit for bit); above, certified
iterative solves on the successor lists (:mod:`nsrl.exact.iterative`), O(S A b) memory,
each value within ``VALUE_RTOL * R_max / (1 - gamma)`` of the truth in max-norm (a bound
computed from the residual, stated in :mod:`nsrl.exact.iterative`). v* by the method of
:mod:`nsrl.exact.optimal` (exact policy iteration when dense, modified policy iteration
above), certified by a recomputed Bellman residual on every path.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nsrl.exact import dense, methods
from nsrl.exact.dense import DENSE_MAX_STATES
from nsrl.exact.iterative import (
    OCCUPANCY_TOL,
    VALUE_RTOL,
    certified_solve,
    functional_solve,
)
from nsrl.exact.operators import apply_policy, check_certifiable, check_mdp, policy_rows
from nsrl.model.kernels import HAVE_NUMBA
from nsrl.model.mdp import FiniteMDP, check_distribution
from nsrl.policies import (
    AnyPolicy,
    Deterministic,
    NonStationary,
    Policy,
    action_table,
    stationary_table,
)

__all__ = ["DENSE_MAX_STATES", "ExactBackend", "backend", "evaluate", "loss", "occupancy",
           "optimal_value"]


class ExactBackend:
    """Exact computations on one MDP, remembering the values of recently seen policies.

    Schemes evaluate the same policy several times in one iteration (as the greedy target,
    as the output whose loss is recorded; CPI+ scores up to ~30 candidate steps, one of
    which is the next target); the backend keeps the last values so that each policy is
    solved once. Policies are immutable, so identity is a safe key.

    Attributes:
        dense: whether this model is solved by dense LU (n_S <= DENSE_MAX_STATES).
        value_tol: the certified max-norm error of every iterative value.
        value_tol: also the tolerance v* is certified to (:meth:`optimal_value`, whose result
            carries its bound).

    Raises:
        ValueError: gamma above :data:`nsrl.exact.operators.GAMMA_MAX` or rewards whose
            values overflow (:func:`nsrl.exact.operators.check_certifiable`), before any work.
    """

    def __init__(self, mdp: FiniteMDP, memo_size: int = 32) -> None:
        self._mdp: FiniteMDP | None = check_certifiable(mdp)
        self._mdp_ref: weakref.ref[FiniteMDP] | None = None
        self._memo: OrderedDict[int, tuple[object, np.ndarray]] = OrderedDict()
        self._memo_size = memo_size
        self._v_star: dict[str, methods.CertifiedValue] = {}  # by method
        self.dense = mdp.n_states <= DENSE_MAX_STATES
        self.value_tol = VALUE_RTOL * max(mdp.r_max, 1e-300) / (1.0 - mdp.gamma)
        self._warm: np.ndarray | None = None  # last stationary value: the next solve's start
        # last loop value per loop length: T_pi of it starts the next loop's solve (NSPI(m)
        # shifts its loop by one policy per iteration, so the two values are close)
        self._warm_loop: dict[int, np.ndarray] = {}
        # Once a value needed the ILU(0) step (a slow-mixing chain), later ones start with it:
        # the plain BiCGSTAB attempt would run to its cap again on every policy.
        self._ilu_first = {"value": False}
        # Values of deterministic policies by sweeps (compiled) until they lose once.
        self._sweeps_win = HAVE_NUMBA

    @property
    def mdp(self) -> FiniteMDP:
        """The model (held weakly by a backend that :func:`backend` made)."""
        mdp = self._mdp if self._mdp_ref is None else self._mdp_ref()
        if mdp is None:
            raise ReferenceError(
                "the MDP of this backend has been freed: keep a reference to the MDP while "
                "you use nsrl.exact.backend(mdp), or build ExactBackend(mdp), which keeps it."
            )
        return mdp

    def _hold_weakly(self) -> None:
        # The shared backends are keyed weakly by their model; a strong reference back from
        # the value would keep every model (and its values, v* and memo of policies: hundreds
        # of MB at 10^5 states) alive for the life of the process.
        assert self._mdp is not None
        self._mdp_ref, self._mdp = weakref.ref(self._mdp), None

    def value(self, policy: AnyPolicy) -> np.ndarray:
        """v_pi of any policy kind (see the module docstring)."""
        hit = self._memo.get(id(policy))
        if hit is not None and hit[0] is policy:
            self._memo.move_to_end(id(policy))
            return hit[1]
        v = self._compute(policy)
        v.flags.writeable = False
        self._memo[id(policy)] = (policy, v)
        if len(self._memo) > self._memo_size:
            self._memo.popitem(last=False)
        return v

    def _compute(self, policy: AnyPolicy) -> np.ndarray:
        mdp = self.mdp
        if isinstance(policy, NonStationary):
            if policy.loop:
                return self._loop_value(policy)
            if policy.parent is not None:
                return apply_policy(mdp, policy.policies[0], self.value(policy.parent))
            v = np.array(mdp.terminal_value)
            for pi, count in reversed(policy.segments):
                v = self._repeat(pi, count, v)
            return v
        if getattr(policy, "stochastic", False):
            if self.dense:
                return dense.evaluate_tables(mdp, policy.table(mdp))
            return self._stationary(policy)
        if hasattr(policy, "act"):
            if self.dense:
                return dense.evaluate_actions(mdp, action_table(policy, mdp))
            return self._stationary(policy)
        raise TypeError(
            f"cannot evaluate a {type(policy).__name__}: expected a nsrl policy "
            f"(Deterministic, Stochastic, Mixture, NonStationary) or an object with act()."
        )

    # -- large models -------------------------------------------------------------------

    def _stationary(self, pi: Policy, tol: float | None = None) -> np.ndarray:
        """v_pi by a certified iterative solve (or the exact map solve at b = 1)."""
        mdp, g = self.mdp, self.mdp.gamma
        tol = self.value_tol if tol is None else tol
        deterministic = not getattr(pi, "stochastic", False)
        if mdp.branching == 1 and deterministic:
            s = np.arange(mdp.n_states)
            a = action_table(pi, mdp)
            v = functional_solve(mdp.successors[0][s, a, 0], mdp.R[s, a], g)
        elif deterministic and self._sweeps_win and (swept := self._swept(pi, tol)) is not None:
            v = swept
        else:
            P_pi, r_pi = policy_rows(mdp, pi)
            P_pi.data *= g
            v = self._solve("value", P_pi, r_pi, g, tol, x0=self._warm,
                            what=f"the value of a policy on {mdp!r}")
        self._warm = v
        return v

    def _swept(self, pi: Policy, tol: float) -> np.ndarray | None:
        """v_pi by MPI's sweeps (:func:`nsrl.exact.mpi.policy_value`), warm-started, or None.

        Once the sweeps hand over (a slow-mixing chain), this backend stops trying them: its
        later policies mix alike, and each try would cost :data:`nsrl.exact.mpi._SWEEPS`.
        """
        from nsrl.exact.mpi import policy_value

        out = policy_value(self.mdp, action_table(pi, self.mdp), tol, v0=self._warm)
        if out is None:
            self._sweeps_win = False
            return None
        return out[0]

    def _solve(self, kind: str, M: sp.csr_matrix | Callable[[np.ndarray], np.ndarray],
               c: np.ndarray, kappa: float, tol: float, **kwargs: Any) -> np.ndarray:
        """certified_solve, starting with ILU(0) once this kind of solve has needed it."""
        report: dict = {}
        x, _ = certified_solve(M, c, kappa, tol, report=report,
                               precondition="first" if self._ilu_first[kind] else True,
                               **kwargs)
        self._ilu_first[kind] = self._ilu_first[kind] or report.get("preconditioned", False)
        return x

    def _repeat(self, pi: Policy, count: int, c: np.ndarray) -> np.ndarray:
        """T_pi^count c.

        Large models: T_pi^j c = v_pi + (gamma P_pi)^j (c - v_pi), and the last term is below
        the value tolerance once gamma^j |c - v_pi| is.
        """
        if self.dense:
            return dense.repeat(self.mdp, pi, count, c)[0]
        if count > 16:
            v_pi = self.value(pi)
            if self.mdp.gamma ** count * np.abs(c - v_pi).max() <= self.value_tol:
                return np.array(v_pi)
        for _ in range(count):
            c = apply_policy(self.mdp, pi, c)
        return c

    def _loop_value(self, policy: NonStationary) -> np.ndarray:
        mdp, g = self.mdp, self.mdp.gamma
        if self.dense:
            c, M = np.zeros(mdp.n_states), np.eye(mdp.n_states)
            for pi, count in reversed(policy.segments):
                c, M = dense.repeat(mdp, pi, count, c, M)
            return np.linalg.solve(np.eye(mdp.n_states) - M, c)
        if len(policy.segments) == 1:  # (pi^j)^inf is pi
            return np.array(self.value(policy.segments[0][0]))
        c = np.zeros(mdp.n_states)
        for pi, count in reversed(policy.segments):
            c = self._repeat(pi, count, c)
        length = sum(count for _, count in policy.segments)
        kappa = g ** length
        if kappa * mdp.r_max / (1.0 - g) <= self.value_tol:  # |M v| <= kappa |v|: v = c
            return c
        deterministic = not any(getattr(pi, "stochastic", False) for pi, _ in policy.segments)
        if mdp.branching == 1 and deterministic:
            F = np.arange(mdp.n_states)
            nxt = mdp.successors[0][:, :, 0]
            for pi, count in policy.segments:  # pi_1 acts first: F = f_m o ... o f_1
                f = nxt[np.arange(mdp.n_states), action_table(pi, mdp)]
                for _ in range(count):
                    F = f[F]
            return functional_solve(F, c, kappa)
        rows = [(policy_rows(mdp, pi)[0], count) for pi, count in policy.segments]

        def apply_M(x: np.ndarray) -> np.ndarray:
            for P_pi, count in reversed(rows):
                for _ in range(count):
                    x = g * (P_pi @ x)
            return x

        last = self._warm_loop.get(length)
        # (pi, sigma) after sigma = (..., pi'): v of the new loop is T_pi of the old one but
        # for terms of order kappa; any start is safe, the certificate is on the residual.
        x0 = None if last is None else apply_policy(mdp, policy.segments[0][0], last)
        v = certified_solve(apply_M, c, kappa, self.value_tol, x0=x0,
                            what=f"a loop of {length} policies on {mdp!r}")[0]
        self._warm_loop[length] = v
        return v

    # -- public ---------------------------------------------------------------------------

    def optimal_value(self, method: str = "auto") -> methods.CertifiedValue:
        """v* by the exact method ``method`` (:mod:`nsrl.exact.methods`), with its bound."""
        if method not in self._v_star:
            self._v_star[method] = methods.solve(
                self.mdp, method, self.value_tol, self._evaluate_actions,
                lambda model: ExactBackend(model)._evaluate_actions)
        return self._v_star[method]

    def _evaluate_actions(self, actions: np.ndarray, tol: float) -> np.ndarray:
        return self._stationary(Deterministic(actions), tol)

    @property
    def v_star_bound(self) -> float | None:
        """Deprecated: the bound is ``optimal_value().bound`` now (None before any v*)."""
        import warnings

        from nsrl.params import user_stacklevel

        warnings.warn("ExactBackend.v_star_bound is deprecated and will be removed in the next "
                      "release; read nsrl.optimal_value(mdp).bound.", DeprecationWarning,
                      stacklevel=user_stacklevel())
        return self._v_star["auto"].bound if "auto" in self._v_star else None

    def occupancy(self, policy: AnyPolicy, nu: npt.ArrayLike | None = None) -> np.ndarray:
        """d_{pi,nu} = (1 - gamma) nu (I - gamma P_pi)^{-1} for a stationary policy."""
        mdp = self.mdp
        nu = mdp.start if nu is None else check_distribution("nu", nu, mdp.n_states)
        if isinstance(policy, NonStationary):
            raise TypeError("occupancy() is defined here for stationary policies only.")
        if self.dense:
            P_pi = dense.transition_matrix(mdp, stationary_table(policy, mdp))
            d = np.linalg.solve((np.eye(mdp.n_states) - mdp.gamma * P_pi).T, nu)
            d = (1.0 - mdp.gamma) * d
        else:
            P_T = policy_rows(mdp, policy)[0].T.tocsr()
            P_T.data *= mdp.gamma
            # Not _solve: starting an occupancy with ILU(0) was measured 10x slower on the car.
            d, _ = certified_solve(P_T, (1.0 - mdp.gamma) * nu, mdp.gamma, OCCUPANCY_TOL,
                                   order=1, what=f"an occupancy d_(pi,nu) on {mdp!r}")
        return np.clip(d, 0.0, None) / np.clip(d, 0.0, None).sum()

    def loss(self, policy: AnyPolicy, mu: npt.ArrayLike | None = None) -> float:
        """mu (v* - v_pi), mu uniform unless given."""
        mdp = self.mdp
        mu = (
            np.full(mdp.n_states, 1.0 / mdp.n_states)
            if mu is None
            else check_distribution("mu", mu, mdp.n_states)
        )
        return float(mu @ (self.optimal_value() - self.value(policy)))


_BACKENDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def backend(mdp: FiniteMDP) -> ExactBackend:
    """The shared ExactBackend of ``mdp`` (one per MDP object, so v* is computed once).

    It holds ``mdp`` weakly and goes with it: keep the MDP while you use the backend.
    """
    check_mdp(mdp)
    b = _BACKENDS.get(mdp)
    if b is None:
        b = _BACKENDS[mdp] = ExactBackend(mdp)
        b._hold_weakly()  # freed with its model
    return b


def evaluate(mdp: FiniteMDP, policy: AnyPolicy) -> np.ndarray:
    """The exact value v_pi of any policy on ``mdp``.

    Examples:
        >>> import nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> v = nsrl.evaluate(mdp, nsrl.Deterministic([0] * 20))
        >>> v.shape
        (20,)
    """
    return backend(mdp).value(policy)


def optimal_value(mdp: FiniteMDP, method: str = "auto") -> methods.CertifiedValue:
    """The optimal value v* of ``mdp`` with its certificate, by a registered exact method.

    Args:
        mdp: the model.
        method: ``"auto"`` (by size: dense LU up to DENSE_MAX_STATES states, modified policy
            iteration above), or a registered method (``nsrl.registered("exact")``: ``"dense"``,
            ``"mpi"``, ``"pi"``).

    Returns:
        v* as an array that also carries ``.bound`` (certified ``|v - v*|_inf <= bound``) and
        ``.method``.

    Examples:
        >>> import nsrl
        >>> v = nsrl.optimal_value(nsrl.garnet(20, 2, 2, seed=0))
        >>> v.method, bool(v.bound <= 1e-8)
        ('dense', True)
        >>> v2 = nsrl.optimal_value(nsrl.garnet(20, 2, 2, seed=0), method="mpi")
        >>> bool(abs(v2 - v).max() <= v.bound + v2.bound)
        True
    """
    return backend(mdp).optimal_value(method)


def occupancy(mdp: FiniteMDP, policy: AnyPolicy, nu: npt.ArrayLike | None = None) -> np.ndarray:
    """d_{pi,nu}, nu = the MDP's start distribution (uniform unless given)."""
    return backend(mdp).occupancy(policy, nu)


def loss(mdp: FiniteMDP, policy: AnyPolicy, mu: npt.ArrayLike | None = None) -> float:
    """The loss mu (v* - v_pi) of any policy, mu uniform unless given.

    Examples:
        >>> import nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> nsrl.loss(mdp, nsrl.Deterministic(nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp))))
        0.0
    """
    return backend(mdp).loss(policy, mu)
