"""The registry of experiments: the one list ``nsrl reproduce`` and the Python API read.

Every experiment is a folder of :mod:`nsrl.experiments` (its sweep and analysis; see
:mod:`nsrl.experiments.experiment`); :func:`register_experiment` adds one of your own.
:func:`load_experiment` takes a registered name or a TOML file, :func:`run_experiment` runs
every sweep of an experiment (resumable) and then its analysis, as the command line does::

    from nsrl.experiments import load_experiment, run_experiment
    run_experiment(load_experiment("sensitivity"), "results/sens", jobs=2)
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nsrl.experiments import bigger, paper, quick, sampled, sensitivity
from nsrl.experiments.experiment import Experiment
from nsrl.experiments.presets import Sweep
from nsrl.plugins import PluginError, ensure_installed, load_plugins

if TYPE_CHECKING:
    from nsrl.experiments.report import Coverage

OnSweep = Callable[[str, Path, dict], object]  # on_sweep(variant, folder, result)

EXPERIMENTS: dict[str, Experiment] = {}


def register_experiment(experiment: Experiment) -> Experiment:
    """Make ``experiment`` known by its name (to ``nsrl reproduce --preset`` too)."""
    if not isinstance(experiment, Experiment):
        raise TypeError(f"expected an nsrl.experiments.Experiment, got "
                        f"{type(experiment).__name__}.")
    EXPERIMENTS[experiment.name] = experiment
    return experiment


for _module in (quick, paper, sensitivity, sampled, bigger):
    register_experiment(_module.EXPERIMENT)
register_experiment(bigger.POWERED)
register_experiment(bigger.POWERED_TINY)


def experiment_names() -> tuple[str, ...]:
    """Every registered experiment name (read live: plugins included)."""
    ensure_installed()
    return tuple(EXPERIMENTS)


def load_experiment(name: str) -> Experiment:
    """A registered experiment by name, or a custom sweep from a TOML file.

    A TOML file holds top-level keys named as the fields of
    :class:`~nsrl.experiments.presets.Sweep`, e.g.::

        name = "small"
        n_states = [50]
        n_actions = [2, 5]
        branching = [1, 10]
        n_mdps = 4
        n_runs = 8
        schemes = ["api", "psdp", "nspi(5)"]

    Values are checked, not coerced (see :class:`~nsrl.experiments.presets.Sweep`):
    ``relative_noise = "false"`` or ``n_states = "50"`` raise an error naming the field.
    ``plugins = ["my_module"]`` imports those modules first (:mod:`nsrl.plugins`), so the
    sweep may name the operators, schemes and domains they register.

    Examples:
        >>> load_experiment("sensitivity").variants["absolute-noise"]
        {'noise_model': 'absolute'}
    """
    if name in experiment_names():
        return EXPERIMENTS[name]
    path = Path(name)
    if not path.is_file():
        raise ValueError(f"unknown preset {name!r}: expected one of {sorted(EXPERIMENTS)} or a "
                         f"TOML file path.")
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
    sweeps = EXPERIMENTS[base].sweeps()
    if variant not in sweeps:
        raise ValueError(f"unknown variant {variant!r} of {base!r}; expected one of "
                         f"{', '.join(sweeps)}.")
    return sweeps[variant]


def experiment_of(folder: str | Path) -> Experiment | None:
    """The registered experiment with variants whose results ``folder`` holds, if any."""
    if (Path(folder) / "manifest.json").exists():
        return None  # one sweep's folder
    return next((e for e in EXPERIMENTS.values() if e.variants and e.holds(folder)), None)


@dataclass(frozen=True)
class CheckedExperiment:
    """An experiment whose sweeps, folders and run options passed :func:`check_experiment`.

    :meth:`run` starts it without checking again (the Dask scheduler is probed and each
    sweep's operator built once per start, not once per layer).
    """

    experiment: Experiment
    out: str | Path
    options: dict

    def run(self, *, report: bool = True, on_sweep: Callable | None = None,
            progress: bool = True) -> dict:
        """Run it (see :func:`run_experiment` for the arguments and the result)."""
        from nsrl.experiments.locking import locked
        from nsrl.experiments.safe_io import make_folder, remove_made

        options = {**self.options, "progress": progress}
        if not self.experiment.variants:
            return _run_sweeps(self.experiment, self.out, report, on_sweep, options)
        made = make_folder(self.out)
        try:
            with locked(self.out):
                return _run_sweeps(self.experiment, self.out, report, on_sweep, options)
        finally:
            remove_made(made)  # a failed start: the folders it made, if still empty


def check_experiment(experiment: Experiment, out: str | Path,
                     **options: Any) -> CheckedExperiment:
    """Raise ValueError for anything that would make :func:`run_experiment` fail; write nothing.

    The run options (and a Dask scheduler) are checked once, then each sweep against its
    folder (:func:`nsrl.experiments.runner.check_sweep`). An experiment with variants also
    needs ``out`` itself writable and not locked by another process (it holds the variants'
    folders and the combined table).

    Returns:
        The checked experiment; its :meth:`~CheckedExperiment.run` starts it.
    """
    from nsrl.experiments.locking import check_unlocked
    from nsrl.experiments.runner import check_backend, check_sweep
    from nsrl.experiments.storage import check_folder

    check_backend(**{k: v for k, v in options.items() if k != "resume"})
    if experiment.variants:
        check_folder(out)
        check_unlocked(out)
    per_sweep = {k: v for k, v in options.items() if k in ("jobs", "backend", "resume")}
    for variant, sweep in experiment.sweeps().items():
        check_sweep(sweep, experiment.folder(out, variant), **per_sweep)
    return CheckedExperiment(experiment, out, dict(options))


def run_experiment(experiment: Experiment, out: str | Path, *, report: bool = True,
                   on_sweep: OnSweep | None = None, **options: Any) -> dict:
    """Run every sweep of ``experiment`` into ``out``, then its analysis once all are complete.

    Everything is checked, once (:func:`check_experiment`), before anything is written. Each
    sweep's folder is locked while it runs (:func:`nsrl.experiments.runner.run_sweep`); an
    experiment with variants also holds the lock of ``out`` for the whole run, and a start
    that wrote nothing removes the folders it made (never anything else).

    Args:
        experiment: from :func:`load_experiment`.
        out: the results folder (each variant in ``out/<variant>``).
        report: write the report of each folder (:func:`write_sweep_report`): every
            variant's once complete, a lone sweep's also on a partial run.
        on_sweep: ``on_sweep(variant, folder, result)`` after each sweep (the command line
            prints its progress and report there); it replaces the default report.
        **options: :func:`nsrl.experiments.runner.run_sweep`'s (jobs, backend, resume...).

    Returns:
        ``{"sweeps": {variant: run_sweep's result}, "complete": bool, "written": [paths]}``;
        ``written`` holds the analysis' files once every sweep is complete.

    Raises:
        nsrl.experiments.accuracy.InaccurateResult: a shard's losses cannot be right (it is
            not stored; the shards before it are kept).
    """
    progress = options.pop("progress", True)
    return check_experiment(experiment, out, **options).run(report=report, on_sweep=on_sweep,
                                                            progress=progress)


def _run_sweeps(experiment: Experiment, out: str | Path, report: bool, on_sweep: OnSweep | None,
                options: dict) -> dict:
    """:func:`run_experiment` once it is checked (and ``out`` locked, with variants)."""
    from nsrl.experiments.runner import start_checked

    results = {}
    for variant, sweep in experiment.sweeps().items():
        folder = experiment.folder(out, variant)
        results[variant] = result = start_checked(sweep, folder, **options)
        if on_sweep is not None:
            on_sweep(variant, folder, result)
        elif report and (result["done"] == result["total"] or not variant):
            write_sweep_report(folder)  # a lone sweep's report also covers a partial run
    complete = all(r["done"] == r["total"] for r in results.values())
    written = write_analysis(out, experiment) if complete and experiment.analysis else []
    return {"sweeps": results, "complete": complete, "written": written}


# What a sweep's report reads in its results folder (linked into the staging folder).
REPORT_INPUTS = ("manifest.json", "shards", "sessions.jsonl")


def write_sweep_report(folder: str | Path) -> tuple[list[Path], Coverage]:
    """Write a sweep folder's report (:func:`nsrl.experiments.report.write_report`) safely.

    The folder's lock is held, and the report is written in a private staging folder, then
    each file is moved over its target atomically: an interrupted report leaves the earlier
    one whole, and a link planted at a target is refused, never written through.

    Returns:
        ``(written paths in folder, coverage)`` as ``write_report``.

    Raises:
        nsrl.experiments.report.NoIntactShard: nothing to report on (the message names
            ``folder``).
    """
    from nsrl.experiments.locking import locked
    from nsrl.experiments.report import NoIntactShard, write_report
    from nsrl.experiments.safe_io import staging

    folder = Path(folder)
    stage = None
    try:
        with locked(folder, "nsrl plot:"), staging(folder, REPORT_INPUTS) as stage:
            written, coverage = write_report(stage)
    except NoIntactShard as exc:  # name the folder, not the staging folder
        message = str(exc) if stage is None else str(exc).replace(str(stage), str(folder))
        raise NoIntactShard(message) from None
    return [folder / p.name for p in written], coverage


def write_analysis(out: str | Path, experiment: Experiment) -> list[Path]:
    """Run ``experiment``'s analysis on ``out`` safely (as :func:`write_sweep_report`).

    The variants' folders (or a lone sweep's results) are linked into the staging folder,
    where the analysis reads them.
    """
    from nsrl.experiments.locking import locked
    from nsrl.experiments.safe_io import staging

    if experiment.analysis is None:  # nothing to write
        return []
    inputs = tuple(experiment.variants) or REPORT_INPUTS
    with locked(out, "nsrl plot:"), staging(out, inputs) as stage:
        written = experiment.analysis(stage, experiment)
    return [Path(out) / Path(p).name for p in written]
