"""Mixed-precision LU with iterative refinement: systems factored once, solved to double precision.

API(alpha) and CPI(alpha) factor their running systems I - gamma P_pi once per iteration in
single precision (LAPACK sgetrf: half the memory traffic of double precision) and refine the
solves to a double-precision residual (Wilkinson; Higham, *Accuracy and Stability of
Numerical Algorithms*, ch. 12), through the sparse table T; the same factors give d_{pi,nu}
at the next iteration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import lapack

from nsrl.batched.linalg import sparse
from nsrl.batched.linalg.solvers import solve_tables
from nsrl.batched.linalg.tolerances import OCCUPANCY_RTOL, REFINE_RTOL

if TYPE_CHECKING:
    from nsrl.batched.linalg.state import Batch

MAX_REFINE = 6  # refinement sweeps before a direct solve (solve_factored)


def factor(b: Batch, A: np.ndarray, runs=None) -> list:
    """Single-precision LU factors (LAPACK sgetrf) of the systems A[r], r in ``runs``.

    Half the memory traffic and fewer flops than double precision; the solves are
    refined back to double precision (:func:`solve_factored`). Below
    ``solvers.mixed_min_states`` the factors are double (call overheads dominate there):
    ``lu_dtype``. A[r] is C-ordered, so A[r].T is Fortran-ordered: LAPACK factors A^T and
    solves with the transposed flag.
    """
    runs = range(len(A)) if runs is None else runs
    getrf = lapack.sgetrf if b.lu_dtype == np.float32 else lapack.dgetrf
    return [getrf(A[r].T.astype(b.lu_dtype, copy=False))[:2] for r in runs]


def solve_factored(b: Batch, lus: list, T: np.ndarray, rhs: np.ndarray,
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
        res = rhs - (x - b.gamma * sparse.table_mv(b.nxt, b.probs, T, x, transpose))
        left = np.flatnonzero(np.linalg.norm(res, axis=1) > tol)
        if not left.size:
            return x
        for i in left:
            x[i] += correction(i, res[i])
    x[left] = solve_tables(b, T[left], rhs[left], transpose)
    return x


def occupancy_factored(b: Batch, lus: list, T: np.ndarray, x0=None) -> np.ndarray:
    """d_{pi,nu} from the runs' LU factors (no new factorisation).

    ``x0``: a guess to refine from (:func:`solve_factored`).
    """
    nu = np.broadcast_to((1.0 - b.gamma) * b.mdp.start, (len(lus), b.n))
    d = solve_factored(b, lus, T, nu, transpose=True, rtol=OCCUPANCY_RTOL, x0=x0)
    d = np.clip(d, 0.0, None)
    return d / d.sum(axis=1, keepdims=True)
