"""The registry of experiments: the one list ``nsrl reproduce`` and the Python API read.

Every experiment is a folder of :mod:`nsrl.experiments` (its sweep and analysis; see
:mod:`nsrl.experiments.experiment`); :func:`register_experiment` adds one of your own. Reading
one by name or from a TOML file is :mod:`nsrl.experiments.loader`'s; running one is
:mod:`nsrl.experiments.execution`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nsrl.experiments import bigger, paper, quick, sampled, sensitivity, tetris
from nsrl.experiments.experiment import Experiment
from nsrl.plugins import BUILT_IN, origin
from nsrl.registry import Entry, Registry


@dataclass(frozen=True)
class ExperimentEntry(Entry):
    """One registered experiment: ``factory`` is the :class:`Experiment` itself."""

    kind = "experiments"

    @property
    def experiment(self) -> Experiment:
        """The experiment."""
        return self.factory

    def __getattr__(self, name: str) -> Any:
        """The experiment's own attributes (``base``, ``variants``, ``sweeps``...)."""
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.factory, name)


EXPERIMENTS: Registry[ExperimentEntry] = Registry("experiments", "nsrl.register_experiment")


def register_experiment(experiment: Experiment, *, replace: bool = False) -> Experiment:
    """Make ``experiment`` known by its name (to ``nsrl reproduce --preset`` too).

    Raises:
        TypeError: not an Experiment.
        ValueError: its name is taken and ``replace`` is False.
    """
    if not isinstance(experiment, Experiment):
        raise TypeError(f"expected an nsrl.experiments.Experiment, got "
                        f"{type(experiment).__name__}.")
    EXPERIMENTS.register(ExperimentEntry(experiment.name, experiment,
                                         summary=experiment.question), replace=replace)
    return experiment


def experiment_names() -> tuple[str, ...]:
    """Every registered experiment name (read live: plugins included)."""
    return EXPERIMENTS.names()


def get_experiment(name: str) -> Experiment:
    """The registered experiment ``name`` (ValueError naming the registered ones)."""
    return EXPERIMENTS.lookup(name).experiment


with origin(BUILT_IN):
    for _module in (quick, paper, sensitivity, sampled, bigger):
        register_experiment(_module.EXPERIMENT)
    register_experiment(bigger.POWERED)
    register_experiment(bigger.POWERED_TINY)
    for _tetris in (tetris.EXPERIMENT, tetris.LARGE_EXPERIMENT, tetris.TINY_EXPERIMENT):
        register_experiment(_tetris)
EXPERIMENTS.seal()
