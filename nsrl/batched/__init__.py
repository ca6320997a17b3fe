"""The batched engines: every scheme of section 2, R runs on one MDP at once, exactly.

``simulate(mdp, scheme, rngs, n_iterations)`` gives the same losses as running
``nsrl.run(make_scheme(scheme), ProjectedGreedy(mdp, noise), n_iterations, rng=rng)`` for each
Generator of ``rngs`` (tested to 1e-8): each run draws its noise in the reference order (one
uniform vector per greedy call), takes the same greedy actions and records the loss of the
same output. The decisions (steps, stopping, candidates, tie rules, memory) are the reference
schemes' own (:mod:`nsrl.schemes.rules`); only how the values are obtained differs:

* the R runs that share an MDP are batched, Pi_{Phi,nu} is precomputed once per MDP, and
  Q-values / T_pi v are compiled loops over the sparse successors (b per state);
* deterministic policies and loops of them (API, NSPI(m), PSDP) avoid dense solves: the
  functional-graph solve on deterministic MDPs, low-rank updates, certified GMRES through the
  sparse successors, warm-started (:mod:`nsrl.batched.api`, :mod:`~nsrl.batched.nspi`,
  :mod:`~nsrl.batched.psdp`);
* mixtures (API(alpha), the CPI family) keep their tables and systems as running sums,
  factored once per iteration (mixed precision on large MDPs) or solved by GMRES, and CPI+
  scores all its candidate steps on one certified Krylov subspace (:mod:`nsrl.batched.cpi`).

Which method is used where is :class:`~nsrl.batched.linalg.solvers.Solvers` (thresholds
stated once, measured). Every iterative result is certified by its double-precision residual
and falls back to a direct solve when it does not certify.

Engines are registered per scheme class and looked up by exact type
(:mod:`nsrl.batched.registry`): a scheme class without an engine raises TypeError here, and
the sweep runner runs it with the reference ``nsrl.run`` instead.
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg.batch import Batch
from nsrl.batched.linalg.solvers import DEFAULT, Solvers
from nsrl.batched.registry import ENGINES, engine_for, has_engine, register
from nsrl.schemes import make_scheme


def simulate(mdp, scheme, rngs, n_iterations: int = 100, noise: float = 0.1,
             noise_model: str = "relative", *, constant_feature: bool = False,
             value: str = "exact", solvers: Solvers = DEFAULT) -> dict[str, np.ndarray]:
    """Run ``scheme`` once per Generator of ``rngs`` on ``mdp`` with the paper's operator.

    Args:
        mdp: a FiniteMDP with features (e.g. from :func:`nsrl.garnet`).
        scheme: a scheme name (``"nspi(5)"``) or object of :mod:`nsrl.schemes`.
        rngs: one numpy Generator per run (drives that run's noise).
        n_iterations: iterations K per run.
        noise: the operator's noise amplitude iota (:class:`nsrl.ProjectedGreedy`).
        noise_model: ProjectedGreedy's ``noise_model``.
        constant_feature: ProjectedGreedy's ``constant_feature``.
        value: ProjectedGreedy's ``value`` (CPI+'s scores).
        solvers: which exact method to use by MDP size (speed only; results are equal).

    Returns:
        ``{"loss": (R, K) float, "memory": (R, K) int, "step": (R, K) float}``, row r
        being run r, as ``History.losses/memory/steps`` of the reference path.

    Raises:
        TypeError: when the scheme's exact class has no batched engine (:func:`engine_for`).

    Examples:
        >>> import numpy as np, nsrl
        >>> mdp = nsrl.garnet(20, 2, 2, seed=0)
        >>> out = simulate(mdp, "api", [np.random.default_rng(i) for i in range(3)], 5)
        >>> out["loss"].shape
        (3, 5)
    """
    scheme = make_scheme(scheme) if isinstance(scheme, str) else scheme
    engine = engine_for(scheme)
    if not isinstance(n_iterations, (int, np.integer)) or n_iterations < 1:
        raise ValueError(f"n_iterations should be a positive int, got {n_iterations!r}.")
    batch = Batch(mdp, noise, noise_model, constant_feature, value, solvers)
    U = batch.draws(rngs, int(n_iterations), lazy=value == "estimated" and batch.noise > 0)
    shape = U.shape[:2]
    out = {"loss": np.full(shape, np.nan), "memory": np.zeros(shape, dtype=np.int64),
           "step": np.full(shape, np.nan)}
    engine(batch, scheme, U, out)
    return out


# The engines register themselves on import (one module per scheme, as nsrl.schemes).
from nsrl.batched import api, cpi, nspi, psdp  # noqa: E402, F401

__all__ = ["ENGINES", "Solvers", "engine_for", "has_engine", "register", "simulate"]
