"""Run a sweep on joblib: local processes (loky) by default, or a Dask cluster.

Workers only compute (:func:`compute_shard` is a pure function of the sweep and the shard,
with derived seeds); the driver writes every shard atomically as it arrives, so no shared
file system is needed and the results do not depend on the number of workers, the backend
or the order in which shards finish.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from nsrl.batched import simulate
from nsrl.experiments.presets import Shard, Sweep
from nsrl.experiments.storage import Store
from nsrl.model.garnet import garnet

BACKENDS = ("loky", "dask", "sequential")


def compute_shard(sweep: dict, shard: Shard) -> tuple[Shard, dict, float]:
    """Every scheme and run of ``sweep`` on ``shard``'s MDP, as tidy columns.

    Args:
        sweep: ``Sweep.to_dict()`` (a plain dict travels to any worker).
        shard: which instance and MDP.

    Returns:
        ``(shard, columns, cpu_seconds)``: the columns of
        :data:`nsrl.experiments.storage.COLUMNS`, and the worker's CPU time for the shard
        (what the benchmark's projection is checked against).
    """
    cpu = time.process_time()
    sweep = Sweep.from_dict(sweep)
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    mdp = garnet(shard.n_states, shard.n_actions, shard.branching, sweep.n_features,
                 sweep.gamma, seed=rng)
    K, R = sweep.n_iterations, sweep.n_runs
    parts = []
    # One BLAS thread: the fast path's products are small (n_S <= a few hundred), and
    # threads only add synchronisation (measured: CPI+ twice as slow with 2 threads).
    with threadpool_limits(limits=1, user_api="blas"):
        for scheme in sweep.schemes:
            out = simulate(mdp, scheme, sweep.run_rngs(shard, scheme), K, sweep.noise,
                           "relative" if sweep.relative_noise else "absolute")
            parts.append((scheme, out))
    n = len(parts) * R * K
    columns = {
        "n_states": np.full(n, shard.n_states, dtype=np.int16),
        "n_actions": np.full(n, shard.n_actions, dtype=np.int16),
        "branching": np.full(n, shard.branching, dtype=np.int16),
        "mdp": np.full(n, shard.mdp, dtype=np.int32),
        "run": np.tile(np.repeat(np.arange(R, dtype=np.int32), K), len(parts)),
        "scheme": np.repeat(np.array([s for s, _ in parts], dtype=object), R * K),
        "iteration": np.tile(np.arange(1, K + 1, dtype=np.int32), R * len(parts)),
        "loss": np.concatenate([o["loss"].ravel() for _, o in parts]),
        "memory": np.concatenate([o["memory"].ravel() for _, o in parts]).astype(np.int32),
        "step": np.concatenate([o["step"].ravel() for _, o in parts]),
    }
    return shard, columns, time.process_time() - cpu


def _parallel(jobs: int, backend: str, scheduler: str | None):
    """A joblib Parallel yielding results as they finish, and the context it needs."""
    import contextlib

    import joblib

    if backend not in BACKENDS:
        raise ValueError(f"backend should be one of {BACKENDS}, got {backend!r}.")
    if backend == "dask":
        from dask.distributed import Client

        if not scheduler:
            raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786).")
        client = Client(scheduler)
        ctx = contextlib.ExitStack()
        ctx.callback(client.close)
        ctx.enter_context(joblib.parallel_config(backend="dask"))
        return joblib.Parallel(n_jobs=-1, return_as="generator_unordered"), ctx
    if backend == "sequential" or jobs == 1:
        return joblib.Parallel(n_jobs=1, return_as="generator"), contextlib.nullcontext()
    return (joblib.Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered"),
            contextlib.nullcontext())


def run_sweep(sweep: Sweep, out, *, jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, resume: bool = False, progress: bool = True,
              limit: int | None = None) -> dict:
    """Compute every missing shard of ``sweep`` into the folder ``out``.

    Args:
        sweep: the sweep (see :mod:`nsrl.experiments.presets`).
        out: output folder (see :mod:`nsrl.experiments.storage`), or a
            :class:`~nsrl.experiments.storage.Store` of ``sweep`` already opened.
        jobs: local worker processes (loky backend).
        backend: ``"loky"`` (default), ``"dask"`` (with ``scheduler``) or ``"sequential"``.
        scheduler: address of a running ``dask.distributed`` scheduler.
        resume: continue a folder holding the same sweep, skipping intact shards.
        progress: show a tqdm bar with an ETA.
        limit: compute at most this many shards (then stop; resume later).

    Returns:
        ``{"computed": int, "done": int, "total": int, "wall_time": seconds}``.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs should be a positive int, got {jobs!r}.")
    store = out if isinstance(out, Store) else Store(out, sweep, resume=resume)
    out = store.out
    shards = sweep.shards()
    todo = [s for s in shards if not store.is_done(s)]
    if limit is not None:
        todo = todo[:limit]
    start = time.time()
    session = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    store.log_session({"event": "start", "session": session, "jobs": jobs, "backend": backend,
                       "todo": len(todo), "total": len(shards)})
    written: list[str] = []  # filled shard by shard, so an interruption still counts them
    try:
        if todo:
            _compute(store, sweep, todo, jobs, backend, scheduler, progress, session, start,
                     written)
    finally:  # also on Ctrl-C / SIGTERM; after SIGKILL the per-shard records remain
        wall = round(time.time() - start, 2)
        store.log_session({"event": "end", "session": session, "computed": len(written),
                           "wall_time": wall})
    computed = len(written)
    done = len(shards) - len(todo) + computed
    return {"computed": computed, "done": done, "total": len(shards),
            "wall_time": wall, "out": str(Path(out))}


def _compute(store, sweep, todo, jobs, backend, scheduler, progress, session, start,
             written: list) -> None:
    """Run the shards of ``todo``, write each as it arrives and append its name to ``written``."""
    from joblib import delayed
    from tqdm.auto import tqdm

    n_shards = len(sweep.shards())
    parallel, ctx = _parallel(jobs, backend, scheduler)
    bar = tqdm(total=n_shards, initial=n_shards - len(todo), unit="shard", desc=sweep.name,
               disable=not progress, smoothing=0.05,
               mininterval=0.5 if sys.stderr.isatty() else 60)
    with ctx, bar:
        for shard, columns, cpu in parallel(delayed(compute_shard)(sweep.to_dict(), s)
                                       for s in todo):
            store.write(shard, columns)
            written.append(shard.name)
            store.log_session({"event": "shard", "session": session, "shard": shard.name,
                               "elapsed": round(time.time() - start, 2),
                               "cpu_seconds": round(cpu, 2)})
            bar.update(1)
