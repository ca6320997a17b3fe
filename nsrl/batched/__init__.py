"""The batched engines: every scheme of section 2, R runs on one MDP at once, exactly.

:func:`nsrl.run` calls :func:`run_batched` for ``engine="batched"`` (and for ``"auto"`` where
it can): the runs' losses equal the reference loop's for the same Generators (tested to 1e-8).
Each run draws its noise in the reference order (one uniform vector per greedy call), takes
the same greedy actions and records the loss of the same output. The decisions (steps,
stopping, candidates, tie rules, memory) are the reference schemes' own, read from the scheme
object through :mod:`nsrl.schemes.rules`; only how the values are obtained differs:

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
``nsrl.run(engine="auto")`` runs it on the reference loop instead.
"""

from __future__ import annotations

import numpy as np

from nsrl.batched.linalg.solvers import DEFAULT, Solvers
from nsrl.batched.linalg.state import Batch
from nsrl.batched.registry import ENGINES, engine_for, has_engine, register
from nsrl.schemes import History


def run_batched(scheme, batch: Batch, rngs, n_iterations: int) -> History:
    """Run ``scheme`` once per Generator of ``rngs`` on ``batch``'s MDP and operator.

    Args:
        scheme: a scheme object whose exact class has an engine (:func:`engine_for`).
        batch: the MDP's batched state, with the operator's options (:class:`Batch`).
        rngs: one numpy Generator per run (drives that run's noise).
        n_iterations: iterations K per run.

    Returns:
        A History with arrays of shape (R, K), row r being run r; no transitions are drawn
        (``samples`` is 0) and the greedy errors are not measured (NaN).

    Examples:
        >>> import numpy as np, nsrl
        >>> b = Batch(nsrl.garnet(20, 2, 2, seed=0))
        >>> run_batched(nsrl.API(), b, [np.random.default_rng(i) for i in range(3)], 5).losses.shape
        (3, 5)
    """
    engine = engine_for(scheme)
    if not isinstance(n_iterations, (int, np.integer)) or n_iterations < 1:
        raise ValueError(f"n_iterations should be a positive int, got {n_iterations!r}.")
    U = batch.draws(rngs, int(n_iterations),
                    lazy=batch.value_estimate == "estimated" and batch.noise > 0)
    shape = U.shape[:2]
    out = {"loss": np.full(shape, np.nan), "memory": np.zeros(shape, dtype=np.int64),
           "step": np.full(shape, np.nan)}
    engine(batch, scheme, U, out)
    return History(losses=out["loss"], memory=out["memory"], steps=out["step"],
                   samples=np.zeros(shape, dtype=np.int64), errors=np.full(shape, np.nan),
                   engine="batched")


# The engines register themselves on import (one module per scheme, as nsrl.schemes).
from nsrl.plugins import BUILT_IN, origin  # noqa: E402

with origin(BUILT_IN):
    from nsrl.batched import api, cpi, nspi, psdp  # noqa: E402, F401
ENGINES.seal()

__all__ = ["DEFAULT", "ENGINES", "Batch", "Solvers", "engine_for", "has_engine", "register",
           "run_batched"]
