"""Run a sweep on joblib: local processes (loky) by default, or a Dask cluster.

Workers only compute (:func:`compute_shard` is a pure function of the sweep and the shard,
with derived seeds); the driver writes every shard atomically as it arrives, so no shared
file system is needed and the results do not depend on the number of workers, the backend
or the order in which shards finish.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from nsrl.batched.registry import has_engine
from nsrl.engine import BATCHED_MAX_STATES, OperatorSpec, run
from nsrl.experiments import domains
from nsrl.experiments.accuracy import check_losses
from nsrl.experiments.domains import DEFAULT_FEATURES, build_mdp, model_nbytes
from nsrl.experiments.locking import locked
from nsrl.experiments.presets import Shard, Sweep
from nsrl.experiments.safe_io import make_folder, remove_made
from nsrl.experiments.storage import Store, check_out
from nsrl.greedy import registry as operators
from nsrl.greedy.registry import make_operator, operator_entry
from nsrl.model.garnet import garnet
from nsrl.model.memory import available_memory, check_memory
from nsrl.plugins import load_plugins, loaded_plugins
from nsrl.schemes import NSPI, register_scheme
from nsrl.schemes.registry import SchemeEntry, added_entries

BACKENDS = ("loky", "dask", "sequential")
JOBS_PER_CPU = 4  # --jobs beyond this many local workers per CPU is refused


def registrations(sweep: Sweep) -> tuple:
    """The registry entries ``sweep`` names beyond the built-in ones (schemes, operator, domain).

    A fresh worker process knows the built-in names and those of the plugins it loads; these
    entries also carry what was registered in the driver's process alone (a script, a notebook).
    """
    added: list = list(added_entries(sweep.schemes))
    if sweep.operator not in operators.BUILTIN:
        added.append(operator_entry(sweep.operator))
    if sweep.domain not in domains.BUILTIN:
        added.append(domains.domain_entry(sweep.domain))
    return tuple(added)


def _register(added) -> None:
    """Register in this process the entries of :func:`registrations` (a worker's first step)."""
    for entry in added:
        if isinstance(entry, SchemeEntry):
            register_scheme(entry.base, entry.cls, entry.argument, entry.example)
        elif isinstance(entry, operators.OperatorEntry):
            operators.OPERATORS[entry.name] = entry
        elif isinstance(entry, domains.DomainEntry):
            domains.DOMAINS[entry.name] = entry
        else:
            raise TypeError(f"cannot register a {type(entry).__name__} in a worker.")


def compute_shard(spec: dict, shard: Shard, added=(), plugins=()) -> tuple[Shard, dict, float]:
    """Every scheme and run of ``sweep`` on ``shard``'s MDP, as tidy columns.

    Args:
        spec: ``Sweep.to_dict()`` (a plain dict travels to any worker).
        shard: which instance and MDP.
        added: registry entries the worker needs beyond the built-in ones
            (:func:`registrations`).
        plugins: the plugin modules to load first (:func:`nsrl.plugins.loaded_plugins` of the
            driver), so that their names are registered in this process too.

    Returns:
        ``(shard, columns, cpu_seconds)``: the columns of
        :data:`nsrl.experiments.storage.COLUMNS`, and the worker's CPU time for the shard
        (what the benchmark's projection is checked against).
    """
    cpu = time.process_time()
    load_plugins(plugins, installed=False)
    _register(added)
    sweep = Sweep.from_dict(spec)
    mdp = build_mdp(sweep, shard)
    K, R = sweep.n_iterations, sweep.n_runs
    parts = []
    # One BLAS thread: the fast path's products are small (n_S <= a few hundred), and
    # threads only add synchronisation (measured: CPI+ twice as slow with 2 threads).
    # nsrl.run picks the engine: the batched one for the projected operator and a scheme
    # class that has one, the reference loop otherwise (a sample-based operator, whose greedy
    # errors are measured with the model, gets a fresh operator per run).
    operator = OperatorSpec(sweep.operator, **sweep.operator_options(shard))
    with threadpool_limits(limits=1, user_api="blas"):
        for name in sweep.schemes:
            hist = run(sweep.scheme(name), operator, K, rng=sweep.run_rngs(shard, name),
                       mdp=mdp, measure_errors=sweep.sampled, engine=sweep.engine)
            # The columns read the arrays only: the output policy (at 10^5 states a mixture
            # of up to a hundred 4 MB tables) is dropped here, so that a shard holds one
            # scheme's policies at a time instead of every scheme's until it ends.
            parts.append((name, replace(hist, output=None, outputs=[])))
            del hist
    n = len(parts) * R * K
    columns = {
        "n_states": np.full(n, shard.n_states, dtype=np.int32),
        "n_actions": np.full(n, shard.n_actions, dtype=np.int32),
        "branching": np.full(n, shard.branching, dtype=np.int32),
        "mdp": np.full(n, shard.mdp, dtype=np.int32),
        "run": np.tile(np.repeat(np.arange(R, dtype=np.int32), K), len(parts)),
        "scheme": np.repeat(np.array([s for s, _ in parts], dtype=object), R * K),
        "iteration": np.tile(np.arange(1, K + 1, dtype=np.int32), R * len(parts)),
        "loss": np.concatenate([h.losses.ravel() for _, h in parts]),
        "memory": np.concatenate([h.memory.ravel() for _, h in parts]).astype(np.int32),
        "step": np.concatenate([h.steps.ravel() for _, h in parts]),
    }
    if sweep.sampled:
        columns["operator"] = np.full(n, sweep.operator, dtype=object)
        columns["representation"] = np.full(n, sweep.features, dtype=object)
        columns["samples"] = np.concatenate([h.samples.ravel() for _, h in parts])
        columns["error"] = np.concatenate([h.errors.ravel() for _, h in parts])
    return shard, columns, time.process_time() - cpu


def without_engine(sweep: Sweep) -> list[str]:
    """The sweep's schemes that have no batched engine (they run on the reference path)."""
    return [name for name in sweep.schemes if not has_engine(sweep.scheme(name))]


# Peak memory of a shard (measured with ru_maxrss at n_S = 400-800, 30 runs): about four
# dense n_S x n_S float64 arrays per run in the fast path, on top of the Garnet, plus the
# policies kept per iteration (PSDP, NSPI), the result table, and a worker's interpreter,
# numpy, numba and compiled kernels (~300 MB).
_RUN_DENSE_BYTES = 32
_ROW_BYTES = 100
_WORKER_BYTES = 300 * 2**20


def shard_nbytes(sweep: Sweep, shard: Shard) -> int:
    """Estimated peak memory (bytes) of :func:`compute_shard` on ``shard``."""
    S, A, R, K = shard.n_states, shard.n_actions, sweep.n_runs, sweep.n_iterations
    # one run's sample-based operator (nsrl.greedy.registry: measured per operator)
    sampled = operator_entry(sweep.operator).nbytes(S, A, sweep.budget_for(shard)) \
        if sweep.sampled and sweep.domain == "garnet" else 0
    dense = _RUN_DENSE_BYTES * R * S * S if S <= BATCHED_MAX_STATES else 0  # batched engines
    if sweep.domain != "garnet":  # no dense n_S x n_S array; LSTD-Q on Phi keeps p^2 A^2
        p = sweep.n_features or DEFAULT_FEATURES
        sampled = (160 * sweep.budget_for(shard) + 8 * (p * A) ** 2) if sweep.sampled else 0
        dense = 0
    return (model_nbytes(sweep, shard) + dense + 16 * R * K * S
            + _ROW_BYTES * R * K * len(sweep.schemes) + _WORKER_BYTES + sampled)


def check_run(sweep: Sweep, out, *, jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None, resume: bool = False,
              limit: int | None = None) -> None:
    """Raise ValueError for any argument of :func:`run_sweep` that would fail; write nothing.

    Checks the options and that the Dask scheduler answers (:func:`check_backend`), then the
    sweep against its output folder (:func:`check_sweep`): everything that can be known
    before the manifest is written.
    """
    check_backend(jobs=jobs, backend=backend, scheduler=scheduler, limit=limit)
    check_sweep(sweep, out, jobs=jobs, backend=backend, resume=resume)


def check_backend(*, jobs: int = 1, backend: str = "loky", scheduler: str | None = None,
                  limit: int | None = None) -> None:
    """Raise ValueError for run options that would fail, whatever the sweep.

    The Dask scheduler is probed here (:func:`check_scheduler`, up to 10 s): once per start,
    however many sweeps it runs.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs should be a positive int, got {jobs!r}.")
    cpus = os.cpu_count() or 1
    if backend == "loky" and jobs > JOBS_PER_CPU * cpus:
        raise ValueError(f"--jobs {jobs} is more than {JOBS_PER_CPU} local workers per CPU "
                         f"({cpus} CPUs here): workers beyond the CPUs only share them and "
                         f"multiply the memory; use --jobs {cpus} (or --backend dask for "
                         f"more machines).")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit should be a positive int or None, got {limit!r}.")
    if backend not in BACKENDS:
        raise ValueError(f"backend should be one of {', '.join(BACKENDS)}, got {backend!r}.")
    if scheduler and backend != "dask":
        raise ValueError(f"a scheduler address is for --backend dask, got --backend {backend}; "
                         f"add --backend dask or drop --scheduler.")
    if backend == "dask":
        check_scheduler(scheduler)


def check_sweep(sweep: Sweep, out, *, jobs: int = 1, backend: str = "loky",
                resume: bool = False) -> None:
    """Raise ValueError if ``sweep`` cannot run into ``out`` (options already checked).

    Checks the output folder (:func:`~nsrl.experiments.storage.check_out`), a sample-based
    operator's budget (:func:`check_budgets`) and the memory of the largest shard times the
    local workers.
    """
    check_out(out, sweep, resume)
    check_windows(sweep)
    if sweep.sampled:
        check_budgets(sweep)
    if backend != "dask":  # Dask workers run elsewhere, with their own memory
        largest = max(sweep.shards(), key=lambda s: (s.n_states, s.n_actions))
        workers = 1 if backend == "sequential" else min(jobs, len(sweep.shards()))
        each = shard_nbytes(sweep, largest)
        fits_one = (available_memory() or math.inf) >= each
        check_memory(workers * each,
                     f"computing the sweep's largest shards (n_S = {largest.n_states}, n_A = "
                     f"{largest.n_actions}) on {workers} worker(s)",
                     "use fewer --jobs" if workers > 1 and fits_one
                     else "use smaller n_states or n_actions (or fewer n_runs)")


def check_windows(sweep: Sweep) -> None:
    """Refuse an NSPI(m) whose batched window of m policies per run cannot fit in memory.

    The batched engine (up to BATCHED_MAX_STATES states) keeps m actions per state and run:
    8 m n_runs n_S bytes; the message says the largest m that fits now.
    """
    sizes = [s for s in sweep.n_states if s <= BATCHED_MAX_STATES]
    if not sizes or sweep.engine == "reference":
        return
    per_m = 8.0 * sweep.n_runs * max(sizes)
    for name in sweep.schemes:
        scheme = sweep.scheme(name)
        m = scheme.m if isinstance(scheme, NSPI) else 1
        free = available_memory()
        if m > 1 and free is not None and m * per_m > free:
            check_memory(m * per_m, f"sweep field 'schemes': {name} (a window of m = {m:,} "
                         f"policies for each of {sweep.n_runs} runs of {max(sizes)} states)",
                         f"use m <= {int(free // per_m):,}")


def check_budgets(sweep: Sweep) -> None:
    """Raise ValueError if a shard's transitions per greedy call are too few for its operator.

    The operator is built for the smallest budget of each n_A on a two-state stand-in (what
    it refuses depends on n_A and its rollout settings, not on the model).
    """
    for A in sweep.n_actions:
        shard = Shard(min(sweep.n_states), A, 1, 0)
        stand_in = garnet(min(2, shard.n_states), A, 1, 1, sweep.gamma, seed=0)
        try:
            make_operator(sweep.operator, stand_in, **sweep.operator_options(shard))
        except ValueError as exc:
            field = ("'budget':" if sweep.budget is not None else
                     f"'samples_per_pair': {sweep.samples_per_pair} x n_S {shard.n_states} x "
                     f"n_A {A} =")
            raise ValueError(
                f"sweep field {field} {sweep.budget_for(shard)} transitions per greedy call "
                f"are too few for {sweep.operator} ({str(exc).rstrip('.')}); raise "
                f"{'budget' if sweep.budget is not None else 'samples_per_pair'}."
            ) from None


def check_scheduler(address: str | None, timeout: float = 10.0) -> None:
    """Raise ValueError unless dask.distributed is installed and a scheduler with workers answers.

    The scheduler is asked who it is (its ``identity``) within ``timeout`` seconds: a service
    that is not Dask, or a scheduler with no worker (joblib would wait for one and fail
    later), is refused at once.
    """
    if not address:
        raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786).")
    try:
        from distributed import comm
    except ImportError:
        raise ValueError("--backend dask needs dask.distributed, which is not installed: "
                         "pip install 'nsrl[dask]'.") from None
    try:
        protocol, location = comm.parse_address(address)
        if protocol == "tcp":  # a refused or unknown host fails here at once, not at timeout
            socket.create_connection(comm.parse_host_port(location), timeout=timeout).close()
        identity = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))
    except (OSError, ValueError, TypeError) as exc:  # TimeoutError is an OSError
        why = f"no answer within {timeout:g} s" if isinstance(exc, TimeoutError) else exc
        raise ValueError(f"cannot reach a dask scheduler at {address!r} ({why}); start one "
                         f"(`dask scheduler`) or correct --scheduler.") from None
    if not isinstance(identity, dict) or identity.get("type") != "Scheduler":
        raise ValueError(f"{address!r} answers but is not a dask scheduler; correct "
                         f"--scheduler (a `dask scheduler` prints its address).")
    if not identity.get("workers"):
        raise ValueError(f"the dask scheduler at {address!r} has no worker; start some "
                         f"(`dask worker {address}`) and run again.")


async def _identity(address: str, timeout: float):
    """The scheduler's answer to the ``identity`` request (who it is, its workers)."""
    from distributed.comm import connect

    stream = await connect(address, timeout=timeout)
    try:
        await stream.write({"op": "identity", "reply": True})
        return await stream.read()
    finally:
        stream.abort()


def _parallel(jobs: int, backend: str, scheduler: str | None):
    """A joblib Parallel yielding results as they finish, and the context it needs."""
    import contextlib

    import joblib

    if backend == "dask":
        from distributed import Client

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
    slow = [] if sweep.sampled else without_engine(sweep)
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
    from joblib import delayed
    from tqdm.auto import tqdm

    parallel, ctx = _parallel(jobs, backend, scheduler)
    bar = tqdm(total=len(sweep.shards()), initial=intact, unit="shard", desc=sweep.name,
               disable=not progress, smoothing=0.05,
               mininterval=0.5 if sys.stderr.isatty() else 60)
    with ctx, bar:
        added, plugins = registrations(sweep), loaded_plugins()
        for shard, columns, cpu in parallel(
                delayed(compute_shard)(sweep.to_dict(), s, added, plugins) for s in todo):
            check_losses(columns["loss"], sweep.gamma, 1.0, f"the losses of shard {shard.name}")
            store.write(shard, columns)
            written.append(shard.name)
            store.log_session({"event": "shard", "session": session, "shard": shard.name,
                               "elapsed": round(time.time() - start, 2),
                               "cpu_seconds": round(cpu, 2)})
            bar.update(1)
