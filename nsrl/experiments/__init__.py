"""Reproducing section 5 of Scherrer (2014): presets (data), runner, storage, statistics.

    from nsrl.experiments import load_sweep, run_sweep
    run_sweep(load_sweep("quick"), "results/quick", jobs=2)
    from nsrl.experiments.report import write_report   # figures + summary.md
    write_report("results/quick")

The command line is ``nsrl reproduce`` / ``nsrl plot`` (:mod:`nsrl.cli.reproduce`); every run
of a sweep goes through :func:`nsrl.run`, which picks the batched engines where they apply.
See docs/reproduce.md.
"""

from nsrl.experiments.presets import PRESETS, Shard, Sweep, load_sweep
from nsrl.experiments.runner import compute_shard, run_sweep
from nsrl.experiments.stats import final_summary, paper_stats, per_mdp

__all__ = [
    "PRESETS",
    "Shard",
    "Sweep",
    "compute_shard",
    "final_summary",
    "load_sweep",
    "paper_stats",
    "per_mdp",
    "run_sweep",
]
