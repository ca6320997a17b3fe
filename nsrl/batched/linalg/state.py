"""Batched exact operations on one MDP for R runs at once (the sweep's fast path).

Every function here mirrors one operation of the reference path (:mod:`nsrl.exact`,
:class:`nsrl.greedy.ProjectedGreedy`) with a leading run axis, performing the same
arithmetic in the same order where it matters, so that the fast path draws the same noise
and takes the same greedy actions as ``nsrl.run`` for the same seeds (tested).

Shapes: ``V[r, s]`` values, ``acts[r, s]`` deterministic policies, ``T[r, s, a]`` policy
tables, ``Ppi[r, s, s']`` transition matrices of stationary policies.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from nsrl.batched.linalg import gmres, sparse
from nsrl.batched.linalg.solvers import DEFAULT, OCCUPANCY_RTOL, REFINE_RTOL, Solvers
from nsrl.exact import backend
from nsrl.greedy.model_based import ProjectedGreedy, perturb, projection_features
from nsrl.params import check_params

MAX_REFINE = 6  # refinement sweeps before a direct solve (Batch.solve_factored)


class Batch:
    """The per-MDP constants of the fast path and its batched operations.

    Args:
        mdp: the FiniteMDP (with features: the paper's projected operator needs Phi).
        noise: amplitude iota of the uniform noise (ProjectedGreedy's ``noise``).
        noise_model: ProjectedGreedy's ``noise_model``.
        constant_feature: ProjectedGreedy's ``constant_feature``.
        value: ProjectedGreedy's ``value`` (how CPI+'s candidates are scored).
        solvers: the solver thresholds (:class:`nsrl.batched.linalg.solvers.Solvers`).
    """

    def __init__(self, mdp, noise: float = 0.1, noise_model: str = "relative",
                 constant_feature: bool = False, value: str = "exact",
                 solvers: Solvers = DEFAULT):
        if mdp.features is None:
            raise ValueError("the batched engines run the projected operator: the MDP needs "
                             "features Phi (e.g. nsrl.garnet draws them).")
        options = check_params(ProjectedGreedy.params, {
            "noise": noise, "noise_model": noise_model, "constant_feature": constant_feature,
            "value": value}, "the projected operator")
        self.mdp, self.noise, self.noise_model = mdp, options["noise"], options["noise_model"]
        self.value_estimate, self.solvers = options["value"], solvers
        constant_feature = options["constant_feature"]
        self.n, self.gamma = mdp.n_states, mdp.gamma
        self.nxt, self.probs = mdp.successors
        self.R = np.ascontiguousarray(mdp.R, dtype=np.float64)
        # precision of the LU factors (:meth:`factor`), and of systems kept only to be factored
        self.lu_dtype = np.float32 if self.n >= solvers.mixed_min_states else np.float64
        self.phi = projection_features(mdp.features, constant_feature)
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

    def policy_values(self, acts: np.ndarray, x0=None) -> np.ndarray:
        """v_pi of deterministic policies, by the cheapest exact method for the MDP.

        b = 1: the successor map's cycles (:func:`gmres.functional_values`, O(n));
        b >= ``solvers.gmres_min_branching``: certified GMRES from ``x0`` (P_pi mixes fast);
        otherwise one batched LU.
        """
        width = self.nxt.shape[2]
        if width == 1:
            c = self.mdp.R[self.states, acts]
            return gmres.functional_values(self.nxt, acts[:, None, :], c, self.gamma)
        if width >= self.solvers.gmres_min_branching:
            start = self.mdp.R[self.states, acts] if x0 is None else x0
            return self.loop_krylov(acts[:, None, :], start)
        A = self.systems(acts)
        return np.linalg.solve(A, self.mdp.R[self.states, acts][..., None])[..., 0]

    def systems(self, acts: np.ndarray, dtype=np.float64) -> np.ndarray:
        """A[r] = I - gamma P_{acts[r]} for deterministic policies (built sparsely).

        ``dtype=Batch.lu_dtype`` for a running system that only feeds :meth:`factor`.
        """
        A = np.empty((len(acts), self.n, self.n), dtype=dtype)
        self.mix(A, np.arange(len(acts)), acts, np.ones(len(acts)))
        return A

    def mix(self, A: np.ndarray, runs: np.ndarray, acts: np.ndarray, alpha) -> None:
        """A[runs] <- (1 - alpha) A[runs] + alpha (I - gamma P_acts), in place."""
        sparse.mix_systems(A, self.nxt, self.probs, self.gamma, np.asarray(runs, dtype=np.int64),
                            acts, np.broadcast_to(np.asarray(alpha, dtype=np.float64),
                                                  (len(runs),)))

    def table_systems(self, T: np.ndarray) -> np.ndarray:
        """I - gamma P_T for tables T[r, s, a], dense (the direct fallbacks of the solvers)."""
        return self.eye - self.gamma * np.einsum("rsa,sat->rst", T, self.mdp.P)

    def table_values(self, T: np.ndarray, rhs: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """x[r] = (I - gamma P_{T[r]})^{-1} rhs[r]: certified GMRES from ``x0``.

        Runs that do not certify within the iteration budget are solved directly.
        """
        x, ok, _ = gmres.table_values(self.nxt, self.probs, self.gamma, T, rhs, x0)
        if not ok.all():
            x[~ok] = self.solve_tables(T[~ok], rhs[~ok])
        return x

    def solve_tables(self, T: np.ndarray, rhs: np.ndarray, transpose: bool = False) -> np.ndarray:
        """x[r] = (I - gamma P_{T[r]})^{-1} rhs[r] (or the transposed system), by dense LU.

        The direct fallback of the iterative solvers.
        """
        A = self.table_systems(T)
        A = np.swapaxes(A, 1, 2) if transpose else A
        return np.linalg.solve(A, rhs[..., None])[..., 0]

    def evaluate_mixtures(self, Asys, runs, rpi, acts, owner, steps) -> np.ndarray:
        """Values of the mixtures (1 - steps[c]) pi_{owner[c]} + steps[c] pi'_{owner[c]}.

        ``Asys`` holds every run's I - gamma P_pi; ``runs[o]`` is the run of owner o (rpi
        and acts are indexed by owner).
        """
        A = np.empty((owner.size, self.n, self.n))
        rhs = np.empty((owner.size, self.n))
        sparse.mixed_systems(self.mdp.P, self.mdp.R, self.gamma, Asys, runs[owner], rpi, acts,
                              owner, steps, A, rhs)
        return np.linalg.solve(A, rhs[..., None])[..., 0]

    def factor(self, A: np.ndarray, runs=None) -> list:
        """Single-precision LU factors (LAPACK sgetrf) of the systems A[r], r in ``runs``.

        Half the memory traffic and fewer flops than double precision; the solves are
        refined back to double precision (:meth:`solve_factored`). Below
        ``solvers.mixed_min_states`` the factors are double (call overheads dominate there):
        ``lu_dtype``. A[r] is C-ordered, so A[r].T is Fortran-ordered: LAPACK factors A^T and
        solves with the transposed flag.
        """
        runs = range(len(A)) if runs is None else runs
        getrf = lapack.sgetrf if self.lu_dtype == np.float32 else lapack.dgetrf
        return [getrf(A[r].T.astype(self.lu_dtype, copy=False))[:2] for r in runs]

    def solve_factored(self, lus: list, T: np.ndarray, rhs: np.ndarray,
                       transpose: bool = False, rtol: float = REFINE_RTOL,
                       x0=None) -> np.ndarray:
        """x[i] = A_i^{-1} rhs[i] (or A_i^{-T} rhs[i]), A_i = I - gamma P_{T[i]}, certified.

        Mixed-precision iterative refinement (Wilkinson; Higham, *Accuracy and Stability of
        Numerical Algorithms*, ch. 12): the single-precision LU solves for the correction of
        the double-precision residual (sparse, through the table T[i]) until
        ||rhs - A x|| <= rtol ||rhs|| (each sweep gains ~ cond(A) eps_32 ~ 1e-5). Runs that
        do not certify within MAX_REFINE sweeps are solved in double precision. With
        single-precision factors, a close guess ``x0`` (the previous iteration's solution)
        is refined instead of solving from scratch: one sweep fewer (measured).
        """
        trans = int(not transpose)

        def correction(i, y):
            lu, piv = lus[i]
            if lu.dtype == np.float64:
                return lapack.dgetrs(lu, piv, y, trans=trans)[0]
            return lapack.sgetrs(lu, piv, y.astype(np.float32), trans=trans)[0]

        if x0 is not None and lus and lus[0][0].dtype == np.float32:
            x = np.array(x0, dtype=np.float64)
        else:
            x = np.stack([correction(i, y) for i, y in enumerate(rhs)]).astype(np.float64)
        tol = rtol * np.linalg.norm(rhs, axis=1)
        for _ in range(MAX_REFINE):
            res = rhs - (x - self.gamma * gmres.table_mv(self.nxt, self.probs, T, x, transpose))
            left = np.flatnonzero(np.linalg.norm(res, axis=1) > tol)
            if not left.size:
                return x
            for i in left:
                x[i] += correction(i, res[i])
        x[left] = self.solve_tables(T[left], rhs[left], transpose)
        return x

    def occupancy_factored(self, lus: list, T: np.ndarray, x0=None) -> np.ndarray:
        """:meth:`occupancy` from the runs' LU factors (no new factorisation).

        ``x0``: a guess to refine from (:meth:`solve_factored`).
        """
        nu = np.broadcast_to((1.0 - self.gamma) * self.mdp.start, (len(lus), self.n))
        d = self.solve_factored(lus, T, nu, transpose=True, rtol=OCCUPANCY_RTOL, x0=x0)
        d = np.clip(d, 0.0, None)
        return d / d.sum(axis=1, keepdims=True)

    def propagate(self, acts: np.ndarray, M: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out = gamma P_pi M for deterministic policies (compiled, sparse successors)."""
        sparse.propagate(self.nxt, self.probs, self.gamma, acts, M, out)
        return out

    def loop_value(self, window: np.ndarray) -> np.ndarray:
        """Value of the loops (window[r, 0], ..., window[r, m-1])^inf (window[r, 0] first).

        As nsrl.exact: c = T_{pi_1}...T_{pi_m} 0, M = gamma^m P_{pi_1}...P_{pi_m}, then
        v = (I - M)^{-1} c.
        """
        n_runs, m, n = window.shape
        c = np.zeros((n_runs, n))
        M = np.broadcast_to(self.eye, (n_runs, n, n)).copy()
        buf = np.empty_like(M)
        for i in range(m - 1, -1, -1):
            c = self.apply(window[:, i], c)
            self.propagate(window[:, i], M, buf)
            M, buf = buf, M
        return self.solve_loop(M, c)

    def loop_krylov(self, window: np.ndarray, x0: np.ndarray, c=None) -> np.ndarray:
        """:meth:`loop_value` by certified GMRES from ``x0`` (:mod:`nsrl.batched.linalg.gmres`).

        No dense matrix is formed: (I - M) x costs m sparse products. Without ``c`` (the
        loop's T_{pi_1}...T_{pi_m} 0) the loop's fixed point is solved for directly
        (:func:`gmres.loop_fixed_points`: c is never formed). Runs whose solve does not
        certify are solved directly. On b = 1 MDPs the loop is a map: solved exactly by
        :func:`gmres.functional_values` instead.
        """
        window = np.ascontiguousarray(window)
        if self.nxt.shape[2] == 1:  # b = 1: the loop is a map, solved exactly in O(m n)
            if c is None:
                c = gmres.loop_rhs(self.nxt, self.probs, self.mdp.R, self.gamma, window)
            return gmres.functional_values(self.nxt, window, c, self.gamma ** window.shape[1])
        if c is None:
            x, ok, _ = gmres.loop_fixed_points(self.nxt, self.probs, self.R, self.gamma,
                                                window, x0)
        else:
            x, ok, _ = gmres.loop_values(self.nxt, self.probs, window,
                                          self.gamma ** window.shape[1], c, x0)
        if not ok.all():
            x[~ok] = self.loop_value(window[~ok])
        return x

    def solve_loop(self, M: np.ndarray, c: np.ndarray) -> np.ndarray:
        """v = (I - M)^{-1} c for every run."""
        return np.linalg.solve(self.eye - M, c[..., None])[..., 0]

    def loss(self, V: np.ndarray) -> np.ndarray:
        """mu (v* - v) with mu uniform, for every run."""
        return (self.v_star - V) @ self.mu


class Noise:
    """The runs' noise draws u[r, k, s] ~ U[-iota, iota], in ProjectedGreedy's order.

    ``noise[runs, k]`` is iteration k's greedy draw for ``runs``. Drawn up front by default
    (one Generator call of shape (K, n) per run gives the same numbers as K calls of n);
    ``lazy`` draws when asked instead, because a run whose operator also estimates values
    (CPI+ scoring by ``value="estimated"``) draws a data-dependent number of vectors in
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
        if not self.lazy:
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
