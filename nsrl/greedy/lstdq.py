"""LSTD-Q (Lagoudakis & Parr 2003) greedy operator, consistent, with sample reuse.

Q is linear in state-action features ``psi(x, a) = e_a (x) phi(x)`` (one block of the state
features phi per action). From transitions (x, a, r, x') the fixed point of the projected
Bellman equation ``Q = Pi(r + gamma P^pi Q)`` solves ``(C + lambda I) theta = b`` with the
*summed* statistics ``C = sum psi (psi - gamma psi_bar')^T``, ``b = sum psi r``,
``psi_bar' = sum_a' pi(a' | x') psi(x', a')`` (0 after a termination), and a ridge lambda
worth ``ridge`` transitions, whose weight relative to the data vanishes as they grow
(:mod:`nsrl.greedy.lstd_system`). The targets:

* **stationary or mixture** pi: as above; a mixture's ``pi(a' | x')`` is the weighted sum of
  its components' actions (no sampling of a component);
* **periodic loop** (sigma)^inf = p_0 ... p_{m-1} of NSPI(m) (the extension to
  non-stationary policies in the paper's footnote to eq. nspi): phase-augmented features.
  With ``W_j(x, a) = r + gamma E v_j(x')`` the value of taking a and then following the loop
  from phase j, ``W_j(x, a) = r + gamma E W_{j+1 mod m}(x', p_j(x'))``: each transition
  enters the m phase blocks of one (m d)-dimensional LSTD system; the greedy step is
  greedy w.r.t. v_0, i.e. ``argmax_a W_0(x, a)``;
* **finite sequence** sigma_k = p_0 ... p_{k-1} of PSDP: the same recursion ends with
  ``W_k(x, a) = r + gamma E v_empty(x')`` (v_empty = r for state rewards, read as
  ``W_{k+1} = r`` averaged over actions; 0 otherwise). The system is block triangular, so
  it is solved backwards: k + 1 (or k + 2) ridge regressions.

**Sample reuse.** LSTD-Q is off-policy, so every transition of a run can evaluate every
later target. By default an operator keeps a :class:`nsrl.greedy.transitions.TransitionStore`
(FIFO, 10^6 transitions): each greedy call draws ``budget`` new transitions, adds them, and
solves from everything stored; ``samples`` counts the new ones only. With index
observations and a feature table (one-hot, Phi) the store keeps the counts N(x, a, x'), so
a call costs O(budget + S A b) whatever is stored; with a scipy.sparse table of integer
entries (tile coding) it also keeps the products Phi^T diag N_a Phi and Phi^T N_a as running
sums (:class:`nsrl.greedy.lstd_system.SparseSums`: exact, so the weights are those of the
products formed afresh, bit for bit), and a call adds its batch's products only; the sparse
LU of the system, whose fill grows with the stored data, is then what a call costs
(benchmarks/bench_lstdq_call.py, ``--part later``). With other features it keeps G and b,
and a call computes X_pi over the stored transitions, O(n A p^2).

**Greedy step.** ``argmax_a Q_hat(x, a)``; with one-hot features only among the actions
tried in x (the Q of a pair without data is not identified), the target's action where none
was. ``Greedy.advantage`` (CPI's step input) is the mean of ``Q_hat(x, pi'(x)) - Q_hat(x,
pi)`` over the states drawn in this call (they follow d_{b,nu} of this call's behaviour),
Q_hat coming from all stored data. ``value`` (CPI+'s line search) is by default LSTD-Q's
estimate from the store over reset states, which costs no transition.

No reset-to-state is needed: data come from walks from the env's reset
(``nsrl.greedy.sampling``), so LSTD-Q runs on any Gymnasium env with discrete actions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from nsrl.greedy.base import Greedy, Occupancy, Rho
from nsrl.greedy.features import EstimatorPolicy, make_features
from nsrl.greedy.lstd_system import (
    DEFAULT_ORDERING,
    DenseGram,
    DenseSystem,
    IndexSystem,
    SparseSums,
    System,
    check_features,
    check_ordering,
    exact_sums,
    is_identity,
    solve_target,
)
from nsrl.greedy.qpolicy import LinearQ, QTablePolicy
from nsrl.greedy.sampling import Transitions, action_probs, make_sampler
from nsrl.greedy.transitions import IndexCounts, TransitionStore
from nsrl.model.memory import check_memory
from nsrl.policies import AnyPolicy, Constant, Mixture, NonStationary, Policy

__all__ = ["LSTDQ", "LinearQ", "QTablePolicy"]

DEFAULT_STORE = 1_000_000  # transitions a store keeps (at least one call's budget)
RIDGE_ONE_HOT, RIDGE_FEATURES = 1e-3, 10.0  # default ridges, in transitions
VALUE_STARTS = 10_000  # reset draws behind nu_hat for the LSTD value estimate
# Bytes per transition drawn and stored (tracemalloc on Garnets, n_S = 50-200: 135-150)
BYTES_PER_TRANSITION = 160


def _check_target(target: AnyPolicy) -> None:
    given = target.policies if isinstance(target, NonStationary) else [target]
    parts = [pi for p in given for pi in ([w[1] for w in p.components]
                                          if isinstance(p, Mixture) else [p])]
    for pi in parts:
        if not hasattr(pi, "act"):
            raise TypeError(
                f"LSTD-Q evaluates stationary policies (with act), nsrl.Mixture and "
                f"nsrl.NonStationary targets, got {type(pi).__name__}."
            )


class LSTDQ:
    """LSTD-Q greedy operator (see the module docstring).

    Args:
        env: any Gymnasium env with discrete actions, or the native vector env (fast path).
        budget: new transitions drawn per greedy call (0: none, solve from ``store`` only,
            e.g. textbook LSPI on one fixed batch).
        features: state features (see :func:`nsrl.greedy.features.make_features`).
        ridge: the ridge, in transitions (lambda = ridge times the mean squared feature
            norm, added to the summed system): its weight relative to the data, ridge / n,
            vanishes as they grow. Default: 1e-3 for one-hot features (LSTD-Q is then the
            fixed point of the empirical model, well posed at every pair with data; the
            ridge only settles pairs without data) and for scipy.sparse tables such as tile
            coding (local features: each column sees a small share of the data, as a
            one-hot column does, so a ridge worth 10 transitions per column would outweigh
            it and pull Q towards 0 where the behaviour rarely goes; measured on the 10^4
            grid world: PSDP with 6 400 tiles ends at 45% of pi_0's loss with ridge 1,
            8% with ridge 0.01), 10 for other features (correlated features make the
            system ill-conditioned; measured on CartPole-v1 with RBF features).
        explore: for rho = d_{pi,nu} (CPI family), the probability of a uniform action in
            the behaviour that collects data (the rest follows pi); rho = nu uses uniform
            actions only. Visited states follow d_{b,nu} of that behaviour b.
        reuse: keep every transition of the run in a store and solve from all of them.
        store: the store (a :class:`TransitionStore`, possibly filled) or its maximum size
            (default: a new store of max(10^6, budget) transitions); needs ``reuse``.
        value_estimate: how ``value`` (CPI+'s line search) estimates nu v_pi: "lstd" (LSTD-Q
            on the stored transitions, averaged over 10^4 reset states drawn once: no new
            transitions), "rollouts" (Monte-Carlo returns from reset, counted), or "auto"
            (lstd for index observations with a feature table and reuse, else rollouts).
        value_rollouts: rollouts per ``value`` call (default: budget (1 - gamma)).
        gamma: discount, for an env without a model.
        sparse_ordering: SuperLU's column ordering for the sparse systems of a scipy.sparse
            feature table (tile coding): "COLAMD" (default, SuperLU's own), "MMD_ATA"
            (minimum degree on A^T A), "MMD_AT_PLUS_A", "NATURAL". Every ordering solves
            the same system exactly (to rounding); they differ in fill-in, hence in time and
            memory (benchmarks/bench_lstdq_call.py compares them at 10^5 states).

    Examples:
        >>> import numpy as np, nsrl
        >>> from nsrl.envs import FiniteMDPVectorEnv
        >>> env = FiniteMDPVectorEnv(nsrl.garnet(20, 2, 2, seed=0), num_envs=1)
        >>> op = LSTDQ(env, budget=2000)
        >>> op.greedy(nsrl.constant(), nsrl.Nu(), np.random.default_rng(0)).samples
        2000
    """

    def __init__(self, env: Any, budget: int, *, features: object = None,
                 ridge: float | None = None, explore: float = 0.3, reuse: bool = True,
                 store: TransitionStore | int | None = None, value_estimate: str = "auto",
                 value_rollouts: int | None = None, gamma: float | None = None,
                 sparse_ordering: str = DEFAULT_ORDERING) -> None:
        self.sampler = make_sampler(env, gamma)
        self.gamma, self.n_actions = self.sampler.gamma, self.sampler.n_actions
        if self.sampler.mdp is not None:
            self.mdp = self.sampler.mdp
        if isinstance(budget, bool) or int(budget) != budget or budget < 0:
            raise ValueError(f"budget should be a non-negative int (transitions), got "
                             f"{budget!r}.")
        if not ((ridge is None or ridge >= 0) and 0.0 <= explore <= 1.0):
            raise ValueError(f"need ridge >= 0 (or None) and explore in [0, 1], got {ridge}, "
                             f"{explore}.")
        self.budget, self.explore = int(budget), float(explore)
        check_memory(BYTES_PER_TRANSITION * self.budget, f"LSTDQ(budget={self.budget})",
                     "lower the budget (transitions drawn per greedy call)")
        self.sparse_ordering = check_ordering(sparse_ordering)
        self.store = self._make_store(reuse, store)
        self.features = make_features(features, env, self.sampler.mdp)
        if self._index:
            check_features(self._table, "LSTDQ's feature table")
        local = self._index and (is_identity(self.features.table)
                                 or sp.issparse(self.features.table))
        self.ridge = float(ridge) if ridge is not None else (
            RIDGE_ONE_HOT if local else RIDGE_FEATURES)
        self.value_rollouts, self.samples_used = value_rollouts, 0
        self.value_estimate = self._check_value_estimate(value_estimate)
        self._nu_hat: np.ndarray | None = None
        # (key of the store's state, its IndexSystem): see _system
        self._store_system: tuple[tuple[int, int], IndexSystem] | None = None

    def _check_value_estimate(self, how: str) -> str:
        if how not in ("auto", "lstd", "rollouts"):
            raise ValueError(f"value_estimate should be 'auto', 'lstd' or 'rollouts', got "
                             f"{how!r}.")
        if how == "auto":
            return "lstd" if self._index and self.store is not None else "rollouts"
        if how == "lstd" and not (self._index and self.store is not None):
            raise ValueError("value_estimate='lstd' needs index observations with a feature "
                             "table (e.g. features='onehot') and reuse=True; pass "
                             "value_estimate='rollouts'.")
        return how

    def _make_store(self, reuse: bool,
                    store: TransitionStore | int | None) -> TransitionStore | None:
        if not reuse:
            if store is not None:
                raise ValueError("store is only used with reuse=True; pass reuse=True or "
                                 "drop store.")
            if self.budget == 0:
                raise ValueError("budget=0 draws no data: pass budget >= 1, or reuse=True "
                                 "with a filled store=TransitionStore(...).")
            return None
        if store is None:
            store = TransitionStore(max(DEFAULT_STORE, self.budget))
        elif not isinstance(store, TransitionStore):
            store = TransitionStore(store)
        if store.max_size < self.budget:
            raise ValueError(
                f"a store of max_size={store.max_size} is below one call's budget="
                f"{self.budget}: each call would evict its own transitions; pass store >= "
                f"{self.budget} (or store=None for the default max(10^6, budget))."
            )
        if self.budget == 0 and len(store) == 0:
            raise ValueError("budget=0 solves from the store alone, which is empty: fill it "
                             "(store.add(transitions)) or pass budget >= 1.")
        return store

    # --- data and statistics --------------------------------------------------------------

    def _collect(self, rho: Rho, rng: np.random.Generator) -> Transitions | None:
        if self.budget == 0:
            return None
        behaviour = rho.policy if isinstance(rho, Occupancy) else None
        explore = self.explore if behaviour is not None else 1.0
        return self.sampler.transitions(self.budget, rng, behaviour, explore)

    @property
    def _index(self) -> bool:
        return self.features.kind == "table"

    @property
    def _table(self) -> np.ndarray | sp.csr_matrix:
        """The feature table of index features (see :attr:`_index`)."""
        assert self.features.table is not None
        return self.features.table

    @property
    def _stored(self) -> TransitionStore:
        """The store, when statistics are read from it (``reuse=True``)."""
        assert self.store is not None
        return self.store

    def _row_probs(self, rng: np.random.Generator) -> Callable[[Policy], np.ndarray]:
        """pi(a | x) at every index x, computed once per policy per call."""
        n = self._table.shape[0]
        rows = np.arange(n)
        mdp = self.sampler.mdp
        states = rows if mdp is not None and mdp.n_states == n else np.full(n, -1)
        cache: dict[int, tuple[Policy, np.ndarray]] = {}

        def probs(pi: Policy) -> np.ndarray:
            if id(pi) not in cache:
                cache[id(pi)] = (pi, action_probs(self.sampler, pi, states, rows, rng))
            return cache[id(pi)][1]
        return probs

    def _system(self, data: Transitions | None, rng: np.random.Generator,
                weights: np.ndarray | None = None) -> System:
        """The LSTD statistics of ``data`` (None: of the store)."""
        if self._index:
            n = self._table.shape[0]
            if data is not None:
                return IndexSystem(IndexCounts.of(data, n, self.n_actions, weights),
                                   self._table, self._row_probs(rng))
            # The store's system is kept while the store is unchanged: CPI+'s line search
            # asks several values per iteration from the same store (each used to rebuild
            # G, b and Phi^T N_a). The policy probabilities are fresh for each call.
            counts = self._stored.index_counts(n, self.n_actions)
            key = (id(counts), self._stored.added)
            if self._store_system is None or self._store_system[0] != key:
                self._store_system = (key, IndexSystem(counts, self._table,
                                                       self._row_probs(rng), self._sums()))
            system = self._store_system[1]
            system.probs = self._row_probs(rng)
            return system
        sums = None
        if data is None:  # G and b of the store are kept up to date by the store itself
            data = self._stored.transitions()
            sums = self._stored.running(("dense", id(self.features)),
                                      lambda: DenseGram(self.features, self.n_actions))
        cache: dict[int, tuple[Policy, np.ndarray]] = {}

        def probs(pi: Policy) -> np.ndarray:
            if id(pi) not in cache:
                cache[id(pi)] = (pi, action_probs(self.sampler, pi, data.next_states,
                                                  data.next_obs, rng))
            return cache[id(pi)][1]
        phi, phi_next = self.features(data.obs), self.features(data.next_obs)
        check_features(phi, "LSTDQ's features of the stored states")
        check_features(phi_next, "LSTDQ's features of the stored next states")
        return DenseSystem(phi, phi_next, data, weights, self.n_actions, probs, sums)

    def _sums(self) -> SparseSums | None:
        """The store's running :class:`SparseSums`, for a sparse integer table (tile coding).

        Its products are those the store's system would form from the counts, bit for bit
        (integer sums), so a call adds its batch's products instead of forming them from
        every stored count. Other tables (one-hot, dense, non-integer sparse): None.
        """
        table = self._table
        if not (sp.issparse(table) and not is_identity(table) and exact_sums(table)):
            return None
        return self._stored.running(("sparse", id(table)),
                                    lambda: SparseSums(table, self.n_actions))

    def _theta(self, target: AnyPolicy, system: System) -> np.ndarray:
        uniform = Mixture([(1.0 / self.n_actions, Constant(a)) for a in range(self.n_actions)])
        theta = solve_target(system, target, self.gamma, self.ridge * system.scale, uniform,
                             self.sampler.state_reward, self.sparse_ordering)
        return theta.reshape(self.n_actions, -1)

    def solve(self, target: AnyPolicy, data: Transitions, rng: np.random.Generator,
              weights: np.ndarray | None = None) -> np.ndarray:
        """theta_0 of shape (n_actions, p), ``W_0(x, a) = phi(x) theta_0[a]``, from ``data``.

        ``data`` is a :class:`nsrl.greedy.sampling.Transitions`; W_0 is Q_target for a stationary
        target; ``weights`` weigh the transitions (e.g. P(x' | x, a) for exhaustive data).
        The store is not used.
        """
        _check_target(target)
        return self._theta(target, self._system(data, rng, weights))

    # --- the greedy interface -------------------------------------------------------------

    def greedy(self, target: AnyPolicy, rho: Rho, rng: np.random.Generator) -> Greedy:
        """Greedy w.r.t. the LSTD-Q estimate of Q_target from the new and stored transitions."""
        _check_target(target)
        new = self._collect(rho, rng)
        if self.store is not None and new is not None:
            self.store.add(new)
        system = self._system(None if self.store is not None else new, rng)
        theta = self._theta(target, system)
        drawn = 0 if new is None else len(new.rewards)
        if new is not None:
            seen = new
        else:
            assert self.store is not None  # no new data only with a store (_make_store)
            seen = self.store.transitions()
        policy: QTablePolicy | EstimatorPolicy
        if isinstance(system, IndexSystem):  # self._index
            policy = self._table_policy(target, system, theta)
        else:
            policy = EstimatorPolicy(self.features, regressors=[LinearQ(t) for t in theta],
                                     observe=self.sampler.observe)
        advantage = float("nan")
        if not isinstance(target, NonStationary):
            advantage = self._advantage(target, policy, theta, seen, system, rng)
        self.samples_used += drawn
        return Greedy(policy, advantage, drawn)

    def _table_policy(self, target: AnyPolicy, system: IndexSystem,
                      theta: np.ndarray) -> QTablePolicy:
        """argmax of Q = Phi theta; with one-hot features only among the pairs with data.

        Where no action has data, the target's (first) action is kept: nothing says another
        one is better.
        """
        q = self._table @ theta.T
        if not system.one_hot:  # Phi generalises to pairs without data
            return QTablePolicy(q)
        allowed = system.counts.visits.reshape(self.n_actions, -1).T > 0
        first = target.policies[0] if isinstance(target, NonStationary) and target.policies \
            else (None if isinstance(target, NonStationary) else target)
        default = None if first is None else np.argmax(system.probs(first), axis=1)
        return QTablePolicy(q, allowed, default)

    def _advantage(self, target: Policy, policy: QTablePolicy | EstimatorPolicy,
                   theta: np.ndarray, data: Transitions, system: System,
                   rng: np.random.Generator) -> float:
        """Mean of Q(x, pi'(x)) - Q(x, pi) over the states ``data`` visited (this call's).

        With one-hot features a state where the target takes an action without data counts
        0 (no evidence of an improvement there), not the gain over the ridge's Q = 0.
        """
        if isinstance(policy, QTablePolicy):  # index features: per index, weighted by the
            # visits, O(n + S A)
            visits = np.bincount(np.asarray(data.obs, dtype=np.int64),
                                 minlength=len(policy.q)) / len(data.obs)
            probs = system.probs(target)
            gain = policy.q[np.arange(len(policy.q)), policy.actions] - (probs * policy.q).sum(1)
            if isinstance(system, IndexSystem) and system.one_hot:
                tried = system.counts.visits.reshape(self.n_actions, -1).T > 0
                gain[np.any((probs > 0) & ~tried, axis=1)] = 0.0
            return float(visits @ gain)
        q = self.features(data.obs) @ theta.T
        probs = action_probs(self.sampler, target, data.states, data.obs, rng)
        chosen = q[np.arange(len(q)), policy.act(data.obs)]
        return float(np.mean(chosen - (probs * q).sum(axis=1)))

    def value(self, policy: AnyPolicy, rng: np.random.Generator) -> float:
        """An estimate of nu v_policy (see ``value_estimate``); rollouts' samples are counted."""
        empty = isinstance(policy, NonStationary) and not policy.policies
        if self.value_estimate == "lstd" and self.store is not None and len(self.store) \
                and not empty:
            return self._lstd_value(policy, rng)
        n = self.value_rollouts or max(1, int(max(self.budget, 1) * (1.0 - self.gamma)))
        returns, count = self.sampler.from_start(policy, n, rng)
        self.samples_used += count
        return float(returns.mean())

    def _lstd_value(self, policy: AnyPolicy, rng: np.random.Generator) -> float:
        """nu_hat v_hat: LSTD-Q's Q of ``policy`` from the store, nu_hat from reset draws.

        The same nu_hat (VALUE_STARTS resets drawn at the first call; a reset is not a
        transition) serves every call, so a line search compares its candidates on common
        start states.
        """
        _check_target(policy)
        n = self._table.shape[0]
        if self._nu_hat is None:
            starts = np.asarray(self.sampler.start(VALUE_STARTS, rng), dtype=np.int64)
            self._nu_hat = np.bincount(starts, minlength=n) / VALUE_STARTS
        system = self._system(None, rng)
        q = self._table @ self._theta(policy, system).T
        first = policy.policies[0] if isinstance(policy, NonStationary) else policy
        return float(self._nu_hat @ (system.probs(first) * q).sum(axis=1))
