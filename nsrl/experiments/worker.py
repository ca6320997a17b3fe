"""What a worker process does: compute one shard, a pure function of the sweep and the shard.

:func:`compute_shard` runs every scheme and run of a sweep on one MDP with derived seeds, so
the results do not depend on which worker computed them, the backend, or the order. A worker
first loads the plugins the driver loaded, then registers what the driver registered beyond
the built-in names (:func:`shipped`: schemes, the operator, the domain and the schemes'
batched engines, a replaced built-in included), so that a name means the same component in
every process. Each failure says which plugin and which process.
"""

from __future__ import annotations

import os
import pickle
import socket
import time
from dataclasses import replace

import numpy as np
from threadpoolctl import threadpool_limits

from nsrl.batched.registry import ENGINES, engine_entry
from nsrl.domains import DOMAINS
from nsrl.engine import run
from nsrl.experiments.shards import Shard
from nsrl.experiments.sweep import Sweep
from nsrl.greedy.registry import OPERATORS
from nsrl.plugins import PluginError, load_plugins
from nsrl.registry import receive
from nsrl.schemes.registry import SCHEMES


class WorkerError(RuntimeError):
    """A worker process could not set up what the driver registered (the message says why)."""


def where() -> str:
    """This process, for messages: ``process 1234 on host``."""
    return f"process {os.getpid()} on {socket.gethostname()}"


def shipped(sweep: Sweep) -> bytes:
    """The entries ``sweep`` names that a fresh worker would not have, pickled for it.

    Pickled here (cloudpickle: a script's own classes travel by value), unpickled by the
    worker after it loaded the plugins, so that a component the worker cannot import is
    reported by name instead of as a broken process pool.
    """
    try:  # joblib's own dependency (vendored in joblib before 1.5)
        import cloudpickle  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - joblib < 1.5
        from joblib.externals import cloudpickle

    entries = [*SCHEMES.shipped(s.name for s in sweep.schemes),
               *OPERATORS.shipped([sweep.operator.name]),
               *DOMAINS.shipped([sweep.domain.name])]
    for spec in sweep.schemes:
        engine = engine_entry(sweep.scheme_entry(spec.name).cls)
        if engine is not None and not ENGINES.is_builtin(engine):
            entries.append(engine)
    return cloudpickle.dumps(entries) if entries else b""


def _set_up(added: bytes, plugins: tuple[str, ...]) -> None:
    """Load the driver's plugins, then register the entries it shipped."""
    try:
        load_plugins(plugins, installed=False)
    except PluginError as exc:
        raise WorkerError(f"in worker {where()}: {exc}") from None
    if not added:
        return
    try:
        entries = pickle.loads(added)  # noqa: S301 - the driver's own registrations
    except Exception as exc:  # noqa: BLE001 - a component this worker cannot import
        raise WorkerError(f"in worker {where()}: the components the driver registered cannot "
                          f"be loaded here ({type(exc).__name__}: {exc}); install the plugin "
                          f"that defines them on every worker, or put its folder on the "
                          f"workers' PYTHONPATH.") from None
    receive(entries)


def compute_shard(spec: dict, shard: Shard, added: bytes = b"",
                  plugins: tuple[str, ...] = ()) -> tuple[Shard, dict, float, float]:
    """Every scheme and run of ``sweep`` on ``shard``'s MDP, as tidy columns.

    Args:
        spec: ``Sweep.to_dict()`` (a plain dict travels to any worker).
        shard: which instance and MDP.
        added: :func:`shipped` of the sweep (what this worker must register).
        plugins: the plugin modules to load first (:func:`nsrl.plugins.loaded_plugins` of the
            driver), so that their names are registered in this process too.

    Returns:
        ``(shard, columns, cpu_seconds, r_max)``: the columns of
        :func:`nsrl.experiments.storage.columns_of`, the worker's CPU time for the shard
        (what the benchmark's projection is checked against), and the model's largest
        absolute reward (the scale the losses are checked against; NaN on a domain without a
        model, whose shard holds scores: :mod:`nsrl.experiments.simulated`).
    """
    cpu = time.process_time()
    _set_up(added, tuple(plugins))
    sweep = Sweep.from_dict(spec, record=True)
    if not sweep.domain_entry.has_model:
        from nsrl.experiments.simulated import compute_simulated

        with threadpool_limits(limits=1, user_api="blas"):
            columns = compute_simulated(sweep, shard)
        return shard, columns, time.process_time() - cpu, float("nan")
    mdp = sweep.model(shard)
    K = sweep.n_iterations
    parts = []
    # One BLAS thread: the fast path's products are small (n_S <= a few hundred), and
    # threads only add synchronisation (measured: CPI+ twice as slow with 2 threads).
    # nsrl.run picks the engine: the batched one for the projected operator and a scheme
    # class that has one, the reference loop otherwise (a sample-based operator, whose greedy
    # errors are measured with the model, gets a fresh operator per run).
    operator = sweep.operator_spec(shard)
    with threadpool_limits(limits=1, user_api="blas"):
        for name in (s.name for s in sweep.schemes):
            hist = run(sweep.scheme(name), operator, K, rng=sweep.run_rngs(shard, name),
                       mdp=mdp, measure_errors=sweep.sampled, engine=sweep.engine)
            # The columns read the arrays only: the output policy (at 10^5 states a mixture
            # of up to a hundred 4 MB tables) is dropped here, so that a shard holds one
            # scheme's policies at a time instead of every scheme's until it ends.
            parts.append((name, replace(hist, output=None, outputs=[])))
            del hist
    return shard, _columns(sweep, shard, parts), time.process_time() - cpu, mdp.r_max


def _columns(sweep: Sweep, shard: Shard, parts: list) -> dict:
    K, R = sweep.n_iterations, sweep.n_runs
    n = len(parts) * R * K
    columns = {axis: np.full(n, value, dtype=np.int32) for axis, value in shard.instance.items()}
    columns.update({
        "mdp": np.full(n, shard.mdp, dtype=np.int32),
        "run": np.tile(np.repeat(np.arange(R, dtype=np.int32), K), len(parts)),
        "scheme": np.repeat(np.array([s for s, _ in parts], dtype=object), R * K),
        "iteration": np.tile(np.arange(1, K + 1, dtype=np.int32), R * len(parts)),
        "loss": np.concatenate([h.losses.ravel() for _, h in parts]),
        "memory": np.concatenate([h.memory.ravel() for _, h in parts]).astype(np.int32),
        "step": np.concatenate([h.steps.ravel() for _, h in parts]),
    })
    if sweep.sampled:
        columns["operator"] = np.full(n, sweep.operator.name, dtype=object)
        columns["representation"] = np.full(n, sweep.operator_options().get("features", "phi"),
                                            dtype=object)
        columns["samples"] = np.concatenate([h.samples.ravel() for _, h in parts])
        columns["error"] = np.concatenate([h.errors.ravel() for _, h in parts])
    return columns


def without_engine(sweep: Sweep) -> list[str]:
    """The sweep's schemes that have no batched engine (they run on the reference path)."""
    from nsrl.batched import has_engine

    return [s.name for s in sweep.schemes if not has_engine(sweep.scheme(s.name))]
