"""Which discounts the exact backend can certify: the measurement behind GAMMA_MAX.

For each gamma (the check of ``nsrl.exact.operators.GAMMA_MAX`` lifted for the run), v* on a
few models, and on Garnet(400, 2, 3) three iterations of API too (the CLI's ``nsrl run
--scheme api --garnet 400,2,3``: policy values and losses certified as well): "ok" with the
certified v* bound relative to the tolerance, or the first NotCertifiedError, and the time.

    python benchmarks/exact_gamma_limit.py
"""

from __future__ import annotations

import time

import numpy as np

import nsrl
from nsrl.exact import ExactBackend, NotCertifiedError, operators

GAMMAS = (1 - 1e-4, 1 - 1e-5, 1 - 3e-6, 1 - 1e-6)
MODELS = {
    "garnet(40, 2, 3)": lambda g: nsrl.garnet(40, 2, 3, gamma=g, seed=0),
    "garnet(400, 2, 3)": lambda g: nsrl.garnet(400, 2, 3, gamma=g, seed=0),
    "garnet(3000, 10, 2)": lambda g: nsrl.garnet(3000, 10, 2, gamma=g, seed=0),
    "gridworld(30)": lambda g: nsrl.gridworld(30, gamma=g, seed=0),
    "mountain_car(30, 30)": lambda g: nsrl.mountain_car(30, 30, gamma=g),
}


def attempt(mdp, api: bool) -> str:
    t = time.perf_counter()
    try:
        b = ExactBackend(mdp)
        b.optimal_value()
        what = f"v* bound/tol {b.v_star_bound / b.value_tol:.2g}"
        if api:
            nsrl.run(nsrl.make_scheme("api"), nsrl.ProjectedGreedy(mdp), 3,
                     rng=np.random.default_rng(0))
        what = "ok, " + what
    except NotCertifiedError as e:
        what = f"NOT CERTIFIED ({str(e)[:60]}...)"
    return f"{what}, {time.perf_counter() - t:.2f} s"


def main():
    operators.GAMMA_MAX = 1.0  # measure beyond the limit
    for name, make in MODELS.items():
        for g in GAMMAS:
            result = attempt(make(g), api="400" in name)
            print(f"{name:22s} 1 - gamma = {1 - g:.0e}: {result}", flush=True)


if __name__ == "__main__":
    main()
