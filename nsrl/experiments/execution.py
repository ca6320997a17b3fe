"""Running experiments: checked once, then every sweep (resumable), then the analysis.

:func:`check_experiment` checks an experiment against its output folder and the run options,
once, and keeps what it checked (:class:`CheckedExperiment`); its ``run`` starts the sweeps
without checking them again; :func:`run_experiment` does both, as the command line does::

    from nsrl.experiments import load_experiment, run_experiment
    run_experiment(load_experiment("sensitivity"), "results/sens", jobs=2)

Reports and analyses are written in a staging folder and moved into place atomically
(:func:`write_sweep_report`, :func:`write_analysis`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.sweep import Sweep

if TYPE_CHECKING:
    from nsrl.experiments.report import Coverage

OnSweep = Callable[[str, Path, dict], object]  # on_sweep(variant, folder, result)


@dataclass(frozen=True)
class CheckedExperiment:
    """An experiment whose sweeps, folders and run options passed :func:`check_experiment`.

    :meth:`run` starts it without checking again (the Dask scheduler is probed and each
    sweep's operator built once per start, not once per layer).
    """

    experiment: Experiment
    out: str | Path
    options: dict
    sweeps: dict[str, Sweep]

    def run(self, *, report: bool = True, on_sweep: Callable | None = None,
            progress: bool = True) -> dict:
        """Run it (see :func:`run_experiment` for the arguments and the result)."""
        from nsrl.experiments.locking import locked
        from nsrl.experiments.safe_io import make_folder, remove_made

        options = {**self.options, "progress": progress}
        if not self.experiment.variants:
            return _run_sweeps(self, report, on_sweep, options)
        made = make_folder(self.out)
        try:
            with locked(self.out):
                return _run_sweeps(self, report, on_sweep, options)
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
    from nsrl.experiments.checks import check_backend, check_sweep
    from nsrl.experiments.locking import check_unlocked
    from nsrl.experiments.storage import check_folder

    check_backend(**{k: v for k, v in options.items() if k != "resume"})
    if experiment.variants:
        check_folder(out)
        check_unlocked(out)
    per_sweep = {k: v for k, v in options.items() if k in ("jobs", "backend", "resume")}
    sweeps = experiment.sweeps()
    for variant, sweep in sweeps.items():
        check_sweep(sweep, experiment.folder(out, variant), **per_sweep)
    return CheckedExperiment(experiment, out, dict(options), sweeps)


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


def _run_sweeps(checked: CheckedExperiment, report: bool, on_sweep: OnSweep | None,
                options: dict) -> dict:
    """:func:`run_experiment` once it is checked (and ``out`` locked, with variants)."""
    from nsrl.experiments.runner import start_pooled

    experiment, out = checked.experiment, checked.out
    folders = {variant: experiment.folder(out, variant) for variant in checked.sweeps}

    def done(variant: str, result: dict) -> None:  # as each sweep ends, the others running on
        if on_sweep is not None:
            on_sweep(variant, folders[variant], result)
        elif report and (result["done"] == result["total"] or not variant):
            write_sweep_report(folders[variant])  # a lone sweep's report also covers a partial run

    pooled = start_pooled({v: (sweep, folders[v]) for v, sweep in checked.sweeps.items()},
                          on_done=done, **options)
    results = {variant: pooled[variant] for variant in checked.sweeps}  # in the variants' order
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
    where the analysis reads them, and the files of an earlier analysis it reads back
    (``experiment.analysis_reads``) are copied there.
    """
    from nsrl.experiments.locking import locked
    from nsrl.experiments.safe_io import staging

    if experiment.analysis is None:  # nothing to write
        return []
    inputs = tuple(experiment.variants) or REPORT_INPUTS
    with locked(out, "nsrl plot:"), \
            staging(out, inputs, copies=experiment.analysis_reads) as stage:
        written = experiment.analysis(stage, experiment)
    return [Path(out) / Path(p).name for p in written]
