"""A shard on a domain without a model: runs on its env, judged by the domain's estimate.

:func:`compute_simulated` is :func:`nsrl.experiments.worker.compute_shard`'s path for such a
domain. Each run of each scheme gets a fresh env and a fresh operator built on it (so a run
does not depend on the runs before it in the worker), and after each iteration its output is
scored by the domain's estimate on one shard-wide env: ``games`` games, ``final_games`` at the
last iteration, the same games for every scheme and run (:mod:`nsrl.experiments.quality`).
Everything is derived from the sweep and the shard, so any worker computes the same numbers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from nsrl.engine import run
from nsrl.experiments.quality import Evaluation
from nsrl.experiments.shards import Shard
from nsrl.experiments.sweep import Sweep
from nsrl.schemes.base import History


def evaluation(sweep: Sweep, shard: Shard) -> tuple[Evaluation, object]:
    """The shard's :class:`~nsrl.experiments.quality.Evaluation` and the env its games use."""
    assert sweep.estimate is not None  # a domain without a model
    env, seed = sweep.env(shard), sweep.games_seed(shard)
    entry = sweep.domain_entry
    every = entry.make_estimate(env, sweep.estimate.games, seed)
    final = entry.make_estimate(env, sweep.estimate.final_games, seed)
    return Evaluation(every, final, sweep.n_iterations), env


def compute_simulated(sweep: Sweep, shard: Shard) -> dict:
    """Every scheme and run of ``sweep`` on ``shard``'s env, as tidy columns (module doc)."""
    scores, env = evaluation(sweep, shard)
    operator = sweep.operator_spec(shard)
    parts = []
    try:
        for name in sweep.scheme_names:
            runs = []
            for rng in sweep.run_rngs(shard, name):
                own = sweep.env(shard)
                try:
                    hist = run(sweep.scheme(name), operator, sweep.n_iterations, rng=rng,
                               env=own, estimate=scores.for_run())
                finally:
                    _close(own)
                runs.append(replace(hist, output=None, outputs=[]))  # the arrays only
            parts.append((name, History.stack(runs)))
    finally:
        _close(env)
    return columns(sweep, shard, parts)


def columns(sweep: Sweep, shard: Shard, parts: list) -> dict:
    """The shard's columns: its key, the score, its interval and games, memory, step, samples."""
    K, R = sweep.n_iterations, sweep.n_runs
    n = len(parts) * R * K
    out = {axis: np.full(n, value, dtype=np.int32) for axis, value in shard.instance.items()}

    def joined(field: str) -> np.ndarray:
        return np.concatenate([getattr(h, field).ravel() for _, h in parts])

    out.update({
        "mdp": np.full(n, shard.mdp, dtype=np.int32),
        "run": np.tile(np.repeat(np.arange(R, dtype=np.int32), K), len(parts)),
        "scheme": np.repeat(np.array([s for s, _ in parts], dtype=object), R * K),
        "iteration": np.tile(np.arange(1, K + 1, dtype=np.int32), R * len(parts)),
        "score": joined("scores").astype(np.float64),
        "score_ci": joined("score_ci").astype(np.float64),
        "games": joined("games").astype(np.int32),
        "memory": joined("memory").astype(np.int32),
        "step": joined("steps").astype(np.float64),
        "samples": joined("samples").astype(np.int64),
        "operator": np.full(n, sweep.operator.name, dtype=object),
    })
    return out


def _close(env: object) -> None:
    close = getattr(env, "close", None)
    if callable(close):
        close()
