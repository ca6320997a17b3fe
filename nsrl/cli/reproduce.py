"""``nsrl reproduce`` and ``nsrl plot``.

nsrl reproduce [--preset NAME|FILE.toml] --out DIR [--jobs N] [--backend loky|dask|sequential]
[--scheduler ADDRESS] [--resume] [--limit N] [--no-plot] [--check] [--quiet]
nsrl plot DIR [--quiet]
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from nsrl.cli.common import (
    UsageError,
    add_quiet_argument,
    integer,
    note,
    show_progress,
    user_input,
)


def experiments_epilog() -> str:
    """The registered experiments, one a line (read live: plugins included)."""
    from nsrl.experiments.registry import EXPERIMENTS

    entries = EXPERIMENTS.entries()
    width = max(len(e.name) for e in entries)
    return "experiments:\n" + "\n".join(f"  {e.name:<{width}}  {e.summary}" for e in entries)


def add_parser(sub) -> None:
    """Register the ``reproduce`` and ``plot`` subcommands."""
    import argparse

    p = sub.add_parser("reproduce", help="run a sweep of the paper's experiments (resumable)",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.lazy_epilog = experiments_epilog  # the registry is read when --help is shown, not before
    p.add_argument("--preset", default="quick",
                   help="a registered experiment (listed below; default quick, < 2 min) or a "
                   "TOML sweep file")
    p.add_argument("--out", required=True, help="output folder (table, figures, summary)")
    p.add_argument("--jobs", type=integer(1), default=1, help="local worker processes (default 1)")
    p.add_argument("--backend", default="loky", choices=("loky", "dask", "sequential"),
                   help="loky (default), dask or sequential")
    p.add_argument("--scheduler", default=None, help="dask scheduler address (--backend dask)")
    p.add_argument("--resume", action="store_true", help="continue a folder of the same sweep")
    p.add_argument("--limit", type=integer(1), default=None,
                   help="compute at most N shards, then stop")
    p.add_argument("--no-plot", action="store_true", help="skip statistics and figures")
    p.add_argument("--check", action="store_true",
                   help="check everything and build each sweep's first shard's inputs (MDP, "
                   "operator, schemes), then stop: nothing is computed or written")
    add_quiet_argument(p)
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("plot", help="statistics, figures and summary.md of a results folder")
    p.add_argument("dir", help="a folder written by nsrl reproduce")
    add_quiet_argument(p)
    p.set_defaults(func=_cmd_plot)


def _cmd_reproduce(args) -> int:
    from nsrl.experiments.accuracy import InaccurateResult
    from nsrl.experiments.execution import check_experiment
    from nsrl.experiments.loader import load_experiment

    options = dict(jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
                   resume=args.resume, limit=args.limit)
    with user_input():  # every check before anything is written (manifests included)
        experiment = load_experiment(args.preset)
        checked = check_experiment(experiment, args.out, **options)  # the one check
        if args.check:
            return _first_inputs(args, experiment)
    # SIGTERM (kill PID) ends like Ctrl-C: the session's wall time is logged on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sweeps = experiment.sweeps()
    total = sum(s.scheme_iterations for s in sweeps.values())
    what = (f"{experiment.name}, {len(sweeps)} variants" if experiment.variants else
            f"sweep {experiment.base.name!r}, {len(experiment.base.shards())} shards")
    note(args, f"nsrl reproduce: {what}, {total:,} scheme-iterations -> {args.out}")

    def on_sweep(variant, folder, result):
        rest = result["total"] - result["done"]
        note(args, f"{variant + ': ' if variant else ''}computed {result['computed']} shards "
             f"in {result['wall_time']:.1f} s; {result['done']}/{result['total']} shards done "
             f"(on disk, intact)" + (f"; {rest} to go: rerun with --resume" if rest else ""))
        if not args.no_plot and (not rest or not variant):  # a lone sweep: partial report
            _plot(args, folder, table=not variant)

    try:  # the experiment's folder is locked for the whole run (and each variant's)
        result = checked.run(on_sweep=on_sweep, progress=show_progress(args))
    except InaccurateResult as exc:  # the shards before it are kept; this one is not stored
        raise UsageError(str(exc)) from None
    if experiment.variants and not result["complete"]:
        note(args, f"rerun with --resume to finish; {experiment.name}.md is written once every "
             f"variant is complete")
    _say_written(args, result["written"])
    return 0


def _first_inputs(args, experiment) -> int:
    """Build the inputs of each sweep's first shard: what ``--check`` proves will start.

    The MDP, or on a domain without a model its env (the check built the operator and the
    estimate on it already).
    """
    for variant, sweep in experiment.sweeps().items():
        shard = sweep.shards()[0]
        mdp = sweep.problem(shard)
        sweep.operator_spec(shard).make(mdp)
        schemes = [sweep.scheme(spec.name).name for spec in sweep.schemes]
        print(f"{experiment.name}{'/' + variant if variant else ''}: {len(sweep.shards())} "
              f"shards; first {shard.name}: {mdp!r}, operator {sweep.operator.name}, "
              f"{', '.join(schemes)}")
    note(args, f"nsrl reproduce --check: {experiment.name} is ready to run")
    return 0


def _say_written(args, written) -> None:
    """Name the analysis' files, and print its summary (a .md) on stdout."""
    if written:
        note(args, "wrote " + ", ".join(str(p) for p in written))
        print(next(p for p in written if p.suffix == ".md").read_text())


