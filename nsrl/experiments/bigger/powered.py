"""``bigger-powered``: the bigger family with replicated units, converged curves and statistics.

The ``bigger`` family's protocol (the same four greedy operators on both structured domains,
the RBF features, 10^5 transitions per call for the learners) with what a verdict needs:

* **units**: at 10^4 states :data:`UNITS` [10^4] = 10 independent units per cell, at 10^5
  :data:`UNITS` [10^5] = 5. A unit is a shard run once: on the grid worlds an MDP (its seed
  draws the obstacles), on the mountain car (one model) a set of run seeds, those of the
  operator's noise and samples (the shard index enters the run seeds,
  :meth:`nsrl.experiments.sweep.Sweep.run_rngs`). The car with the exact operator has no
  random part: :data:`CAR_EXACT_UNITS` = 2 units check that its value repeats (its interval
  has width 0);
* **iterations**: :data:`ITERATIONS` = 100, checked on the results: every exact-operator curve
  must be flat, its last 10% of iterations moving the loss by less than 1% of pi_0's loss on
  its unit (:func:`nsrl.experiments.bigger.inference.flatness`, at least 50 iterations);
* **schemes**: the bigger family's seven and NSPI(10), NSPI(30), so that O5 can be judged.

Each (domain, operator, size) is a variant (``grid-exact-1e4`` ...), an ordinary resumable
results folder, and the runner's shards (one per unit) spread over workers and Dask. The 10^4
variants come first, so a partial run (``--limit``, or an interruption; finish with
``--resume``) covers the smaller size first. :func:`family` builds the same family at any
size, units and iterations: :data:`TINY` (``bigger-powered-tiny``) runs it in seconds.
"""

from __future__ import annotations

from nsrl.experiments.bigger.analysis import analyse_powered
from nsrl.experiments.bigger.sweep import SCHEMES as BIGGER_SCHEMES
from nsrl.experiments.bigger.sweep import SWEEP as BIGGER
from nsrl.experiments.experiment import Experiment
from nsrl.experiments.sweep import Sweep

SCHEMES = (*BIGGER_SCHEMES, "nspi(10)", "nspi(30)")
UNITS = {10_000: 10, 100_000: 5}
CAR_EXACT_UNITS = 2
ITERATIONS = 100
# Every operator with its defaults: the rollout variants' committed shards were recomputed
# with the soft-label fit (rollout-csc's default) when it replaced the logistic one.
OPERATORS: dict[str, dict[str, object]] = {
    "exact": {"operator": "exact"}, "projected": {}, "lstdq": {"operator": "lstdq"},
    "rollout": {"operator": "rollout-csc"}}
DOMAINS = {"grid": {"domain": "gridworld"}, "car": {"domain": "mountain-car"}}


def size_label(n: int) -> str:
    """``1e4`` for 10 000, or the number itself when it is not a power of ten.

    Examples:
        >>> size_label(100_000), size_label(36)
        ('1e5', '36')
    """
    text = str(n)
    return f"1e{len(text) - 1}" if text.startswith("1") and set(text[1:]) <= {"0"} \
        and n >= 10 else text


def family(name: str, units: dict[int, int], iterations: int, *, car_exact_units: int = 2,
           base: Sweep = BIGGER, schemes: tuple[str, ...] = SCHEMES, **change) -> Experiment:
    """The powered family: one variant per domain, operator and size (module doc).

    Args:
        name: the experiment's name.
        units: n_states -> units (MDPs of the grid world, run-seed sets of the car).
        iterations: iterations of every run.
        car_exact_units: units of the car with the exact operator (deterministic).
        base: the protocol the variants change (default: the ``bigger`` family's).
        schemes: the schemes run on every unit.
        **change: further changes of every variant (e.g. ``n_features``, or
            ``carried={"budget": 200}``: the learners' budget, see
            :data:`nsrl.experiments.bigger.sweep.SWEEP`).
    """
    if not units or any(n < 1 or u < 1 for n, u in units.items()):
        raise ValueError(f"family: units should map n_states to a positive count, got {units}.")
    variants = {}
    for n, count in units.items():
        for dom, fields in DOMAINS.items():
            for op, operator in OPERATORS.items():
                mdps = min(count, car_exact_units) if (dom, op) == ("car", "exact") else count
                variants[f"{dom}-{op}-{size_label(n)}"] = {
                    **fields, **operator, "n_states": (n,), "n_mdps": mdps, "n_runs": 1,
                    "n_iterations": iterations, "schemes": schemes, **change}
    question = ("Section 5 on bigger structured domains, with replicated units, converged "
                "curves, intervals and paired tests")
    return Experiment(name, base, variants, question, analyse_powered,
                      analysis_reads=(f"{name}_pi0.csv",))


EXPERIMENT = family("bigger-powered", UNITS, ITERATIONS, car_exact_units=CAR_EXACT_UNITS)
TINY = family("bigger-powered-tiny", {25: 2, 36: 2}, 4, n_features=9, carried={"budget": 200})
"""The same family in seconds: 25 and 36 cells, 2 units each, 4 iterations, 200 transitions."""
