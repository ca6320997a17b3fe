"""The tolerances every certified solve of the batched engines is accepted by, stated once."""

# The tolerances every certified solve is accepted by, stated once. A solution is certified
# when its double-precision residual ||b - A x|| is at most RTOL ||b|| (then ||x - x*||_inf <=
# RTOL ||b|| / (1 - gamma)): GMRES, the low-rank updates, the preconditioned solves.
RTOL = 1e-13
# Mixed-precision refinement (refine.solve_factored) stops at a relative residual of 1e-12.
REFINE_RTOL = 1e-12
# d_{pi,nu} weighs the projection and sets CPI's step: 1e-12 keeps the steps equal to the
# reference to ~1e-12 (1e-10 let them drift by 8e-10 over the full protocol).
OCCUPANCY_RTOL = 1e-12