def _cmd_plot(args) -> int:
    from nsrl.experiments.execution import write_analysis
    from nsrl.experiments.loader import experiment_of

    experiment = experiment_of(args.dir)
    if experiment is not None:  # a folder written by --preset <experiment with variants>
        _check_complete(args.dir, experiment)
        with user_input():  # atomically, under the folder's lock
            written = write_analysis(args.dir, experiment)
        _say_written(args, written)
        return 0
    _plot(args, args.dir)
    return 0


def _check_complete(out, experiment) -> None:
    """Refuse an experiment's combined table over unfinished variants.

    Such a table would set the verdicts of a few shards under the whole protocol's header.
    """
    for name, sweep in experiment.sweeps().items():
        folder = experiment.folder(out, name)
        found = {sweep.shard_of(p.stem) for p in (folder / "shards").glob("*.parquet")}
        have = sum(s is not None for s in found)
        total = len(sweep.shards())
        if have < total:
            raise UsageError(f"{folder} has {have}/{total} shards: the {experiment.name} table "
                             f"compares finished variants only; finish them with `nsrl "
                             f"reproduce --preset {experiment.name} --out {out} --resume`, or "
                             f"`nsrl plot {folder}` for that variant alone.")


def _plot(args, out, table: bool = True) -> None:
    """The statistics, figures and summary of one sweep's folder; its table on stdout if asked."""
    import pandas as pd

    from nsrl.experiments.execution import write_sweep_report
    from nsrl.experiments.observations import markdown_table
    from nsrl.experiments.report import NoIntactShard
    from nsrl.experiments.storage import open_results

    with user_input():
        open_results(out)  # a folder nsrl reproduce wrote, or a one-line error
    try:  # atomically, under the folder's lock, never through a link
        written, coverage = write_sweep_report(out)
    except NoIntactShard as exc:  # nothing to plot (the message says why); not a bug
        raise UsageError(str(exc)) from None
    note(args, "wrote " + ", ".join(str(p) for p in written))
    note(args, f"statistics of {coverage.intact}/{coverage.total} shards (intact)")
    if table:
        print(markdown_table(pd.read_csv(Path(out) / "observations.csv")))
    if coverage.excluded:
        print(f"nsrl plot: warning: {coverage.problem()}.", file=sys.stderr)
