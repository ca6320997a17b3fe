"""The exact backend: values, optimal value, greedy, occupancy and loss on a finite model.

Notation follows Scherrer (2014), section 1: ``T_pi v = r_pi + gamma P_pi v``,
``v_pi = (I - gamma P_pi)^{-1} r_pi``, ``d_{pi,nu} = (1 - gamma) nu (I - gamma P_pi)^{-1}``,
the loss of a policy is ``mu (v* - v_pi)``.

Every policy kind is evaluated exactly:

* stationary (deterministic, stochastic table, mixture): one linear solve;
* finite sequence ``sigma = pi_1 ... pi_k`` (pi_1 acts first):
  ``v_sigma = T_{pi_1} ... T_{pi_k} v_empty`` (v_empty = r for a state reward, else 0);
  a sequence built by ``prepend`` reuses its parent's value: one Bellman step;
* periodic loop ``(sigma)^inf``: the fixed point of ``T_{pi_1} ... T_{pi_m}``, i.e.
  ``v = c + M v`` with ``c = T_{pi_1} ... T_{pi_m} 0`` and ``M = gamma^m P_{pi_1} ... P_{pi_m}``.

Linear systems are solved with LAPACK (``numpy.linalg.solve``); ``I - gamma P_pi`` has
condition number at most (1 + gamma) / (1 - gamma), 2e3 at gamma = 0.999, so float64 keeps
about 12 correct digits there.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np

from nsrl.model.mdp import FiniteMDP, check_distribution
from nsrl.policies import NonStationary, action_table, stationary_table


def check_mdp(mdp) -> FiniteMDP:
    """Raise TypeError unless ``mdp`` is a FiniteMDP."""
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(
            f"expected a nsrl.FiniteMDP, got {type(mdp).__name__}; build one with "
            f"nsrl.garnet(...) or nsrl.FiniteMDP(P, R, gamma)."
        )
    return mdp


def q_values(mdp: FiniteMDP, v: np.ndarray) -> np.ndarray:
    """Q[s, a] = R[s, a] + gamma sum_s' P[s, a, s'] v[s'] (sparse successors)."""
    nxt, probs = mdp.successors
    return mdp.R + mdp.gamma * (probs * v[nxt]).sum(axis=-1)


def greedy_actions(mdp: FiniteMDP, v: np.ndarray) -> np.ndarray:
    """A greedy policy w.r.t. ``v`` (T_pi v = T v); ties go to the lowest action index."""
    return np.argmax(q_values(mdp, v), axis=1)


def bellman(mdp: FiniteMDP, table: np.ndarray, v: np.ndarray) -> np.ndarray:
    """T_pi v for a table pi[s, a] (or for a batch of tables pi[..., s, a])."""
    return (table * q_values(mdp, v)).sum(axis=-1)


def transition_matrix(mdp: FiniteMDP, table: np.ndarray) -> np.ndarray:
    """P_pi[s, s'] = sum_a pi[s, a] P[s, a, s'] (batched over leading axes of ``table``).

    Built from the sparse successors by one weighted ``bincount``: O(S A b) work per table
    instead of the O(S^2 A) of a dense contraction.
    """
    nxt, probs = mdp.successors
    n = mdp.n_states
    table = np.asarray(table, dtype=np.float64)
    batch = table.shape[:-2]
    weights = table[..., None] * probs  # [..., s, a, j]
    flat = np.arange(n)[:, None, None] * n + nxt  # index of (s, s') in the S x S matrix
    offsets = np.arange(int(np.prod(batch, dtype=np.int64))).reshape(batch + (1, 1, 1)) * n * n
    counts = np.bincount(
        (flat + offsets).ravel(),
        weights.ravel(),
        minlength=weights.size and int(np.prod(batch, dtype=np.int64)) * n * n,
    )
    return counts.reshape(batch + (n, n))


def evaluate_tables(mdp: FiniteMDP, tables: np.ndarray) -> np.ndarray:
    """Values v_pi of a batch of stationary tables pi[..., s, a] (one batched LU solve)."""
    tables = np.asarray(tables, dtype=np.float64)
    r_pi = (tables * mdp.R).sum(axis=-1)
    A = np.eye(mdp.n_states) - mdp.gamma * transition_matrix(mdp, tables)
    return np.linalg.solve(A, r_pi[..., None])[..., 0]


def _evaluate_actions(mdp: FiniteMDP, actions: np.ndarray) -> np.ndarray:
    s = np.arange(mdp.n_states)
    A = np.eye(mdp.n_states) - mdp.gamma * mdp.P[s, actions]
    return np.linalg.solve(A, mdp.R[s, actions])


def _apply(mdp: FiniteMDP, pi, v: np.ndarray) -> np.ndarray:
    """T_pi v for any stationary policy object."""
    if getattr(pi, "stochastic", False):
        return bellman(mdp, pi.table(mdp), v)
    q = q_values(mdp, v)
    return q[np.arange(mdp.n_states), action_table(pi, mdp)]


def _propagate(mdp: FiniteMDP, pi, M: np.ndarray) -> np.ndarray:
    """gamma P_pi M for a matrix M[s', j] (sparse successors)."""
    nxt, probs = mdp.successors
    if getattr(pi, "stochastic", False):
        w = pi.table(mdp)[:, :, None] * probs  # [s, a, j]
        return mdp.gamma * np.einsum("saj,sajk->sk", w, M[nxt])
    a = action_table(pi, mdp)
    s = np.arange(mdp.n_states)
    return mdp.gamma * np.einsum("sj,sjk->sk", probs[s, a], M[nxt[s, a]])


# A policy repeated more than this many times in a row is applied in closed form.
_REPEAT_BY_POWERS = 16


def _repeat(mdp: FiniteMDP, pi, count: int, c: np.ndarray, M: np.ndarray | None = None):
    """(T_pi^count c, (gamma P_pi)^count M): ``count`` applications of one stationary policy.

    Up to a few repeats, one Bellman step (and sparse propagation) at a time. Beyond, in
    closed form with G = gamma P_pi and v_pi = (I - G)^{-1} r_pi:
    T_pi^j c = G^j c + (I - G^j) v_pi, G^j by repeated squaring: O(n^3 log j) whatever j
    (NSPI(m)'s start holds m copies of pi_0, for any m).
    """
    if count <= _REPEAT_BY_POWERS:
        for _ in range(count):
            c = _apply(mdp, pi, c)
            M = None if M is None else _propagate(mdp, pi, M)
        return c, M
    table = stationary_table(pi, mdp)
    G = mdp.gamma * transition_matrix(mdp, table)
    v_pi = evaluate_tables(mdp, table)
    power, base, j = np.eye(mdp.n_states), G, count
    while j:
        if j & 1:
            power = power @ base
        j >>= 1
        if j:
            base = base @ base
    c = power @ c + v_pi - power @ v_pi
    return c, None if M is None else power @ M


class ExactBackend:
    """Exact computations on one MDP, remembering the values of recently seen policies.

    Schemes evaluate the same policy several times in one iteration (as the greedy target,
    as the output whose loss is recorded; CPI+ scores up to ~30 candidate steps, one of
    which is the next target); the backend keeps the last values so that each policy is
    solved once. Policies are immutable, so identity is a safe key.
    """

    def __init__(self, mdp: FiniteMDP, memo_size: int = 32):
        self.mdp = check_mdp(mdp)
        self._memo: OrderedDict[int, tuple[object, np.ndarray]] = OrderedDict()
        self._memo_size = memo_size
        self._v_star: np.ndarray | None = None

    def value(self, policy) -> np.ndarray:
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

    def _compute(self, policy) -> np.ndarray:
        mdp = self.mdp
        if isinstance(policy, NonStationary):
            if policy.loop:
                return self._loop_value(policy)
            if policy.parent is not None:
                return _apply(mdp, policy.policies[0], self.value(policy.parent))
            v = np.array(mdp.terminal_value)
            for pi, count in reversed(policy.segments):
                v = _repeat(mdp, pi, count, v)[0]
            return v
        if getattr(policy, "stochastic", False):
            return evaluate_tables(mdp, policy.table(mdp))
        if hasattr(policy, "act"):
            return _evaluate_actions(mdp, action_table(policy, mdp))
        raise TypeError(
            f"cannot evaluate a {type(policy).__name__}: expected a nsrl policy "
            f"(Deterministic, Stochastic, Mixture, NonStationary) or an object with act()."
        )

    def _loop_value(self, policy: NonStationary) -> np.ndarray:
        mdp = self.mdp
        c = np.zeros(mdp.n_states)
        M = np.eye(mdp.n_states)
        for pi, count in reversed(policy.segments):
            c, M = _repeat(mdp, pi, count, c, M)
        return np.linalg.solve(np.eye(mdp.n_states) - M, c)

    def optimal_value(self) -> np.ndarray:
        """v* by exact policy iteration (finitely many steps; cached)."""
        if self._v_star is None:
            mdp = self.mdp
            actions = greedy_actions(mdp, mdp.terminal_value)
            tol = 1e-12 * max(mdp.r_max, 1.0) / (1.0 - mdp.gamma)
            for _ in range(10_000):
                v = _evaluate_actions(mdp, actions)
                q = q_values(mdp, v)
                current = q[np.arange(mdp.n_states), actions]
                best = np.argmax(q, axis=1)
                improve = q[np.arange(mdp.n_states), best] > current + tol
                if not improve.any():
                    break
                actions = np.where(improve, best, actions)
            self._v_star = v
            self._v_star.flags.writeable = False
        return self._v_star

    def occupancy(self, policy, nu=None) -> np.ndarray:
        """d_{pi,nu} = (1 - gamma) nu (I - gamma P_pi)^{-1} for a stationary policy."""
        mdp = self.mdp
        nu = mdp.start if nu is None else check_distribution("nu", nu, mdp.n_states)
        if isinstance(policy, NonStationary):
            raise TypeError("occupancy() is defined here for stationary policies only.")
        P_pi = transition_matrix(mdp, stationary_table(policy, mdp))
        d = np.linalg.solve((np.eye(mdp.n_states) - mdp.gamma * P_pi).T, nu)
        d = (1.0 - mdp.gamma) * d
        return np.clip(d, 0.0, None) / np.clip(d, 0.0, None).sum()

    def loss(self, policy, mu=None) -> float:
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
    """The shared ExactBackend of ``mdp`` (one per MDP object, so v* is computed once)."""
    check_mdp(mdp)
    b = _BACKENDS.get(mdp)
    if b is None:
        b = _BACKENDS[mdp] = ExactBackend(mdp)
    return b


def evaluate(mdp: FiniteMDP, policy) -> np.ndarray:
    """The exact value v_pi of any policy on ``mdp``.

    Examples:
        >>> import nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> v = nsrl.evaluate(mdp, nsrl.Deterministic([0] * 20))
        >>> v.shape
        (20,)
    """
    return backend(mdp).value(policy)


def optimal_value(mdp: FiniteMDP) -> np.ndarray:
    """The optimal value v* of ``mdp`` (exact policy iteration)."""
    return backend(mdp).optimal_value()


def occupancy(mdp: FiniteMDP, policy, nu=None) -> np.ndarray:
    """d_{pi,nu}, nu = the MDP's start distribution (uniform unless given)."""
    return backend(mdp).occupancy(policy, nu)


def loss(mdp: FiniteMDP, policy, mu=None) -> float:
    """The loss mu (v* - v_pi) of any policy, mu uniform unless given.

    Examples:
        >>> import nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> nsrl.loss(mdp, nsrl.Deterministic(nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp))))
        0.0
    """
    return backend(mdp).loss(policy, mu)
