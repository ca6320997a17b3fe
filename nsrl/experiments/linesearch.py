"""CPI+'s line search with few dense solves (the sweep's largest cost, docs/reproduce.md).

CPI+ scores every step a in {min(2^i alpha, 1)} by nu v_a, v_a the value of the mixture
(1 - a) pi + a pi'. With A = I - gamma P_pi, G = gamma (P_pi' - P_pi), e = r_pi' - r_pi and
v = v_pi (A v = r_pi), the mixture's value is v_a = v + delta_a with

    (A - a G) delta_a = a w,   w = e + G v,
    delta_a = sum_j a^{j+1} z_j,   z_0 = A^{-1} w,  z_{j+1} = A^{-1} G z_j   (Neumann series),

which converges when a rho(A^{-1} G) < 1. The z_j are shared by all the steps of a run, so
one LU of A (for A^{-1} G) and one product per term give every small step's value;
rho(A^{-1} G) is about 1-3 on stochastic Garnets (b >= 2) and tens on deterministic ones
(measured). A step's series
value is accepted only if its residual ||(A - a G) v_a - r_a||_inf is below ``RESIDUAL``
(so ||v_a - exact|| <= RESIDUAL / (1 - gamma)); other steps are solved directly. The chosen
step's value, which becomes the next target, is always solved directly.
"""

from __future__ import annotations

import numpy as np

TERMS = 40
RESIDUAL = 1e-10
LARGEST_SERIES_STEP = 0.5


def candidates(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, steps): the steps min(2^i alpha_r, 1), i = 0..ceil(log2(1/alpha_r)), per run."""
    owner, steps = [], []
    for r, a in enumerate(alpha):
        if a > 0:
            n = max(0, int(np.ceil(np.log2(1.0 / a)))) if a < 1.0 else 0
            steps += [min(1.0, a * 2.0**i) for i in range(n + 1)]
            owner += [r] * (n + 1)
    return np.array(owner, dtype=np.int64), np.array(steps, dtype=np.float64)


def series_values(b, Ppi, rpi, v, acts, owner, steps):
    """Values of the candidate mixtures by the Neumann series, and which ones are certified.

    Returns:
        (values[c, s], ok[c]): ok is False where the series value is not certified.
    """
    gamma = b.gamma
    Pn, rn = b.rows(acts)
    A = b.eye - gamma * Ppi
    G = gamma * (Pn - Ppi)
    K = np.linalg.solve(A, G)  # C = A^{-1} G, one LU per run: then one product per term

    def mv(M, x):  # batched matrix-vector products through BLAS
        return np.matmul(M, x[..., None])[..., 0]

    z = np.linalg.solve(A, (rn - rpi + mv(G, v))[..., None])[..., 0]
    Z = [z]
    for _ in range(TERMS - 1):
        z = mv(K, z)
        Z.append(z)
    Z = np.stack(Z, axis=1)  # (runs, terms, states)
    powers = steps[:, None] ** np.arange(1, TERMS + 1)  # a^{j+1}
    values = v[owner] + np.einsum("cj,cjs->cs", powers, Z[owner])
    a = steps[:, None]
    p_x = (1 - a) * _per_owner_matvec(Ppi, owner, values) + a * _per_owner_matvec(Pn, owner, values)
    r_a = (1 - a) * rpi[owner] + a * rn[owner]
    residual = values - gamma * p_x - r_a
    ok = (np.abs(residual).max(axis=1) <= RESIDUAL) & (steps <= LARGEST_SERIES_STEP)
    return values, ok


def _per_owner_matvec(M, owner, X):
    """M[owner[c]] @ X[c] for every candidate c, without copying M per candidate."""
    out = np.empty_like(X)
    for r in np.unique(owner):
        mine = owner == r
        out[mine] = X[mine] @ M[r].T
    return out
