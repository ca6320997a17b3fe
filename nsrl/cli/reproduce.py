"""``nsrl reproduce`` and ``nsrl plot`` .

nsrl reproduce [--preset quick|paper|sensitivity|sampled|FILE.toml] --out DIR [--jobs N]
[--backend loky|dask|sequential] [--scheduler ADDRESS] [--resume]
[--limit N] [--no-plot]
nsrl plot DIR
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from nsrl.cli.common import UsageError, integer, user_input


def add_parser(sub) -> None:
    """Register the ``reproduce`` and ``plot`` subcommands."""
    p = sub.add_parser("reproduce", help="run a sweep of the paper's experiments (resumable)")
    p.add_argument("--preset", default="quick",
                   help="quick (default, < 2 min), paper (the full protocol), sensitivity (one "
                   "reduced sweep per reading of what the paper leaves unsaid), sampled "
                   "(section 5 with sample-based greedy steps) or a TOML file")
    p.add_argument("--out", required=True, help="output folder (table, figures, summary)")
    p.add_argument("--jobs", type=integer(1), default=1, help="local worker processes (default 1)")
    p.add_argument("--backend", default="loky", choices=("loky", "dask", "sequential"),
                   help="loky (default), dask or sequential")
    p.add_argument("--scheduler", default=None, help="dask scheduler address (--backend dask)")
    p.add_argument("--resume", action="store_true", help="continue a folder of the same sweep")
    p.add_argument("--limit", type=integer(1), default=None,
                   help="compute at most N shards, then stop")
    p.add_argument("--no-plot", action="store_true", help="skip statistics and figures")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("plot", help="statistics, figures and summary.md of a results folder")
    p.add_argument("dir", help="a folder written by `nsrl reproduce`")
    p.set_defaults(func=_cmd_plot)


def _cmd_reproduce(args) -> int:
    from nsrl.experiments.presets import load_sweep
    from nsrl.experiments.runner import check_run

    options = dict(jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
                   resume=args.resume, limit=args.limit)
    from nsrl.experiments.families import FAMILIES

    if args.preset in FAMILIES:
        return _family(FAMILIES[args.preset], args, options)
    with user_input():  # every check before anything is written (manifest included)
        sweep = load_sweep(args.preset)
        check_run(sweep, args.out, **options)
    # SIGTERM (kill PID) ends like Ctrl-C: the session's wall time is logged on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"nsrl reproduce: sweep {sweep.name!r}, {len(sweep.shards())} shards, "
          f"{sweep.scheme_iterations:,} scheme-iterations -> {args.out}", file=sys.stderr)
    result = _run(sweep, args.out, options)
    rest = result["total"] - result["done"]
    print(f"computed {result['computed']} shards in {result['wall_time']:.1f} s; "
          f"{result['done']}/{result['total']} shards done (on disk, intact)"
          + (f"; {rest} to go: rerun with --resume" if rest else ""), file=sys.stderr)
    if not args.no_plot:
        _plot(args.out)
    return 0


def _run(sweep, out, options) -> dict:
    """``run_sweep`` with a progress bar; a shard whose losses cannot be right is exit 2."""
    from nsrl.experiments.accuracy import InaccurateResult
    from nsrl.experiments.runner import run_sweep

    try:
        return run_sweep(sweep, out, progress=True, **options)
    except InaccurateResult as exc:  # the shards before it are kept; this one is not stored
        raise UsageError(str(exc)) from None


def _family(family, args, options) -> int:
    """Every variant of a family (nsrl.experiments.families), then the combined table.

    The family's folder is locked for the whole run (each variant's folder too, by the
    runner); folders made by a start that wrote nothing are removed again.
    """
    from nsrl.experiments.locking import check_unlocked, locked
    from nsrl.experiments.runner import check_run
    from nsrl.experiments.safe_io import make_folder, remove_made
    from nsrl.experiments.storage import check_folder

    with user_input():
        check_folder(args.out)
        check_unlocked(args.out)
        for name, sweep in family.sweeps().items():
            check_run(sweep, Path(args.out) / name, **options)
    made = make_folder(args.out)
    try:
        with locked(args.out):
            return _family_locked(family, args, options)
    finally:
        remove_made(made)


def _family_locked(family, args, options) -> int:
    sweeps = family.sweeps()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    total = sum(s.scheme_iterations for s in sweeps.values())
    print(f"nsrl reproduce: {family.name}, {len(sweeps)} variants, {total:,} "
          f"scheme-iterations -> {args.out}", file=sys.stderr)
    done = True
    for name, sweep in sweeps.items():
        result = _run(sweep, Path(args.out) / name, options)
        print(f"{name}: computed {result['computed']} shards in {result['wall_time']:.1f} s; "
              f"{result['done']}/{result['total']} done", file=sys.stderr)
        done &= result["done"] == result["total"]
        if not args.no_plot and result["done"] == result["total"]:
            _plot(Path(args.out) / name, quiet=True)
    if not done:
        print(f"rerun with --resume to finish; {family.name}.md is written once every variant "
              f"is complete", file=sys.stderr)
        return 0
    _summary(args.out, family)
    return 0


def _summary(out, family) -> None:
    """Write the family's combined table (atomically, under the folder's lock) and show it."""
    from nsrl.experiments.families import write_summary
    from nsrl.experiments.locking import locked
    from nsrl.experiments.safe_io import staging

    with locked(out, "nsrl plot:"), staging(out, family.variants) as stage:
        written = [Path(out) / p.name for p in write_summary(stage, family)]
    print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    print(written[1].read_text())


def _cmd_plot(args) -> int:
    from nsrl.experiments.families import family_of

    family = family_of(args.dir)
    if family is not None:  # a folder written by --preset <family>
        _check_complete(args.dir, family)
        _summary(args.dir, family)
        return 0
    _plot(args.dir)
    return 0


def _check_complete(out, family) -> None:
    """Refuse a family table over unfinished variants.

    Such a table would set the verdicts of a few shards under the whole protocol's header.
    """
    from nsrl.experiments.presets import Shard

    for name, sweep in family.sweeps().items():
        folder = Path(out) / name
        found = {Shard.from_name(p.stem) for p in (folder / "shards").glob("*.parquet")}
        have = sum(sweep.has_shard(s) for s in found if s is not None)
        total = len(sweep.shards())
        if have < total:
            raise UsageError(f"{folder} has {have}/{total} shards: the {family.name} table "
                             f"compares finished variants only; finish them with `nsrl "
                             f"reproduce --preset {family.name} --out {out} --resume`, or "
                             f"`nsrl plot {folder}` for that variant alone.")


# What nsrl plot reads in a results folder (linked into its staging folder).
_INPUTS = ("manifest.json", "shards", "sessions.jsonl")


def _plot(out, quiet: bool = False) -> None:
    import pandas as pd

    from nsrl.experiments.locking import locked
    from nsrl.experiments.observations import markdown_table
    from nsrl.experiments.report import NoIntactShard, write_report
    from nsrl.experiments.safe_io import staging
    from nsrl.experiments.storage import open_results

    with user_input():
        open_results(out)  # a folder nsrl reproduce wrote, or a one-line error
    try:
        with locked(out, "nsrl plot:"), staging(out, _INPUTS) as stage:
            written, coverage = write_report(stage)
            written = [Path(out) / p.name for p in written]
    except NoIntactShard as exc:  # nothing to plot (the message says why); not a bug
        raise UsageError(str(exc).replace(str(stage), str(out))) from None
    print("wrote " + ", ".join(str(p) for p in written), file=sys.stderr)
    print(f"statistics of {coverage.intact}/{coverage.total} shards (intact)", file=sys.stderr)
    if not quiet:
        print(markdown_table(pd.read_csv(Path(out) / "observations.csv")))
    if coverage.excluded:
        print(f"nsrl plot: warning: {coverage.problem()}.", file=sys.stderr)
