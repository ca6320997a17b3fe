"""Concentrability coefficients of Scherrer (2014), Definition 1, computed exactly on a finite MDP.

* ``c(i)``: the smallest c with ``mu P_{pi_1} ... P_{pi_i} <= c nu`` for every sequence of
  deterministic stationary policies (``c(0) = max mu / nu``). The maximum over sequences of
  the entry ``s`` of the row vector is a backward dynamic programme on the target ``s``:
  ``w_0 = 1_s``, ``w_i(s') = max_a sum_s'' P(s''|s', a) w_{i-1}(s'')``, then
  ``c(i) = max_s mu w_i^(s) / nu(s)``. All targets are propagated at once as the columns of
  a matrix ``W_i`` (one sparse product ``P[(s, a), s''] @ W`` and a max over a per step).
  The greedy choice per state is optimal because every ``w`` is non-negative and the
  products are monotone; mixtures never do better (the maximum of a linear function).
* ``c_pi*(i)``: the same with ``P_{pi*}`` only, i.e. ``max_s (mu P_{pi*}^i)(s) / nu(s)``.
* ``C^(1,k) = (1-g) sum_i g^i c(i+k)``,
  ``C^(2,m,k) = (1-g)(1-g^m) sum_{i,j} g^(i+jm) c(i+jm+k) = (1-g)(1-g^m) sum_n (1+floor(n/m))
  g^n c(n+k)``, ``C^(1)_pi* = (1-g) sum_i g^i c_pi*(i)``, and ``C_pi* = max d_{pi*,mu} / nu``
  (exact: one linear solve).

**Truncation.** The sums are cut after ``n`` terms and the rest is bounded with

    c(j) <= cbar_n := max_s max_{s'' in R} W_n[s'', s] / nu(s)   for every j >= n,

where R is the set of states reachable from supp(mu). Proof: ``mu w_j = mu M^(j-n) w_n``
with M the max-operator above; ``(M x)(s')`` is at most the largest ``x`` among the
successors of s', so ``mu M^(j-n) w_n <= max_R w_n``. cbar_n never increases with n and is
far below the crude ``1 / min nu`` once the chain mixes. The tails are then geometric:
``C^(1,k)`` has tail ``g^(n-k) cbar_n`` and ``C^(2,m,k)`` has tail
``(1-g^m) cbar_n g^M (1 + (M(1-g) + g) / (m(1-g)))`` with ``M = n - k`` (from
``1 + floor(i/m) <= 1 + i/m``). Terms are added until every requested tail is below
``tol``; the reported constants are partial sums *plus* tail bounds, hence upper bounds that
exceed the exact values by less than ``tol``.

**Infinity** is decided exactly, not numerically: ``c(i) = inf`` iff a state with
``nu = 0`` is reachable from supp(mu) in exactly i steps (under some policy sequence for
c, under pi* for c_pi*). The sets of states reachable in exactly i steps form an eventually
periodic sequence, which is followed until it repeats, so "``c(i) = inf`` for some
``i >= k``" is known for every k.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nsrl.exact import check_mdp, greedy_actions, optimal_value
from nsrl.model.mdp import FiniteMDP, check_distribution
from nsrl.model.memory import check_memory


@dataclass(frozen=True)
class _Reach:
    """Which i have ``c(i) = inf``: ``bad[i]`` for i < len(bad), periodic from ``start`` on."""

    bad: np.ndarray
    start: int
    closure: np.ndarray  # states reachable at some time i >= 0

    def is_inf(self, i: npt.ArrayLike) -> np.ndarray:
        i = np.asarray(i)
        t, t0 = len(self.bad), self.start
        idx = np.where(i < t, i, t0 + (i - t0) % max(t - t0, 1))
        return self.bad[np.minimum(idx, t - 1)]

    def inf_after(self, k: int) -> bool:
        """True iff c(i) = inf for some i >= k (beyond len(bad), the cycle repeats forever)."""
        return bool(self.bad[k:].any() or self.bad[self.start :].any())


_REACH_CAP = 1_000_000  # steps before the reachable sets must have repeated


def _reachability(start: np.ndarray, adj: np.ndarray, forbidden: np.ndarray, cap: int) -> _Reach:
    adj_int = adj.astype(np.int64)
    x, seen, bad = start.copy(), dict[bytes, int](), list[bool]()
    closure = np.zeros_like(start)
    for i in range(cap):
        key = np.packbits(x).tobytes()
        if key in seen:
            return _Reach(np.array(bad, dtype=bool), seen[key], closure)
        seen[key] = i
        closure |= x
        bad.append(bool((x & forbidden).any()))
        x = (x.astype(np.int64) @ adj_int) > 0
    raise RuntimeError(f"the sets of reachable states did not repeat within {cap} steps.")


def _ratio_max(num: np.ndarray, nu: np.ndarray) -> float:
    """max_s num(s) / nu(s) over nu > 0 (the states with nu = 0 are handled exactly elsewhere)."""
    pos = nu > 0
    return float((num[pos] / nu[pos]).max()) if pos.any() else 0.0


def _tail_bound(num_rows: np.ndarray, nu: np.ndarray) -> float:
    """cbar = max_s max_rows W[rows, s] / nu(s), inf if mass can reach a state with nu = 0."""
    col = num_rows.max(axis=0) if num_rows.size else np.zeros(nu.shape)
    if np.any((col > 0) & (nu == 0)):
        return float("inf")
    return _ratio_max(col, nu)


def _c1_tail(gamma: float, M: int, cbar: float) -> float:
    """(1-g) cbar sum_{i>=M} g^i = g^M cbar, an upper bound on the C^(1,k) tail (M = n - k)."""
    if cbar == 0.0 or np.isinf(cbar):
        return cbar
    return gamma**M * cbar


def _c2_tail(gamma: float, m: int, M: int, cbar: float) -> float:
    """(1-g)(1-g^m) cbar sum_{i>=M} (1 + i/m) g^i, an upper bound on the C^(2,m,k) tail."""
    if cbar == 0.0 or np.isinf(cbar):
        return cbar
    g = gamma
    return (1 - g**m) * cbar * g**M * (1 + (M * (1 - g) + g) / (m * (1 - g)))


def terms_needed(gamma: float, ms: Sequence[int], tol: float, cbar: float) -> int:
    """Terms n after which every tail bound of :func:`concentrability` is below ``tol``.

    With the tail constant ``cbar`` (which only falls as terms are added), so an estimate
    from above of the terms still to compute; a large number where cbar is inf or gamma ~ 1.

    Examples:
        >>> terms_needed(0.9, (5,), 1e-4, 10.0) > terms_needed(0.9, (5,), 1e-2, 10.0)
        True
    """
    if not np.isfinite(cbar) or cbar <= 0.0 or not 0.0 < gamma < 1.0:
        return 0 if cbar == 0.0 else 10**9
    k = max(ms, default=0)
    n = k + max(1, int(np.ceil(np.log(tol / cbar) / np.log(gamma))))
    step = max(1, (n - k) // 8)
    while any(_c2_tail(gamma, m, n - k, cbar) >= tol for m in ms) and n < 10**9:
        n += step
    return n


def _extend(i: np.ndarray, head: np.ndarray, tail: float, reach: _Reach) -> np.ndarray:
    inside = head[np.minimum(i, head.size - 1)] if head.size else np.full(i.shape, tail)
    return np.where(reach.is_inf(i), np.inf, np.where(i < head.size, inside, tail))


@dataclass(frozen=True)
class Concentrability:
    """The coefficients of Definition 1 for one MDP and one pair (mu, nu).

    Attributes:
        gamma: the discount factor.
        c: ``c(0), ..., c(n-1)`` (inf where infinite).
        c_pi_star: ``c_pi*(0), ..., c_pi*(n-1)``.
        c_tail: a bound on ``c(j)`` for every ``j >= n`` (cbar_n of the module docstring).
        c_pi_star_tail: the same bound for ``c_pi*(j)``.
        C_pi_star: ``C_pi*`` (exact).
        pi_star: the optimal deterministic policy used (actions per state).
        converged: True if every requested tail was below ``tol``.
    """

    gamma: float
    c: np.ndarray
    c_pi_star: np.ndarray
    c_tail: float
    c_pi_star_tail: float
    C_pi_star: float
    pi_star: np.ndarray
    converged: bool
    _reach: _Reach
    _reach_star: _Reach

    @property
    def n_terms(self) -> int:
        """Number n of coefficients computed exactly."""
        return len(self.c)

    def c_at(self, i: npt.ArrayLike) -> np.ndarray:
        """c(i) for any i >= 0: exact below n, the tail bound (or inf, exactly) beyond."""
        return _extend(np.asarray(i), self.c, self.c_tail, self._reach)

    def c_pi_star_at(self, i: npt.ArrayLike) -> np.ndarray:
        """c_pi*(i) for any i >= 0 (exact below n, the tail bound beyond)."""
        return _extend(np.asarray(i), self.c_pi_star, self.c_pi_star_tail, self._reach_star)

    def C1(self, k: int = 0) -> float:
        """C^(1,k) = (1-gamma) sum_i gamma^i c(i+k) (an upper bound within tol)."""
        if self._reach.inf_after(k):
            return float("inf")
        g, n = self.gamma, self.n_terms
        head = self.c[k:]
        partial = (1 - g) * float(np.sum(g ** np.arange(head.size) * head))
        return partial + _c1_tail(g, max(n - k, 0), self.c_tail)

    def C2(self, m: int, k: int = 0) -> float:
        """C^(2,m,k) = (1-g)(1-g^m) sum_{i,j>=0} g^(i+jm) c(i+jm+k) (an upper bound within tol)."""
        if m < 1:
            raise ValueError(f"m should be a positive int, got {m}.")
        if self._reach.inf_after(k):
            return float("inf")
        g, n = self.gamma, self.n_terms
        head = self.c[k:]
        i = np.arange(head.size)
        partial = (1 - g) * (1 - g**m) * float(np.sum((1 + i // m) * g**i * head))
        return partial + _c2_tail(g, m, max(n - k, 0), self.c_tail)

    def C1_pi_star(self) -> float:
        """C^(1)_pi* = (1-gamma) sum_i gamma^i c_pi*(i) (an upper bound within tol)."""
        if self._reach_star.inf_after(0):
            return float("inf")
        g = self.gamma
        partial = (1 - g) * float(np.sum(g ** np.arange(self.n_terms) * self.c_pi_star))
        return partial + _c1_tail(g, self.n_terms, self.c_pi_star_tail)

    def _tails_ok(self, ms: Iterable[int], tol: float) -> bool:
        """Whether every requested constant is within tol (used while building)."""
        g, n = self.gamma, self.n_terms
        for k in {0, *ms}:
            if not self._reach.inf_after(k) and (n < k or _c1_tail(g, n - k, self.c_tail) >= tol):
                return False
        for m in ms:
            for k in {0, m}:
                if not self._reach.inf_after(k) and (
                    n < k or _c2_tail(g, m, n - k, self.c_tail) >= tol
                ):
                    return False
        star_ok = self._reach_star.inf_after(0) or _c1_tail(g, n, self.c_pi_star_tail) < tol
        return bool(star_ok)

    def summary(self, m: int) -> dict[str, float]:
        """The constants of Table 1 and Figure 2 for one m, by name."""
        return {
            "C_pi*": self.C_pi_star,
            "C(1)_pi*": self.C1_pi_star(),
            "C(1,0)": self.C1(0),
            f"C(1,{m})": self.C1(m),
            "C(2,1,0)": self.C2(1, 0),
            f"C(2,{m},0)": self.C2(m, 0),
            f"C(2,{m},{m})": self.C2(m, m),
        }


def _check_policy_actions(pi_star: object, mdp: FiniteMDP) -> np.ndarray:
    if pi_star is None:
        return greedy_actions(mdp, optimal_value(mdp))
    actions = np.asarray(getattr(pi_star, "actions", pi_star))
    if actions.shape != (mdp.n_states,) or not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(
            f"pi_star should be a Deterministic policy or an int array of shape "
            f"({mdp.n_states},), got {actions.shape} {actions.dtype}; omit it to use greedy(v*)."
        )
    return actions


def _c_pi_star_exact(mdp: FiniteMDP, P_star: np.ndarray, mu: np.ndarray, nu: np.ndarray,
                     reach_star: _Reach) -> float:
    """C_pi* = max_s d_{pi*,mu}(s) / nu(s), d = (1-g) mu (I - g P*)^{-1} (one solve)."""
    g = mdp.gamma
    d = (1 - g) * np.linalg.solve((np.eye(mdp.n_states) - g * P_star).T, mu)
    if np.any(reach_star.closure & (nu == 0)):
        return float("inf")
    return _ratio_max(np.where(reach_star.closure, d, 0.0), nu)


def concentrability_nbytes(n_states: int, n_actions: int) -> float:
    """Estimated memory of :func:`concentrability` (bytes), from the sizes alone.

    The dynamic programme keeps every target as a column: W (S x S), P W (S A x S).
    """
    return 8.0 * n_states * n_states * (n_actions + 6)


def concentrability(
    mdp: FiniteMDP,
    mu: npt.ArrayLike | None = None,
    nu: npt.ArrayLike | None = None,
    *,
    pi_star: object = None,
    m: int | Sequence[int] = (1,),
    tol: float = 1e-4,
    min_terms: int = 32,
    max_terms: int = 100_000,
    progress: Callable[[int, int], None] | None = None,
) -> Concentrability:
    """The concentrability coefficients of Definition 1 (Scherrer 2014) for (mu, nu).

    Args:
        mdp: a FiniteMDP.
        mu: the distribution of the loss (uniform unless given).
        nu: the distribution of the greedy steps (the MDP's start distribution unless given).
        pi_star: an optimal deterministic policy (default: greedy w.r.t. v*, lowest action on
            ties); any optimal policy gives valid bounds, the coefficients depend on it.
        m: the periods m for which C^(1,m), C^(2,m,0), C^(2,m,m) must be within ``tol``.
        tol: absolute accuracy of every requested constant (they are all >= 1).
        min_terms: at least this many exact terms c(0..min_terms-1) (beyond, ``c_at`` gives
            the tail bound).
        max_terms: at most this many terms; ``converged`` says whether tol was reached.
        progress: called every 8 terms as ``progress(terms_done, terms_expected)``, the
            second an estimate from the current tail bound (each term costs one sparse
            product with an S x S matrix: ``nsrl bounds`` shows it on a terminal).

    Returns:
        A :class:`Concentrability`; its constants are upper bounds (see the module docstring).

    Examples:
        >>> import nsrl
        >>> conc = concentrability(nsrl.garnet(20, 2, 5, gamma=0.9, seed=0), m=(5,))
        >>> conc.C_pi_star <= conc.C1_pi_star() <= conc.C1(0)
        True
    """
    mdp = check_mdp(mdp)
    S, A = mdp.n_states, mdp.n_actions
    mu = np.full(S, 1.0 / S) if mu is None else check_distribution("mu", mu, S)
    nu = mdp.start if nu is None else check_distribution("nu", nu, S)
    ms = tuple(int(x) for x in np.atleast_1d(m))
    if min(ms) < 1 or not (tol > 0):
        raise ValueError(f"m should hold positive ints and tol be > 0, got m={m}, tol={tol}.")
    check_memory(concentrability_nbytes(S, A), f"the concentrability coefficients of {S} states "
                 f"(O(n_S^2 n_A) memory: every state is a target of the dynamic programme)",
                 "compute them on a smaller model (they are computable up to a few thousand "
                 "states); the exact losses and run_bounds' errors need no coefficient")
    actions = _check_policy_actions(pi_star, mdp)
    P_star = mdp.P[np.arange(S), actions]
    support, forbidden = mu > 0, nu == 0
    reach = _reachability(support, np.asarray((mdp.P > 0).any(axis=1)), forbidden, _REACH_CAP)
    reach_star = _reachability(support, P_star > 0, forbidden, _REACH_CAP)
    fixed: dict[str, Any] = dict(gamma=mdp.gamma, C_pi_star=_c_pi_star_exact(mdp, P_star, mu, nu,
                                                                             reach_star),
                 pi_star=actions, _reach=reach, _reach_star=reach_star)
    P_all, P_one = sp.csr_matrix(mdp.P.reshape(S * A, S)), sp.csr_matrix(P_star)
    W, W_star = np.eye(S), np.eye(S)
    c: list[float] = []
    c_star: list[float] = []
    for i in range(max_terms + 1):
        # W = W_i (columns: targets); its rows over R bound every later c(j), j >= i.
        if i % 8 == 0 or i == max_terms:
            conc = Concentrability(
                c=np.array(c), c_pi_star=np.array(c_star), converged=False,
                c_tail=_tail_bound(W[reach.closure], nu),
                c_pi_star_tail=_tail_bound(W_star[reach_star.closure], nu), **fixed,
            )
            done = i >= min_terms and conc._tails_ok(ms, tol)
            if done or i == max_terms:
                return dataclasses.replace(conc, converged=done)
            if progress is not None:
                progress(i, min(max_terms, max(min_terms, terms_needed(
                    mdp.gamma, ms, tol, max(conc.c_tail, conc.c_pi_star_tail)))))
        c.append(np.inf if reach.is_inf(i) else _ratio_max(mu @ W, nu))
        c_star.append(np.inf if reach_star.is_inf(i) else _ratio_max(mu @ W_star, nu))
        W = (P_all @ W).reshape(S, A, S).max(axis=1)
        W_star = P_one @ W_star
    raise AssertionError("unreachable: the loop returns at i == max_terms")
