"""The batch state: one MDP's constants for R runs at once, their noise, projection and greedy step.

:class:`Batch` holds what every engine reads (successors, rewards, Phi and Pi_{Phi,nu}, v*,
the operator's options, the solver thresholds) and the operations of the paper's projected
operator with a leading run axis (noise, projection, greedy step, Bellman step, loss), each
mirroring the reference path (:mod:`nsrl.exact`, :class:`nsrl.greedy.ProjectedGreedy`) in the
same arithmetic order where it matters, so that the batched engines draw the same noise and
take the same greedy actions as the reference loop for the same seeds (tested). The exact
solves are :mod:`nsrl.batched.linalg.solvers` and :mod:`~nsrl.batched.linalg.refine`.

Shapes: ``V[r, s]`` values, ``acts[r, s]`` deterministic policies, ``T[r, s, a]`` policy
tables, ``Ppi[r, s, s']`` transition matrices of stationary policies.
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg import sparse
from nsrl.batched.linalg.solvers import DEFAULT, Solvers
from nsrl.exact import backend
from nsrl.greedy.model_based import ProjectedGreedy, perturb, projection_features
from nsrl.params import check_params


class Batch:
    """The per-MDP constants of the fast path and its batched operations.

    Args:
        mdp: the FiniteMDP (with features: the paper's projected operator needs Phi).
        solvers: the solver thresholds (:class:`nsrl.batched.linalg.solvers.Solvers`).
        **options: the projected operator's options, as declared by
            :attr:`nsrl.greedy.ProjectedGreedy.params` (noise, noise_model, constant_feature,
            value_estimate, feature_law; each defaults to the declaration's), stored under
            the same names.
    """

    # the projected operator's options, set from its declarations (declared for type checkers)
    noise: float
    noise_model: str
    constant_feature: bool
    value_estimate: str
    feature_law: str

    def __init__(self, mdp, solvers: Solvers = DEFAULT, **options):
        if mdp.features is None:
            raise ValueError("the batched engines run the projected operator: the MDP needs "
                             "features Phi (e.g. nsrl.garnet draws them).")
        vars(self).update(check_params(ProjectedGreedy.params, options, "the projected operator"))
        self.mdp, self.solvers = mdp, solvers
        self.n, self.gamma = mdp.n_states, mdp.gamma
        self.nxt, self.probs = mdp.successors
        self.R = np.ascontiguousarray(mdp.R, dtype=np.float64)
        # precision of the LU factors (refine.factor), and of systems kept only to be factored
        self.lu_dtype = np.float32 if self.n >= solvers.mixed_min_states else np.float64
        self.phi = projection_features(mdp.features, self.constant_feature, self.feature_law)
        self.states = np.arange(self.n)
        self.v_star = backend(mdp).optimal_value()
        self.mu = np.full(self.n, 1.0 / self.n)
        self.eye = np.eye(self.n)
        w = np.sqrt(mdp.start)
        self.w_nu = w
        # Pi_{Phi,nu} is the same for every run: theta = pinv(sqrt(nu) Phi) sqrt(nu) v.
        self.pinv_nu = np.linalg.pinv(w[:, None] * self.phi)

    def draws(self, rngs, n_iterations: int, lazy: bool = False) -> Noise:
        """Each run's noise in the order ProjectedGreedy draws it (:class:`Noise`)."""
        return Noise(self, list(rngs), n_iterations, lazy)

    def perturb(self, V: np.ndarray, U: np.ndarray) -> np.ndarray:
        """v + u(iota) for every run (nsrl.greedy.model_based.perturb, as ProjectedGreedy)."""
        return perturb(V, U, self.noise_model)

    def q(self, V: np.ndarray) -> np.ndarray:
        """Q[r, s, a] = R[s, a] + gamma sum_j p_j V[r, next_j] (nsrl.exact.q_values)."""
        return sparse.q_values(self.R, self.nxt, self.probs, self.gamma, np.ascontiguousarray(V))

    def project_nu(self, V: np.ndarray) -> np.ndarray:
        """Pi_{Phi,nu} V for every run."""
        return ((V * self.w_nu) @ self.pinv_nu.T) @ self.phi.T

    def project(self, V: np.ndarray, rho: np.ndarray) -> np.ndarray:
        """Pi_{Phi,rho[r]} V[r]: rho-weighted least squares, batched.

        By the normal equations (Phi^T D Phi) theta = Phi^T D v, one BLAS product per run
        (d_{pi,nu} >= (1 - gamma) nu > 0, so the Gram matrix is positive definite; its
        conditioning, cond(sqrt(D) Phi)^2, stays far from the rounding limit on Garnet
        features); the QR path (minimum-norm lstsq on rank deficiency) is the fallback.
        """
        try:
            gram = np.matmul(self.phi.T, rho[:, :, None] * self.phi)
            theta = np.linalg.solve(gram, ((rho * V) @ self.phi)[..., None])[..., 0]
            if np.all(np.isfinite(theta)) and np.all(rho > 0):
                return theta @ self.phi.T
        except np.linalg.LinAlgError:
            pass
        w = np.sqrt(rho)
        X = w[:, :, None] * self.phi
        Q, Rt = np.linalg.qr(X)
        diag = np.abs(np.diagonal(Rt, axis1=1, axis2=2))
        if np.all(diag > 1e-10 * diag.max(axis=1, keepdims=True)):
            theta = np.linalg.solve(Rt, np.einsum("rsp,rs->rp", Q, w * V)[..., None])[..., 0]
        else:  # rank-deficient weights: minimum-norm solution, as lstsq in the reference
            pairs = zip(X, w * V, strict=True)
            theta = np.stack([np.linalg.lstsq(x, y, rcond=None)[0] for x, y in pairs])
        return theta @ self.phi.T

    def greedy_nu(self, V: np.ndarray, U: np.ndarray) -> np.ndarray:
        """The paper's greedy step under nu: argmax_a Q(Pi_{Phi,nu}(V + u))."""
        W = np.ascontiguousarray(self.project_nu(self.perturb(V, U)))
        return sparse.greedy(self.R, self.nxt, self.probs, self.gamma, W)

    def apply(self, acts: np.ndarray, V: np.ndarray) -> np.ndarray:
        """T_pi V for deterministic policies (nsrl.exact._apply)."""
        return sparse.apply_policies(self.R, self.nxt, self.probs, self.gamma,
                               np.ascontiguousarray(acts), np.ascontiguousarray(V))

    def rows(self, acts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P_pi, r_pi) of deterministic policies, rows gathered from P and R."""
        return self.mdp.P[self.states, acts], self.mdp.R[self.states, acts]

    def evaluate(self, Ppi: np.ndarray, rpi: np.ndarray) -> np.ndarray:
        """v = (I - gamma P_pi)^{-1} r_pi, one batched LU solve."""
        return np.linalg.solve(self.eye - self.gamma * Ppi, rpi[..., None])[..., 0]

    def loss(self, V: np.ndarray) -> np.ndarray:
        """mu (v* - v) with mu uniform, for every run."""
        return (self.v_star - V) @ self.mu


class Noise:
    """The runs' noise draws u[r, k, s] ~ U[-iota, iota], in ProjectedGreedy's order.

    ``noise[runs, k]`` is iteration k's greedy draw for ``runs``. Drawn up front by default
    (one Generator call of shape (K, n) per run gives the same numbers as K calls of n);
    ``lazy`` draws when asked instead, because a run whose operator also estimates values
    (CPI+ scoring by ``value_estimate="estimated"``) draws a data-dependent number of vectors in
    between: :meth:`extra`.
    """

    def __init__(self, batch: Batch, rngs: list, n_iterations: int, lazy: bool):
        self.n, self.rngs, self.iota, self.lazy = batch.n, rngs, batch.noise, lazy
        self.shape = (len(rngs), n_iterations, batch.n)
        self._draw = (lambda rng, size: np.zeros(size)) if self.iota == 0.0 else (
            lambda rng, size: rng.uniform(-self.iota, self.iota, size=size))
        self.U = None if lazy else (np.zeros(self.shape) if self.iota == 0.0 else np.stack(
            [self._draw(rng, (n_iterations, batch.n)) for rng in rngs]))

    def __getitem__(self, key) -> np.ndarray:
        runs, k = key
        if self.U is not None:  # drawn up front (not lazy)
            return self.U[runs, k]
        return self.extra(np.arange(len(self.rngs))[runs])

    def extra(self, runs) -> np.ndarray:
        """One more draw for each entry of ``runs``, in order (lazy noise only)."""
        if not self.lazy:
            raise ValueError("extra draws need Noise(lazy=True).")
        out = np.empty((len(runs), self.n))
        for i, r in enumerate(runs):
            out[i] = self._draw(self.rngs[r], self.n)
        return out
