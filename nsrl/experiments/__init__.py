"""Reproducing section 5 of Scherrer (2014): experiments as units, the runner, storage, statistics.

    from nsrl.experiments import load_experiment, run_experiment
    run_experiment(load_experiment("quick"), "results/quick", jobs=2)  # sweeps, report, analysis

Each experiment is a folder (``paper/``, ``quick/``, ``sensitivity/``, ``sampled/``: its sweep
as data and its analysis) listed by one registry (:mod:`nsrl.experiments.registry`) that the
command line (``nsrl reproduce`` / ``nsrl plot``, :mod:`nsrl.cli.reproduce`) reads too. Every
run of a sweep goes through :func:`nsrl.run`, which picks the batched engines where they
apply. See docs/reproduce.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nsrl._lazy import lazy_names

if TYPE_CHECKING:  # the names below, for type checkers; at run time each is imported on use
    from nsrl.experiments.execution import check_experiment, run_experiment
    from nsrl.experiments.experiment import Experiment
    from nsrl.experiments.loader import load_experiment, load_sweep
    from nsrl.experiments.registry import EXPERIMENTS, register_experiment
    from nsrl.experiments.runner import run_sweep
    from nsrl.experiments.shards import Shard
    from nsrl.experiments.stats import final_summary, paper_stats, per_mdp
    from nsrl.experiments.sweep import Spec, Sweep
    from nsrl.experiments.worker import compute_shard

# Imported on first use (PEP 562): importing one submodule (nsrl run needs only
# nsrl.experiments.accuracy) must not import the registry, which builds every experiment's
# sweeps and checks their options.
_WHERE = {
    "check_experiment": "execution", "run_experiment": "execution", "Experiment": "experiment",
    "load_experiment": "loader", "load_sweep": "loader", "EXPERIMENTS": "registry",
    "register_experiment": "registry", "run_sweep": "runner", "Shard": "shards",
    "final_summary": "stats", "paper_stats": "stats", "per_mdp": "stats", "Spec": "sweep",
    "Sweep": "sweep", "compute_shard": "worker",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())


__all__ = [
    "EXPERIMENTS",
    "Experiment",
    "Shard",
    "Spec",
    "Sweep",
    "check_experiment",
    "compute_shard",
    "final_summary",
    "load_experiment",
    "load_sweep",
    "paper_stats",
    "per_mdp",
    "register_experiment",
    "run_experiment",
    "run_sweep",
]
