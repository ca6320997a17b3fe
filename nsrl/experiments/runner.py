"""Run a sweep on local processes (loky, through joblib) or a Dask cluster, resumably.

Workers only compute (:func:`nsrl.experiments.worker.compute_shard`, a pure function of the
sweep and the shard, with derived seeds); the driver writes every shard atomically as it
arrives, so no shared file system is needed and the results do not depend on the number of
workers, the backend or the order in which shards finish. Everything is checked first
(:mod:`nsrl.experiments.checks`). An experiment's sweeps share one pool
(:func:`start_pooled`): the next sweep's shards start as workers free up, so a family of
sweeps costs the sum of its CPU time over the workers, not the sum of each sweep's slowest
shard.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from nsrl.experiments.accuracy import check_losses, check_scores
from nsrl.experiments.checks import check_run
from nsrl.experiments.locking import locked
from nsrl.experiments.safe_io import make_folder, remove_made
from nsrl.experiments.storage import Store
from nsrl.experiments.sweep import Sweep
from nsrl.experiments.worker import compute_shard, shipped, without_engine
from nsrl.params import user_stacklevel
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
    return start_pooled({"": (sweep, out)}, jobs=jobs, backend=backend, scheduler=scheduler,
                        resume=resume, progress=progress, limit=limit)[""]


def start_pooled(sweeps: dict, *, jobs: int = 1, backend: str = "loky",
                 scheduler: str | None = None, resume: bool = False, progress: bool = True,
                 limit: int | None = None,
                 on_done: Callable[[str, dict], object] | None = None) -> dict:
    """Run the missing shards of several checked sweeps on one pool of workers.

    The shards go to the workers in the order of ``sweeps`` (then of each sweep's shards),
    so a worker that finishes a sweep's last shard takes the next sweep's first at once: no
    worker waits for a sweep's slowest shard (on Dask, every shard of every sweep is a task
    from the start). Each sweep keeps its own folder, lock, store and session records, as
    if run alone by :func:`run_sweep`, and its results do not depend on the others (a shard
    is a pure function of its sweep); ``limit`` applies to each sweep.

    Args:
        sweeps: key -> ``(sweep, out)``, each checked already (:func:`check_run`).
        on_done: ``on_done(key, result)`` once a sweep's shards are all written, its lock
            released (a sweep with nothing to compute is done at the start).
        jobs: as :func:`run_sweep`.
        backend: as :func:`run_sweep`.
        scheduler: as :func:`run_sweep`.
        resume: as :func:`run_sweep`.
        progress: one bar over every sweep's shards.
        limit: at most this many shards of each sweep.

    Returns:
        key -> :func:`run_sweep`'s result, for every sweep.
    """
    for sweep, _ in sweeps.values():
        batched = not sweep.sampled and sweep.domain_entry.has_model  # a model's loss, projected
        slow = without_engine(sweep) if batched else []
        if slow:
            warnings.warn(f"no batched engine for {', '.join(slow)}: its runs use the reference "
                          f"nsrl.run engine (exact, slower)", stacklevel=user_stacklevel())
    runs: dict[str, _SweepRun] = {}
    results: dict[str, dict] = {}
    failed = False
    try:
        for key, (sweep, out) in sweeps.items():
            runs[key] = _SweepRun(sweep, out, jobs, backend, resume, limit,
                                  pooled=len(sweeps) > 1)
        for key in [k for k, run in runs.items() if not run.todo]:
            results[key] = runs.pop(key).close(failed=False)
            if on_done is not None:
                on_done(key, results[key])
        if runs:
            _compute(runs, results, jobs, backend, scheduler, progress, on_done)
    except BaseException:  # a failure, Ctrl-C or SIGTERM
        failed = True
        raise
    finally:  # every sweep still open is closed as run_sweep closes it
        for key, run in runs.items():
            results[key] = run.close(failed=failed)
    return results


class _SweepRun:
    """One sweep's part of a run: its folder and lock, store, shards to compute and records."""

    def __init__(self, sweep: Sweep, out, jobs: int, backend: str, resume: bool,
                 limit: int | None, pooled: bool = False):
        self.sweep, self.out = sweep, out
        self._stack = contextlib.ExitStack()
        made = make_folder(out)
        self._stack.callback(remove_made, made)  # a failed start: the folders it made, if empty
        try:
            self._stack.enter_context(locked(out))
            self.store = Store(out, sweep, resume=resume)
        except BaseException:
            self._stack.close()
            raise
        shards = sweep.shards()
        todo = [s for s in shards if not self.store.is_done(s)]
        self.total, self.intact = len(shards), len(shards) - len(todo)
        self.todo = todo if limit is None else todo[:limit]
        self.start = time.time()
        self.session = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
        record = {"event": "start", "session": self.session, "jobs": jobs, "backend": backend,
                  "todo": len(self.todo), "total": len(shards)}
        if pooled:  # its shards shared the workers with other sweeps' (start_pooled)
            record["pooled"] = True
        self.store.log_session(record)
        self.written: list[str] = []  # filled shard by shard: an interruption still counts them

    def calls(self) -> list:
        """The (function, args) of every shard to compute."""
        spec, added, plugins = self.sweep.to_dict(), shipped(self.sweep), loaded_plugins()
        return [(compute_shard, (spec, s, added, plugins)) for s in self.todo]

    def record(self, shard, columns: dict, cpu: float, r_max: float) -> None:
        """Check a computed shard, write it atomically and log it."""
        if "loss" in columns:
            check_losses(columns["loss"], self.sweep.gamma, max(r_max, 1e-300),
                         f"the losses of shard {shard.name}")
        else:  # a domain without a model: Monte-Carlo scores
            check_scores(columns, f"the scores of shard {shard.name}")
        self.store.write(shard, columns)
        self.written.append(shard.name)
        self.store.log_session({"event": "shard", "session": self.session, "shard": shard.name,
                                "elapsed": round(time.time() - self.start, 2),
                                "cpu_seconds": round(cpu, 2)})

    def close(self, failed: bool) -> dict:
        """Log the sitting's end, release the folder, return :func:`run_sweep`'s result.

        A failed start that wrote nothing leaves nothing behind (:meth:`Store.discard`).
        """
        wall = round(time.time() - self.start, 2)
        try:
            if failed and not self.written:
                self.store.discard()  # a failed start: nothing to resume, so nothing left
            if self.store.manifest.exists():
                self.store.log_session({"event": "end", "session": self.session,
                                        "computed": len(self.written), "wall_time": wall})
        finally:
            self._stack.close()
        return {"computed": len(self.written), "done": self.intact + len(self.written),
                "total": self.total, "wall_time": wall, "out": str(Path(self.out))}


def _tagged(key, function, *args):
    """``(key, function(*args))``: a result that says which sweep it belongs to."""
    return key, function(*args)


def _compute(runs: dict, results: dict, jobs, backend, scheduler, progress, on_done) -> None:
    """Run every open sweep's shards on one pool; close each sweep as its last shard arrives."""
    from tqdm.auto import tqdm

    desc = next(iter(runs.values())).sweep.name if len(runs) == 1 else f"{len(runs)} sweeps"
    bar = tqdm(total=sum(r.total for r in runs.values()),
               initial=sum(r.intact for r in runs.values()), unit="shard", desc=desc,
               disable=not progress or not sys.stderr.isatty(), smoothing=0.05,
               mininterval=0.5)
    left = {key: len(run.todo) for key, run in runs.items()}
    calls = [(_tagged, (key, f, *args)) for key, run in runs.items() for f, args in run.calls()]
    with bar:
        for key, (shard, columns, cpu, r_max) in _results(jobs, backend, scheduler, calls):
            runs[key].record(shard, columns, cpu, r_max)
            bar.update(1)
            left[key] -= 1
            if not left[key]:
                results[key] = runs.pop(key).close(failed=False)
                if on_done is not None:
                    on_done(key, results[key])
