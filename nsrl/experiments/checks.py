"""Everything a sweep run is checked against before anything is written.

:func:`check_run` checks the run options (:func:`check_backend`, which probes a Dask
scheduler once) and the sweep against its output folder (:func:`check_sweep`: the folder, the
operator's budget on a stand-in model, NSPI's windows, and the memory of the largest shard
times the local workers, :func:`shard_nbytes`). On a domain without a model the operator and
the estimate are built on the first shard's env instead (:func:`check_simulator`), and what
needs a model (the stand-in, NSPI's batched windows) is not checked. The sweep itself was
checked when it was built (:class:`nsrl.experiments.sweep.Sweep`); nothing here checks it
again.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import os
import socket

from nsrl.engine import BATCHED_MAX_STATES
from nsrl.experiments.shards import Shard
from nsrl.experiments.storage import check_out
from nsrl.experiments.sweep import Sweep
from nsrl.model.garnet import garnet
from nsrl.model.memory import available_memory, check_memory
from nsrl.schemes import NSPI

BACKENDS = ("loky", "dask", "sequential")
JOBS_PER_CPU = 4  # --jobs beyond this many local workers per CPU is refused


# Peak memory of a shard (measured with ru_maxrss at n_S = 400-800, 30 runs): about four
# dense n_S x n_S float64 arrays per run in the fast path, on top of the Garnet, plus the
# policies kept per iteration (PSDP, NSPI), the result table, and a worker's interpreter,
# numpy, numba and compiled kernels (~300 MB).
_RUN_DENSE_BYTES = 32
_ROW_BYTES = 100
_WORKER_BYTES = 300 * 2**20


def shard_nbytes(sweep: Sweep, shard: Shard) -> int:
    """Estimated peak memory (bytes) of computing ``shard`` (:func:`~.worker.compute_shard`).

    The model, the batched engines' dense arrays where they run, the per-run results, and
    one run's sample-based operator (its registry entry's measured ``nbytes``; the operator's
    features: one-hot, or Phi with p columns).
    """
    S = shard.n_states or 1
    A, R, K = shard.n_actions or 1, sweep.n_runs, sweep.n_iterations
    batched = (sweep.engine != "reference" and S <= BATCHED_MAX_STATES
               and sweep.operator_entry.batched is not None and sweep.domain_entry.has_model)
    dense = _RUN_DENSE_BYTES * R * S * S if batched else 0
    sampled = 0
    if sweep.sampled:
        onehot = sweep.operator_options().get("features") == "onehot"
        p = None if onehot else (sweep.features_of(S) or max(1, S // 10))
        sampled = operator_nbytes(sweep.operator_entry.nbytes, S, A, sweep.budget_for(shard), p)
    return (sweep.model_nbytes(shard) + dense + 16 * R * K * S
            + _ROW_BYTES * R * K * len(sweep.schemes) + _WORKER_BYTES + sampled)


def operator_nbytes(nbytes, n_states: int, n_actions: int, transitions: int,
                    n_features: int | None) -> int:
    """An operator's ``nbytes(n_states, n_actions, transitions)`` of one call.

    With ``n_features=`` (p on Phi, None on one-hot) where the estimate takes it.
    """
    if nbytes is None:
        return 0
    try:
        takes = "n_features" in inspect.signature(nbytes).parameters
    except (TypeError, ValueError):
        takes = False
    extra = {"n_features": n_features} if takes else {}
    return int(nbytes(n_states, n_actions, transitions, **extra))


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
    if not sweep.domain_entry.has_model:
        check_simulator(sweep)
    else:
        check_windows(sweep)
        if sweep.sampled:
            check_budgets(sweep)
    if backend != "dask":  # Dask workers run elsewhere, with their own memory
        largest = max(sweep.shards(), key=lambda s: (s.n_states or 0, s.n_actions or 0))
        workers = 1 if backend == "sequential" else min(jobs, len(sweep.shards()))
        each = shard_nbytes(sweep, largest)
        fits_one = (available_memory() or math.inf) >= each
        what = (f"n_S = {largest.n_states}, n_A = {largest.n_actions}"
                if sweep.domain_entry.has_model else f"shard {largest.name}")
        check_memory(workers * each,
                     f"computing the sweep's largest shards ({what}) on {workers} worker(s)",
                     "use fewer --jobs" if workers > 1 and fits_one
                     else "use smaller n_states or n_actions (or fewer n_runs)")


def check_simulator(sweep: Sweep) -> None:
    """Build the operator and the estimate on the first shard's env (no model to stand in).

    What an operator refuses on an env (a factory that needs a model, too small a budget) is
    known only once it is built: refused here, in one line, before anything is written.

    Raises:
        ValueError: the env, the operator or the estimate cannot be built (the message names
            which and the way out).
    """
    shard, name = sweep.shards()[0], sweep.domain.name
    env = _built(lambda: sweep.env(shard), f"the {name} domain's env cannot be built for shard "
                 f"{shard.name}", "fix its env factory or the sweep's domain options")
    try:
        _built(lambda: sweep.operator_spec(shard).make(env), f"the {sweep.operator.name} "
               f"operator cannot be built on the {name} domain's env", "a domain without a "
               "model needs an operator whose factory takes an env (docs/guide/extending.md), "
               "with options it accepts")
        games = sweep.estimate.games if sweep.estimate is not None else 2
        _built(lambda: sweep.domain_entry.make_estimate(env, games, sweep.games_seed(shard)),
               f"the {name} domain's estimate cannot be built",
               "fix its estimate factory, estimate(env, games, seed) -> callable(policy)")
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()


def _built(make, what: str, fix: str):
    """``make()``, or one ValueError naming ``what`` failed, why, and ``fix``."""
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - a plugin's code: anything it raises is its error
        raise ValueError(f"{what} ({type(exc).__name__}: {str(exc).rstrip('.')}); {fix}.") \
            from None


def check_windows(sweep: Sweep) -> None:
    """Refuse an NSPI(m) whose batched window of m policies per run cannot fit in memory.

    The batched engine (up to BATCHED_MAX_STATES states) keeps m actions per state and run:
    8 m n_runs n_S bytes; the message says the largest m that fits now.
    """
    if "n_states" not in sweep.axis_names:
        return
    sizes = [s for s in sweep.axis("n_states") if s <= BATCHED_MAX_STATES]
    if not sizes or sweep.engine == "reference":
        return
    per_m = 8.0 * sweep.n_runs * max(sizes)
    for name in (spec.name for spec in sweep.schemes):
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
    given = "budget" in sweep.operator.options
    for shard in _smallest(sweep):
        A = shard.n_actions or 2
        stand_in = garnet(min(2, shard.n_states or 2), A, 1, 1, sweep.gamma, seed=0)
        try:
            sweep.operator_spec(shard).make(stand_in)
        except ValueError as exc:
            field = ("operator option 'budget':" if given else
                     f"sweep field 'samples_per_pair': {sweep.samples_per_pair} x n_S "
                     f"{shard.n_states} x n_A {A} =")
            raise ValueError(
                f"{field} {sweep.budget_for(shard)} transitions per greedy call are too few "
                f"for {sweep.operator.name} ({str(exc).rstrip('.')}); raise "
                f"{'budget' if given else 'samples_per_pair'}."
            ) from None


def _smallest(sweep: Sweep) -> list[Shard]:
    """The shard with the fewest states of each number of actions (its smallest budget)."""
    best: dict = {}
    for shard in sweep.shards():
        key = shard.n_actions
        if key not in best or (shard.n_states or 0) < (best[key].n_states or 0):
            best[key] = shard
    return list(best.values())


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


