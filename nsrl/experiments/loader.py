"""Experiments and sweeps by name or from a TOML file (what ``nsrl reproduce --preset`` reads).

:func:`load_experiment` takes a registered name or a TOML file, :func:`load_sweep` one sweep
(an experiment's protocol or one of its variants), :func:`experiment_of` the experiment whose
results a folder holds.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.registry import EXPERIMENTS, experiment_names, get_experiment
from nsrl.experiments.sweep import Sweep
from nsrl.plugins import PluginError, load_plugins


def load_experiment(name: str) -> Experiment:
    """A registered experiment by name, or a custom sweep from a TOML file.

    A TOML file holds a :class:`~nsrl.experiments.sweep.Sweep`: its settings, the grid (one
    list per axis of the domain) and the components as ``(name, options)`` tables, e.g.::

        name = "small"
        n_states = [50]
        n_actions = [2, 5]
        branching = [1, 10]
        n_mdps = 4
        n_runs = 8
        schemes = ["api", "psdp", "nspi(5)"]

        [operator]
        name = "lstdq"
        options = {budget = 20000}

    Values are checked, not coerced: ``n_states = "50"`` or ``options = {noise = "0.1"}``
    raise an error naming the field. ``plugins = ["my_module"]`` imports those modules first
    (:mod:`nsrl.plugins`: a module, or a function the module defines), so the sweep may name
    the operators, schemes and domains they register, and set their options.

    Examples:
        >>> load_experiment("sensitivity").variants["absolute-noise"]
        {'operator_options': {'noise_model': 'absolute'}}
    """
    if isinstance(name, str) and name in experiment_names():
        return get_experiment(name)
    path = Path(name)
    if not path.is_file():
        raise ValueError(f"unknown preset {name!r}: expected one of "
                         f"{', '.join(experiment_names())} or a TOML file path. "
                         f"{EXPERIMENTS.unknown(name).partition('. ')[2]}")
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError) as exc:  # unreadable, not UTF-8, or not TOML
        raise ValueError(f"cannot read the preset {str(path)!r} as TOML: {exc}.") from None
    data.setdefault("name", path.stem)
    plugins = data.pop("plugins", [])
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise PluginError(f"the preset's 'plugins' should be a list of module names, got "
                          f"{plugins!r}; e.g. plugins = [\"my_package.nsrl_plugin\"].")
    load_plugins(plugins)
    sweep = Sweep.from_dict(data)
    return Experiment(sweep.name, sweep, question=f"The sweep {sweep.name!r}")


def load_sweep(name: str) -> Sweep:
    """One sweep: an experiment's protocol (its name or a TOML file) or a variant's.

    ``"sensitivity/doubling"`` is the variant ``doubling`` of ``sensitivity``; an experiment's
    name alone gives its base protocol (:func:`load_experiment` gives every variant).

    Examples:
        >>> load_sweep("paper").scheme_iterations
        19440000
        >>> load_sweep("sensitivity/doubling").line_search
        'doubling'
    """
    base, _, variant = str(name).partition("/")
    if not variant or base not in EXPERIMENTS:
        return load_experiment(name).base
    sweeps = get_experiment(base).sweeps()
    if variant not in sweeps:
        raise ValueError(f"unknown variant {variant!r} of {base!r}; expected one of "
                         f"{', '.join(sweeps)}.")
    return sweeps[variant]


def experiment_of(folder: str | Path) -> Experiment | None:
    """The registered experiment with variants whose results ``folder`` holds, if any."""
    if (Path(folder) / "manifest.json").exists():
        return None  # one sweep's folder
    return next((e.experiment for e in EXPERIMENTS.entries()
                 if e.experiment.variants and e.experiment.holds(folder)), None)


