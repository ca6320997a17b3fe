"""Which exact method the batched engines use, by the MDP's size: the thresholds, stated once.

Each threshold was measured on this project's 2-core machine at the paper's sizes (n_S in
{50, 100, 200}, n_A in {2, 5, 10}, b in {1, 2, 10}); every method is exact (certified by its
residual, with a direct fallback), so the thresholds decide speed, never results. Tests pass
a :class:`Solvers` with other thresholds to drive small MDPs through every branch.
"""

from __future__ import annotations

from dataclasses import dataclass

# The tolerances every certified solve is accepted by, stated once. A solution is certified
# when its double-precision residual ||b - A x|| is at most RTOL ||b|| (then ||x - x*||_inf <=
# RTOL ||b|| / (1 - gamma)): GMRES, the low-rank updates, the preconditioned solves.
RTOL = 1e-13
# Mixed-precision refinement (Batch.solve_factored) stops at a relative residual of 1e-12.
REFINE_RTOL = 1e-12
# d_{pi,nu} weighs the projection and sets CPI's step: 1e-12 keeps the steps equal to the
# reference to ~1e-12 (1e-10 let them drift by 8e-10 over the full protocol).
OCCUPANCY_RTOL = 1e-12


@dataclass(frozen=True)
class Solvers:
    """The solver choices of the batched engines.

    Attributes:
        gmres_min_branching: deterministic policies (API, NSPI's and PSDP's loops) are
            evaluated by certified GMRES from this branching b on: ~40 Krylov steps at b = 10
            beat one LU at n_S = 200, ~80 at b = 2 do not. Below it: an LU, or at b = 1 the
            O(n) functional-graph solve (always used at b = 1).
        gmres_min_states: API(alpha)'s mixtures by GMRES on the mixture's table (at
            b >= ``gmres_min_branching``) from this many states on: ~30 Krylov steps from the
            previous value take 0.55-0.8 of an LU's time at n_S = 200, 1.3-2.5 times it at
            n_S = 50-100.
        mixed_min_states: LU factors in single precision, refined to double precision, from
            this many states on (API(alpha), CPI(alpha)): the refinement pays from n_S = 150;
            at 100 and below the call overheads dominate.
        woodbury_min_states: API by Sherman-Morrison-Woodbury updates of each run's inverse
            from this many states on (for 1 < b < ``gmres_min_branching`` and
            n_A <= ``woodbury_max_actions``): faster than an LU per iteration only there.
        woodbury_max_actions: see ``woodbury_min_states`` (more actions, more changed states).
        psdp_dense_max: PSDP keeps its loop's matrix M dense up to this many states (one
            sparse product and one small LU per iteration beat GMRES over a window of up to
            100 policies there); above, certified GMRES on the window.
    """

    gmres_min_branching: int = 5
    gmres_min_states: int = 150
    mixed_min_states: int = 150
    woodbury_min_states: int = 150
    woodbury_max_actions: int = 5
    psdp_dense_max: int = 100


DEFAULT = Solvers()
