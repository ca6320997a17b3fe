"""The LSTD-Q system from sufficient statistics, and its solution for every target kind.

With ``psi(x, a) = e_a (x) phi(x)`` (d = A p parameters, block a holds action a) and
transitions (x_i, a_i, r_i, x'_i) of weights w_i (1 for samples), LSTD-Q (Lagoudakis & Parr
2003) uses the *sums* (not the means)

    G = sum_i w_i psi_i psi_i^T,   b = sum_i w_i r_i psi_i,
    X_pi = sum_i w_i psi_i psibar'_pi(x'_i)^T,  psibar'_pi(x') = sum_a' pi(a' | x') psi(x', a'),

psibar' being 0 after a termination. Only X_pi depends on the target. Two ways to get them:

* :class:`IndexSystem`, for index observations and a feature table (one-hot or Phi), from
  the counts N(x, a), N(x, a, x') and reward sums (:class:`nsrl.greedy.transitions.IndexCounts`):
  with one-hot features ``G = diag N(x, a)`` and ``X_pi[(x, a), (x', a')] = N(x, a, x')
  pi(a' | x')`` are sparse, so LSTD-Q is the fixed point of the empirical model, in
  O(S A b) whatever the number of transitions; with a dense Phi table they are dense d x d
  matrices built in O(nnz p + A^2 S p^2); with a scipy.sparse table (tile coding) G is
  block diagonal and X_pi sparse, both built by sparse products (with a store and integer
  entries, from running sums: :class:`SparseSums`), and the solves are sparse (SuperLU: one
  factorisation of G + lambda I serves every regression of a finite sequence);
* :class:`DenseSystem`, for any feature matrix, from the transitions, in O(n A p^2).

**Regularisation.** ``lambda = ridge * s2`` is added to the summed system, s2 being the
mean squared feature norm of the data (1 for one-hot): a prior worth ``ridge`` transitions
that pulls theta to 0. Its weight relative to the data is ridge / n, so its bias vanishes as
data grow (the ridge of the normalised system, ``E[...] + ridge I``, does not).

**Solutions** (F = G + lambda I):

* stationary or mixture pi: ``(G - gamma X_pi + lambda I) theta = b``;
* periodic loop p_0 ... p_{m-1} (phase-augmented): ``F theta_j - gamma X_{p_j}
  theta_{j+1 mod m} = b``, one (m d)-dimensional system, solved by composing the blocks'
  maps around the loop (d- or n-dimensional solves: :func:`solve_loop`);
* finite sequence p_0 ... p_{k-1}: backwards, ``theta_k = F^{-1} b`` (state rewards:
  ``F^{-1} (b + gamma X_unif F^{-1} b)``, the terminal value r averaged over actions), then
  ``theta_j = F^{-1} (b + gamma X_{p_j} theta_{j+1})``.

theta_0 is returned: ``W_0(x, a) = psi(x, a) . theta_0`` is Q of the target.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from nsrl.exact import DENSE_MAX_STATES, certified_solve
from nsrl.policies import AnyPolicy, Mixture, NonStationary, Policy

if TYPE_CHECKING:
    from nsrl.greedy.sampling.common import Transitions
    from nsrl.greedy.transitions import IndexCounts

# A dense array or a scipy.sparse matrix: the code uses what both have (@, .T, shape, +);
# scipy-stubs types the two apart, so such a value is typed Any.
Matrix: TypeAlias = Any
Probs = Callable[[Policy], np.ndarray]  # pi -> pi(a' | x') at the next states


def _sparse(x: Matrix) -> bool:
    """``sp.issparse(x)``, as a plain bool: scipy-stubs narrows to an ABC with no matrix API."""
    return bool(sp.issparse(x))


class SparseSums:
    """Phi^T diag N(., a) Phi and Phi^T N_a of a scipy.sparse feature table, by running sums.

    The target-free products of :class:`IndexSystem`'s sparse branch (tile coding), kept by
    a store (``update(data, sign=)``) so that a call with reuse adds the products of its new
    transitions, O(batch nnz(phi)^2), instead of forming them from every stored count again,
    O(nnz(N) nnz(phi)). Exact: it is kept only for tables of integer entries (tile coding's
    ones, see :func:`exact_sums`) and unweighted transitions, whose sums are integers, so
    they equal the from-scratch products bit for bit whatever the order of the additions;
    what an eviction empties is dropped, so the patterns are equal too.

    Attributes:
        gram: per action a, ``Phi^T diag N(., a) Phi`` (p, p), CSR.
        left: per action a, ``Phi^T N_a`` (p, n_index), CSR: ``left[a][j, x'] = sum_x
            phi_j(x) N(x, a, x')``.
    """

    def __init__(self, table: Matrix, n_actions: int) -> None:
        self.table = cast(Matrix, sp.csr_matrix(table))
        n, p = self.table.shape
        self.n_actions = int(n_actions)
        self.gram: list[Matrix] = [sp.csr_matrix((p, p)) for _ in range(self.n_actions)]
        self.left: list[Matrix] = [sp.csr_matrix((p, n)) for _ in range(self.n_actions)]

    def update(self, data: Transitions, weights: npt.ArrayLike | None = None,
               sign: float = 1.0) -> None:
        """Add (``sign`` = 1) or remove (``sign`` = -1) the products of ``data``."""
        if weights is not None:
            raise ValueError("SparseSums keeps unweighted transitions only (its sums are "
                             "exact integers).")
        n, p = self.table.shape
        x = np.asarray(data.obs, dtype=np.int64)
        nxt = np.asarray(data.next_obs, dtype=np.int64)
        actions, live = np.asarray(data.actions), ~np.asarray(data.done, dtype=bool)
        for a in range(self.n_actions):
            idx = np.flatnonzero(actions == a)
            if not len(idx):
                continue
            phi = self.table[x[idx]]
            self.gram[a] = self._add(self.gram[a], sign * (phi.T @ phi))
            rows = np.flatnonzero(live[idx])
            hits = sp.csr_matrix((np.full(len(rows), sign), (rows, nxt[idx][rows])),
                                 shape=(len(idx), n))
            self.left[a] = self._add(self.left[a], (phi.T @ hits).tocsr())

    @staticmethod
    def _add(total: Matrix, delta: Matrix) -> Matrix:
        out = (total + delta).tocsr()
        out.eliminate_zeros()  # what an eviction emptied: the from-scratch pattern
        return out


def exact_sums(table: Matrix) -> bool:
    """Whether :class:`SparseSums` is exact for ``table``: integer entries (e.g. 0/1 tiles).

    Entries of magnitude <= 2^10 make products <= 2^20, whose sums stay exact integers in
    float64 (below 2^53) over up to 2^33 transitions, far beyond a store's.
    """
    values = table.data if _sparse(table) else np.asarray(table)
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values))
                and (values.size == 0 or np.abs(values).max() <= 2.0**10))


class IndexSystem:
    """G, b and X_pi from :class:`IndexCounts` and a feature table (n_index, p).

    Args:
        counts: the statistics of the data.
        table: the feature table; the identity means one-hot features (sparse system).
        probs: ``probs(pi) -> (n_index, n_actions)``, pi(a' | x') at every index x'.
        sums: for a scipy.sparse table (not one-hot), the :class:`SparseSums` of the same
            transitions (kept by a store): its products are read instead of formed from
            ``counts`` (the same values, bit for bit).
    """

    def __init__(self, counts: IndexCounts, table: Matrix, probs: Probs,
                 sums: SparseSums | None = None) -> None:
        self.counts, self.probs = counts, probs
        self.table = cast(Matrix, table.tocsr() if _sparse(table)
                          else np.asarray(table, dtype=float))
        n, A = counts.n_index, counts.n_actions
        self.one_hot = self.table.shape == (n, n) and is_identity(self.table)
        self.sparse = _sparse(self.table) and not self.one_hot  # e.g. tile coding
        if sums is not None and not self.sparse:
            raise ValueError("SparseSums serve a scipy.sparse feature table that is not "
                             "one-hot.")
        self.next, self.sums = counts.next_matrix(), sums
        norms = np.ones(n) if self.one_hot else (
            np.asarray(self.table.multiply(self.table).sum(axis=1)).ravel() if self.sparse
            else (self.table**2).sum(axis=1))
        total = counts.states.sum()
        self.scale = float(counts.states @ norms / total) if total > 0 else float(norms.mean())
        if self.one_hot:
            self.d = n * A
            self.gram: Matrix = sp.diags(counts.visits).tocsr()
            self.b = counts.rewards.copy()
            return
        p = self.table.shape[1]
        self.d = A * p
        # Phi^T N_a, (p, n): the pairs' side of X_pi, shared by every target
        self._left: list[Matrix] = []
        if self.sparse:  # G is block diagonal and sparse, X_pi sparse: O(nnz) memory
            blocks = []
            self.b = np.zeros(self.d)
            for a in range(A):
                rows = slice(a * n, (a + 1) * n)
                self.b[a * p:(a + 1) * p] = self.table.T @ counts.rewards[rows]
                if sums is not None:
                    blocks.append(sums.gram[a])
                    self._left.append(sums.left[a])
                    continue
                blocks.append(self.table.T @ sp.diags(counts.visits[rows]) @ self.table)
                self._left.append((self.next[rows].T @ self.table).T.tocsr())
            self.gram = sp.block_diag(blocks, format="csr")
            return
        # Dense Phi: the products run over the indices the data reach only. A call's
        # transitions visit few of the pairs (10^5 transitions: ~5% of the car's 10^5 states
        # per action, ~18% of the grid world's), and X_pi reads the next states reached only.
        self.gram, self.b = np.zeros((self.d, self.d)), np.zeros(self.d)
        self.support = np.unique(self.next.indices)  # next states reached (CSR)
        reached = self.next.tocsc()[:, self.support].tocsr()
        for a in range(A):
            rows, blk = slice(a * n, (a + 1) * n), slice(a * p, (a + 1) * p)
            # the pairs with a count or a next state (a removed transition may leave either)
            seen = np.flatnonzero((counts.visits[rows] != 0)
                                  | (np.diff(reached[rows].indptr) > 0))
            phi = self.table[seen]
            self.gram[blk, blk] = phi.T @ (counts.visits[rows][seen, None] * phi)
            self.b[blk] = phi.T @ counts.rewards[rows][seen]
            # Phi^T N_a on the reached next states: (p, len(support))
            self._left.append(np.asarray((reached[rows][seen].T @ phi).T))
        self._memo = CrossMemo(self.d)

    def average(self, pi: Policy, theta: np.ndarray) -> np.ndarray:
        """sum_a' pi(a' | x') theta[(x', a')] for every x' (one-hot: theta's value under pi)."""
        n = self.counts.n_index
        return (self.probs(pi) * theta.reshape(self.counts.n_actions, n).T).sum(axis=1)

    def cross_mv(self, pi: Policy, theta: np.ndarray) -> np.ndarray:
        """X_pi theta without forming X_pi: O(n A p) instead of X_pi's O(A n p^2).

        One-hot features: N(x, a, .) @ (pi theta); others: v(x') = sum_a' pi(a' | x')
        phi(x') theta_a', then Phi^T N_a v for every a.
        """
        if self.one_hot:
            return self.next @ self.average(pi, theta)
        A = self.counts.n_actions
        if self.sparse:
            probs, table = self.probs(pi), self.table
        else:  # dense: the next states reached only (the columns of self._left)
            probs, table = self._reached_probs(pi), self.table[self.support]
        values = (probs * (table @ theta.reshape(A, -1).T)).sum(axis=1)
        return np.concatenate([left @ values for left in self._left])

    def _reached_probs(self, pi: Policy) -> np.ndarray:
        """pi(a' | x') at the next states the data reach (dense Phi's X_pi reads no other)."""
        return self.probs(pi)[self.support]

    def cross(self, pi: Policy) -> Matrix:
        """X_pi (sparse for one-hot features, dense otherwise)."""
        probs, A = self.probs(pi), self.counts.n_actions
        if self.one_hot:  # column block a' scales N(., x') by pi(a' | x')
            # scipy-stubs: a sparse matrix times a dense array is sparse, not an ndarray
            blocks = [self.next.multiply(probs[None, :, a]).tocsr()  # type: ignore[attr-defined]
                      for a in range(A)]
            out = sp.hstack(blocks, format="csr")
            out.eliminate_zeros()
            return out
        if self.sparse:
            right = [sp.diags(probs[:, b]) @ self.table for b in range(A)]
            return sp.bmat([[left @ r for r in right] for left in self._left], format="csr")
        return cross_by_parts(self._memo, self._reached_probs, pi, self._add_cross)

    def _add_cross(self, out: np.ndarray, weights: np.ndarray) -> None:
        """out += sum_(a, b) the block (a, b) of X for weights (k, A) of the reached next states.

        Dense Phi. Only the next states where a weight of b is non-zero enter block column b:
        a deterministic pi splits the k rows among the actions, so the products cost
        O(A k p^2) instead of O(A^2 k p^2), and a change of pi at j states O(A j p^2).
        """
        p = self.table.shape[1]
        for b in range(self.counts.n_actions):
            rows = np.flatnonzero(weights[:, b])
            if not len(rows):
                continue
            right = weights[rows, b, None] * self.table[self.support[rows]]  # pi(b | x') phi(x')
            for a, left in enumerate(self._left):
                out[a * p:(a + 1) * p, b * p:(b + 1) * p] += left[:, rows] @ right


MEMO_BYTES = 2**27  # what a CrossMemo keeps at most (128 MiB), beyond its two latest pairs
Add = Callable[[np.ndarray, np.ndarray], None]  # add(out, weights): out += X of the weights


class CrossMemo:
    """The dense X_pi of one system, kept per policy and updated where policies differ.

    X_pi is linear in the next-state weights pi(a' | x'), so from a kept X_pi, the X of
    weights that differ at k next states is X_pi plus the products of those k rows: O(A k
    p^2) instead of O(A n p^2). The targets of one system are close to one another: NSPI(m)'s
    loop is the last m greedy policies, CPI+'s line search asks for mixtures of the current
    policy and the greedy one, and a policy asked twice (a value estimate, then the next
    greedy step from the same store) differs at no state. Each X is computed from the kept
    one that needs the fewest products, or from scratch when that is cheaper.

    The system's products come with each call (``add``), not kept here: a memo that held
    its system's bound method would make a reference cycle, and each system (hundreds of MB
    at 10^5 states) would wait for the cyclic garbage collector; an LSTD-Q run at 10^5
    states grew by ~300 MB per greedy call so, to 12 GB in a 100-iteration shard.

    Args:
        d: the system's dimension (A p).
        keep: how many (weights, X) pairs are kept at most (the most recently used), and
            no more than :data:`MEMO_BYTES` hold (at least 2).
    """

    def __init__(self, d: int, keep: int = 8) -> None:
        self.d, self.keep = d, keep
        self.kept: list[tuple[np.ndarray, np.ndarray]] = []

    def find(self, weights: np.ndarray) -> np.ndarray | None:
        """The kept X of exactly these weights, or None."""
        for kept, out in self.kept:
            if kept.shape == weights.shape and np.array_equal(kept, weights):
                return out
        return None

    def cross(self, weights: np.ndarray, add: Add) -> np.ndarray:
        """X for ``weights`` (rows, A); read-only (it may be kept and returned again).

        ``add(out, weights)`` adds X for next-state weights (rows, A) to ``out`` (one row per
        next state the system reads).
        """
        best, cost = None, int(np.count_nonzero(weights))  # from scratch
        for i, (kept, _) in enumerate(self.kept):
            changed = int(np.count_nonzero(kept != weights))
            if changed < cost:
                best, cost = i, changed
        if best is None:
            out = np.zeros((self.d, self.d))
            add(out, weights)
        else:
            kept, base = self.kept.pop(best)
            self.kept.append((kept, base))  # most recently used last
            if cost == 0:
                return base
            out = base.copy()
            add(out, np.where(kept != weights, weights - kept, 0.0))
        out.flags.writeable = False
        self.kept.append((weights.copy(), out))
        fit = MEMO_BYTES // (weights.nbytes + out.nbytes)  # e.g. 10^6 transitions: 3
        del self.kept[:-max(2, min(self.keep, fit))]
        return out


def cross_by_parts(memo: CrossMemo, weights: Callable[[Policy], np.ndarray],
                   pi: Policy, add: Add) -> np.ndarray:
    """X_pi from ``memo``, a folded mixture by its parts when its head's X is kept.

    ``fold(pi', new, alpha)`` with X_pi' kept is ``(1 - alpha) X_pi' + alpha X_new``, O(d^2)
    once X_new is known.

    CPI+'s line search asks for ``fold(pi_k, new, alpha)`` at several alpha right after the
    greedy step has computed X_{pi_k} from the same data: one X_new serves every candidate.
    Otherwise (pi' not kept) the mixture's X is computed from its own table, which costs no
    more than pi''s.
    """
    parts = pi.folded if isinstance(pi, Mixture) and memo.kept else None
    if parts is not None:  # (nothing kept: the head's table would be computed for nothing)
        head, new, alpha = parts
        kept = memo.find(weights(head))
        if kept is not None:
            return (1.0 - alpha) * kept + alpha * memo.cross(weights(new), add)
    return memo.cross(weights(pi), add)


class DenseGram:
    """G, b and the squared feature norms of transitions under a feature map, by sums.

    The target-free part of the dense system: kept by a store (``update(data, sign=)``)
    so that a call with reuse only computes X_pi over the stored transitions.
    """

    def __init__(self, features: Callable[[np.ndarray], Matrix], n_actions: int) -> None:
        self.features, self.n_actions = features, n_actions
        self.gram: np.ndarray | None = None
        self.b: np.ndarray | None = None
        self.norms = self.weight = 0.0

    def update(self, data: Transitions, weights: npt.ArrayLike | None = None,
               sign: float = 1.0) -> None:
        """Add (``sign`` = 1) or remove (``sign`` = -1) the sums of ``data``."""
        phi = self.features(data.obs)
        check_features(phi, "LSTDQ's features of the stored transitions")
        w = sign * (np.ones(len(phi)) if weights is None else np.asarray(weights, float))
        n, p = phi.shape
        if self.gram is None or self.b is None:
            self.gram, self.b = np.zeros((self.n_actions * p,) * 2), np.zeros(self.n_actions * p)
        gram, b = self.gram, self.b
        actions, r = np.asarray(data.actions), np.asarray(data.rewards, dtype=float)
        for a in range(self.n_actions):
            idx, blk = np.flatnonzero(actions == a), slice(a * p, (a + 1) * p)
            wphi = w[idx, None] * phi[idx]
            gram[blk, blk] += wphi.T @ phi[idx]
            b[blk] += wphi.T @ r[idx]
        self.norms += float(w @ (phi**2).sum(axis=1))
        self.weight += float(w.sum())


class DenseSystem:
    """G, b and X_pi from transitions and their features (any feature map).

    Args:
        phi, phi_next: features of the states and next states, shape (n, p).
        data: the transitions (actions, rewards, done are read).
        weights: per-transition weights (None: ones).
        n_actions: number of actions A.
        probs: ``probs(pi) -> (n, n_actions)``, pi(a' | x'_i) at every next state.
        sums: a :class:`DenseGram` of the same transitions (None: computed here).
    """

    def __init__(self, phi: Matrix, phi_next: Matrix, data: Transitions,
                 weights: npt.ArrayLike | None, n_actions: int, probs: Probs,
                 sums: DenseGram | None = None) -> None:
        n, p = phi.shape
        w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
        self.probs, self.phi_next, self.live = probs, phi_next, ~np.asarray(data.done, bool)
        self.d, self.p, self.n_actions = n_actions * p, p, n_actions
        actions = np.asarray(data.actions)
        self.blocks = [np.flatnonzero(actions == a) for a in range(n_actions)]
        self.wphi = w[:, None] * phi
        if sums is None:
            sums = DenseGram(lambda _: phi, n_actions)
            sums.update(data, weights)
        assert sums.gram is not None and sums.b is not None  # update() was called
        self.gram, self.b = sums.gram, sums.b
        self.scale = sums.norms / sums.weight if sums.weight > 0 else 1.0
        self._memo = CrossMemo(self.d)

    def cross_mv(self, pi: Policy, theta: np.ndarray) -> np.ndarray:
        """X_pi theta without forming X_pi: O(n A p) instead of X_pi's O(n p^2)."""
        probs = self.probs(pi) * self.live[:, None]
        values = (probs * (self.phi_next @ theta.reshape(self.n_actions, -1).T)).sum(axis=1)
        return np.concatenate([self.wphi[idx].T @ values[idx] for idx in self.blocks])

    def cross(self, pi: Policy) -> np.ndarray:
        """X_pi, grouping transitions by (a, a') so a deterministic pi costs O(n p^2)."""
        return cross_by_parts(self._memo, lambda p: self.probs(p) * self.live[:, None], pi,
                              self._add_cross)

    def _add_cross(self, out: np.ndarray, weights: np.ndarray) -> None:
        """out += X for next-state weights (n, A): only the transitions of non-zero weight."""
        p = self.p
        for a, idx in enumerate(self.blocks):
            for b in range(self.n_actions):
                sub = idx[weights[idx, b] != 0]
                if len(sub):
                    out[a * p:(a + 1) * p, b * p:(b + 1) * p] += \
                        (self.wphi[sub] * weights[sub, b, None]).T @ self.phi_next[sub]


# The largest feature magnitude LSTD-Q takes: its sums of products of features over up to
# 10^12 transitions stay far from overflow (1e308) below it.
FEATURE_MAX = 1e100


def check_features(x: Matrix, what: str) -> None:
    """Refuse features that are NaN, infinite or so large that the statistics overflow.

    Raises:
        ValueError: naming the first bad entry (row, column, value) and the fix.
    """
    values = x.data if _sparse(x) else np.asarray(x)
    bad = ~np.isfinite(values) | (np.abs(values) > FEATURE_MAX)
    if not np.any(bad):
        return
    first = int(np.flatnonzero(bad.ravel())[0])
    if _sparse(x):
        coo = x.tocoo()  # the same entries in the same order (canonical CSR)
        where: tuple[int, ...] = (int(coo.row[first]), int(coo.col[first]))
    else:
        where = tuple(int(k) for k in np.unravel_index(first, bad.shape))
    value = float(values.ravel()[first])
    raise ValueError(f"{what} should be finite with entries of magnitude <= {FEATURE_MAX:g} "
                     f"(their products are summed over the transitions), got {value!r} at "
                     f"{where} ({int(bad.sum())} such entries); fix or rescale the features.")


def is_identity(table: Matrix) -> bool:
    """True for the identity matrix, dense or scipy.sparse (one-hot features)."""
    if _sparse(table):
        n = table.shape[0]
        return bool(table.shape == (n, n) and table.nnz == n and np.all(table.diagonal() == 1.0))
    table = np.asarray(table)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        return False
    return bool(np.all(np.diag(table) == 1.0) and np.count_nonzero(table) == len(table))


# Column orderings of SuperLU for the sparse (tile-coding) systems G - gamma X_pi + lambda I:
# every one is an exact LU of the same matrix; they differ in fill-in, hence time and memory.
# On the 10^5-state grid world with 25 600 tiles neither COLAMD (SuperLU's default, kept) nor
# MMD on A^T A was faster on every system measured (benchmarks/bench_lstdq_call.py);
# MMD on A^T + A fills in far more there.
ORDERINGS = ("COLAMD", "MMD_ATA", "MMD_AT_PLUS_A", "NATURAL")
DEFAULT_ORDERING = "COLAMD"


def check_ordering(ordering: str) -> str:
    """``ordering`` if SuperLU knows it (see :data:`ORDERINGS`), else ValueError."""
    if ordering not in ORDERINGS:
        raise ValueError(f"sparse_ordering should be one of {ORDERINGS}, got {ordering!r} "
                         f"(SuperLU's column orderings; {DEFAULT_ORDERING!r} is the default).")
    return ordering


def _solve(matrix: Matrix, rhs: np.ndarray, ordering: str = DEFAULT_ORDERING) -> np.ndarray:
    if _sparse(matrix):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", spla.MatrixRankWarning)
            out = spla.spsolve(matrix.tocsc(), rhs,
                               permc_spec=check_ordering(ordering))  # type: ignore[call-overload]
    else:
        try:
            out = np.linalg.solve(matrix, rhs)
        except np.linalg.LinAlgError:
            out = np.full(np.shape(rhs), np.nan)
    if not np.all(np.isfinite(out)):
        raise ValueError("the LSTD-Q system is singular (features or state-action pairs "
                         "without data?): use ridge > 0.")
    return np.asarray(out)


def _eye(system: System, size: int) -> Matrix:
    return sp.identity(size, format="csr") if _sparse(system.gram) else np.eye(size)


def solve_tabular_loop(system: IndexSystem, policies: list[Policy], gamma: float,
                       lam: float) -> np.ndarray:
    """:func:`solve_loop` for one-hot features, on the n-dimensional values u_j = pi_j theta_{j+1}.

    With F = diag(f) (f = N(x, a) + lambda), block j reads theta_j = f^-1 (b + gamma N u_j),
    so u_{j-1} = pi_{j-1} f^-1 b + L_{j-1} u_j with L = gamma pi f^-1 N (n x n): the loop's
    affine maps compose into u_0 = c + M u_0 (as the exact backend evaluates a loop), one
    n x n solve instead of an (m n A)-dimensional sparse one.
    """
    f = system.gram.diagonal() + lam
    if np.any(f <= 0):
        raise ValueError("the LSTD-Q system is singular (state-action pairs without data): "
                         "use ridge > 0.")
    n = system.counts.n_index
    fb = system.b / f
    steps: list[Callable[[np.ndarray], np.ndarray]] = []
    for pi in policies:
        probs = system.probs(pi)

        # pi f^-1 (.) applied to the pairs' values y (n A, ...)
        def step(y: np.ndarray, probs: np.ndarray = probs) -> np.ndarray:
            y = y.reshape(system.counts.n_actions, n, *y.shape[1:])
            return np.einsum("xa,ax...->x...", probs, y)

        steps.append(step)
    c = np.zeros(n)
    for step in reversed(steps):  # u_{m-1} = pi_{m-1} theta_0, ..., u_0 = pi_0 theta_1
        c = step(fb) + gamma * step((system.next @ c) / f)
    if n > DENSE_MAX_STATES:  # M = L_0 ... L_{m-1} as an operator, O(n A b) per product

        def apply_M(x: np.ndarray) -> np.ndarray:
            for step in reversed(steps):
                x = gamma * step((system.next @ x) / f)
            return x

        # rows of f^-1 N sum to at most 1, so ||M||_inf <= gamma^m
        scale = max(float(np.abs(fb).max()), 1e-300) / (1.0 - gamma)
        u0, _ = certified_solve(apply_M, c, gamma ** len(steps), 1e-10 * scale,
                                what="the LSTD-Q system")
    else:
        M = np.eye(n)
        for step in reversed(steps):
            M = gamma * step((system.next @ M) / f[:, None])
        u0 = np.linalg.solve(np.eye(n) - M, c)
    return fb + gamma * (system.next @ u0) / f


def solve_loop(system: System, policies: list[Policy], gamma: float, lam: float,
               ordering: str = DEFAULT_ORDERING) -> np.ndarray:
    """theta_0 for the loop p_0 ... p_{m-1} (m = 1: a stationary or mixture target).

    ``ordering``: SuperLU's column ordering for sparse (tile-coding) systems.
    """
    if isinstance(system, IndexSystem) and system.one_hot:
        return solve_tabular_loop(system, policies, gamma, lam)
    m, d, G = len(policies), system.d, system.gram
    cross = [system.cross(pi) for pi in policies]
    if m == 1:
        return _solve(G - gamma * cross[0] + lam * _eye(system, d), system.b, ordering)
    F = G + lam * _eye(system, d)
    if _sparse(G):
        grid: list[list[Matrix]] = [[None] * m for _ in range(m)]
        for j in range(m):
            grid[j][j] = F
            grid[j][(j + 1) % m] = -gamma * cross[j]
        return _solve(sp.bmat(grid, format="csc"), np.tile(system.b, m), ordering)[:d]
    # Dense: theta_j = F^-1 (b + gamma X_j theta_{j+1}) composed around the loop into
    # theta_0 = c + K theta_0, m products and one d x d solve, O(m d^3), instead of the
    # (m d)-dimensional block system, O(m^3 d^3).
    from scipy.linalg import cho_factor, cho_solve

    try:
        factor = cho_factor(F)
    except np.linalg.LinAlgError:
        raise ValueError("the LSTD-Q Gram matrix is singular (features without data?): "
                         "use ridge > 0.") from None
    fb = cho_solve(factor, system.b)
    c, K = np.zeros(d), np.eye(d)
    for X in reversed(cross):
        step = gamma * cho_solve(factor, X)
        c, K = fb + step @ c, step @ K
    return _solve(np.eye(d) - K, c)


def solve_finite(system: System, policies: list[Policy], gamma: float, lam: float,
                 uniform: Policy, state_reward: bool) -> np.ndarray:
    """theta_0 for the finite sequence p_0 ... p_{k-1}, backwards (``uniform``: 1/A policy)."""
    F = system.gram + lam * _eye(system, system.d)
    if _sparse(F) and not getattr(system, "one_hot", False):  # sparse features
        factor = spla.splu(F.tocsc())

        def regress(y: np.ndarray) -> np.ndarray:
            out = factor.solve(y)
            if not np.all(np.isfinite(out)):
                raise ValueError("the LSTD-Q Gram matrix is singular (features without "
                                 "data?): use ridge > 0.")
            return out
    elif _sparse(F):  # one-hot: F is diagonal
        diag = F.diagonal()
        if np.any(diag <= 0):
            raise ValueError("the LSTD-Q system is singular (state-action pairs without "
                             "data): use ridge > 0.")

        def regress(y: np.ndarray) -> np.ndarray:
            return y / diag
    else:
        from scipy.linalg import cho_factor, cho_solve

        try:
            cho = cho_factor(F)
        except np.linalg.LinAlgError:
            raise ValueError("the LSTD-Q Gram matrix is singular (features without data?): "
                             "use ridge > 0.") from None

        def regress(y: np.ndarray) -> np.ndarray:
            return cho_solve(cho, y)
    theta = regress(system.b)
    if state_reward:  # v_empty(x') = r(x'): W_{k+1} = r, averaged over actions
        theta = regress(system.b + gamma * system.cross_mv(uniform, theta))
    for pi in reversed(policies):
        theta = regress(system.b + gamma * system.cross_mv(pi, theta))
    return theta


def solve_target(system: System, target: AnyPolicy, gamma: float, lam: float,
                 uniform: Policy, state_reward: bool,
                 ordering: str = DEFAULT_ORDERING) -> np.ndarray:
    """theta_0 for any target kind of the schemes (see the module docstring).

    ``ordering``: SuperLU's column ordering of the sparse stationary and loop systems (the
    finite sequence factorises the block-diagonal G + lambda I only, with SuperLU's default).
    """
    if isinstance(target, NonStationary) and not target.loop:
        return solve_finite(system, list(target.policies), gamma, lam, uniform, state_reward)
    policies = list(target.policies) if isinstance(target, NonStationary) else [target]
    return solve_loop(system, policies, gamma, lam, ordering)


System = IndexSystem | DenseSystem
