"""Run a sweep on local processes (loky, through joblib) or a Dask cluster, resumably.

Workers only compute (:func:`nsrl.experiments.worker.compute_shard`, a pure function of the
sweep and the shard, with derived seeds); the driver writes every shard atomically as it
arrives, so no shared file system is needed and the results do not depend on the number of
workers, the backend or the order in which shards finish. Everything is checked first
(:mod:`nsrl.experiments.checks`).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

from nsrl.experiments.accuracy import check_losses, check_scores
from nsrl.experiments.checks import check_run
from nsrl.experiments.locking import locked
from nsrl.experiments.safe_io import make_folder, remove_made
from nsrl.experiments.storage import Store
from nsrl.experiments.sweep import Sweep
from nsrl.experiments.worker import compute_shard, shipped, without_engine
from nsrl.plugins import loaded_plugins


def _results(jobs: int, backend: str, scheduler: str | None, calls: list):
    """The results of ``calls`` ((function, args) pairs) as they finish, on ``backend``.

    Dask gets every call as a task of its own (``client.submit``), so that each runs on the
    cluster's workers whatever their number of threads; local processes go through joblib's
    loky pool, or run here one after the other for ``jobs == 1`` and ``"sequential"``.
    """
    if backend == "dask":
        from distributed import Client, as_completed

        with Client(scheduler) as client:
            futures = [client.submit(f, *args, pure=False) for f, args in calls]
            for future in as_completed(futures):
                yield future.result()
        return
    import joblib

    if backend == "sequential" or jobs == 1:
        parallel = joblib.Parallel(n_jobs=1, return_as="generator")
    else:
        parallel = joblib.Parallel(n_jobs=jobs, backend="loky",
                                   return_as="generator_unordered")
    yield from parallel(joblib.delayed(f)(*args) for f, args in calls)


def run_sweep(sweep: Sweep, out, *, jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, resume: bool = False, progress: bool = True,
              limit: int | None = None) -> dict:
    """Compute every missing shard of ``sweep`` into the folder ``out``.

    Everything is checked (:func:`check_run`) before anything is written; the folder's lock
    is held for the whole run (a second writer is refused, naming this one); a start that
    fails before its first shard leaves nothing it created behind, and nothing else is
    ever removed.

    Args:
        sweep: the sweep (see :mod:`nsrl.experiments.presets`).
        out: output folder (see :mod:`nsrl.experiments.storage`).
        jobs: local worker processes (loky backend).
        backend: ``"loky"`` (default), ``"dask"`` (with ``scheduler``) or ``"sequential"``.
        scheduler: address of a running ``dask.distributed`` scheduler.
        resume: continue a folder holding the same sweep, skipping intact shards.
        progress: show a tqdm bar with an ETA.
        limit: compute at most this many shards (then stop; resume later).

    Returns:
        ``{"computed": int, "done": int, "total": int, "wall_time": seconds, "out": str}``:
        ``done`` counts the shards intact on disk (found intact at the start, plus computed).
    """
    check_run(sweep, out, jobs=jobs, backend=backend, scheduler=scheduler, resume=resume,
              limit=limit)
    return start_checked(sweep, out, jobs=jobs, backend=backend, scheduler=scheduler,
                         resume=resume, progress=progress, limit=limit)


def start_checked(sweep: Sweep, out, *, jobs: int = 1, backend: str = "loky",
                  scheduler: str | None = None, resume: bool = False, progress: bool = True,
                  limit: int | None = None) -> dict:
    """:func:`run_sweep` once :func:`check_run` (or an experiment's check) has passed.

    For callers that checked everything already, so that nothing is checked twice (the
    scheduler probe, the operator build); anyone else calls :func:`run_sweep`.
    """
    batched = not sweep.sampled and sweep.domain_entry.has_model  # a model's loss, projected
    slow = without_engine(sweep) if batched else []
    if slow:
        warnings.warn(f"no batched engine for {', '.join(slow)}: its runs use the reference "
                      f"nsrl.run engine (exact, slower)", stacklevel=2)
    made = make_folder(out)
    try:
        with locked(out):
            return _run_locked(sweep, out, jobs, backend, scheduler, resume, progress, limit)
    finally:
        remove_made(made)  # a failed start: the folders it made, if still empty


def _run_locked(sweep, out, jobs, backend, scheduler, resume, progress, limit) -> dict:
    """:func:`run_sweep` once the output folder exists and its lock is held."""
    store = Store(out, sweep, resume=resume)
    shards = sweep.shards()
    todo = [s for s in shards if not store.is_done(s)]
    intact = len(shards) - len(todo)
    if limit is not None:
        todo = todo[:limit]
    start = time.time()
    session = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    store.log_session({"event": "start", "session": session, "jobs": jobs, "backend": backend,
                       "todo": len(todo), "total": len(shards)})
    written: list[str] = []  # filled shard by shard, so an interruption still counts them
    try:
        if todo:
            _compute(store, sweep, todo, intact, jobs, backend, scheduler, progress, session,
                     start, written)
    except BaseException:
        if not written:
            store.discard()  # a failed start: nothing to resume, so nothing left behind
        raise
    finally:  # also on Ctrl-C / SIGTERM; after SIGKILL the per-shard records remain
        wall = round(time.time() - start, 2)
        if store.manifest.exists():
            store.log_session({"event": "end", "session": session, "computed": len(written),
                               "wall_time": wall})
    return {"computed": len(written), "done": intact + len(written), "total": len(shards),
            "wall_time": wall, "out": str(Path(out))}


def _compute(store, sweep, todo, intact, jobs, backend, scheduler, progress, session, start,
             written: list) -> None:
    """Run the shards of ``todo``, write each as it arrives and append its name to ``written``."""
    from tqdm.auto import tqdm

    bar = tqdm(total=len(sweep.shards()), initial=intact, unit="shard", desc=sweep.name,
               disable=not progress or not sys.stderr.isatty(), smoothing=0.05,
               mininterval=0.5)
    with bar:
        spec, added, plugins = sweep.to_dict(), shipped(sweep), loaded_plugins()
        calls = [(compute_shard, (spec, s, added, plugins)) for s in todo]
        for shard, columns, cpu, r_max in _results(jobs, backend, scheduler, calls):
            if "loss" in columns:
                check_losses(columns["loss"], sweep.gamma, max(r_max, 1e-300),
                             f"the losses of shard {shard.name}")
            else:  # a domain without a model: Monte-Carlo scores
                check_scores(columns, f"the scores of shard {shard.name}")
            store.write(shard, columns)
            written.append(shard.name)
            store.log_session({"event": "shard", "session": session, "shard": shard.name,
                               "elapsed": round(time.time() - start, 2),
                               "cpu_seconds": round(cpu, 2)})
            bar.update(1)
