"""The grid world at 10^5 states, revisited: loss against transitions per call, and each map's
least-squares floor.

The ``bigger`` sweep's grid world MDP 0 at n_states = 10^5 (90 007 cells, gamma = 0.99), the
feature maps as scipy.sparse tables (LSTD-Q's index paths):

* ``rbf-100`` and ``rbf-400`` (floors only): the ``bigger`` sweep's kind of map, Gaussian
  bumps on a 10 x 10 and 20 x 20 grid of centres (dense);
* ``tiles-1600`` and ``tiles-6400`` (floors only): coarser tile coding;
* ``cells``: one indicator per cell (the table itself: LSTD-Q's one-hot path, LSTD-Q is
  then the evaluation on the data's empirical model);
* ``tiles-25600`` and ``tiles-102400``: tile coding with 4 offset tilings (79 x 79 and
  159 x 159 tiles each; ``make_feature_map("tiles", n)``);
* ``multires``: the cells plus 4 offset tilings of 80 x 80 (116 251 columns): the map that
  shares samples across cells without losing any cell's resolution; its sparse LU uses
  SuperLU's MMD_ATA ordering (``LSTDQ(sparse_ordering="MMD_ATA")``), on which it is solvable.

Two parts, each appending one JSON line per result to
``benchmarks/results/study_grid_transitions.jsonl`` as soon as it is done:

* ``floors`` (exact, no sampling): v* and Q* projected by unweighted least squares on each
  map's columns (scipy's LSQR, ``atol = btol = 1e-12``; the dense RBF maps: an SVD); the
  exact loss of the greedy policy of ``Phi w`` (a greedy step with the model: what an exact
  evaluation projected on the map leaves) and of ``argmax_a (Phi w_a)`` (Q* projected action
  by action: the best greedy policy of any Q the map can represent, as LSTD-Q fits it per
  action), beside pi_0's loss.
* ``calls``: API (textbook LSPI) with LSTD-Q on each map, ``--iterations`` calls, each
  from N *fresh* transitions of uniform walks (``reuse=False``: the call sees exactly N) for
  N = 10^5, 10^6, 10^7, one run seed; the exact loss after every call, the first call at
  which the loss is <= 10% of pi_0's (if any), the CPU seconds. Each configuration runs in a
  child process stopped after ``--cap`` CPU seconds (default 1800), and is then recorded as
  stopped, without losses.

    python benchmarks/study_grid_transitions.py --part floors
    python benchmarks/study_grid_transitions.py --part calls --maps cells,multires \\
        --transitions 100000,1000000,10000000 --iterations 20

BLAS runs on one thread. Exact API on this MDP is at 10% of pi_0's loss from its 5th
iteration (printed by ``--part floors``, as ``exact API``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from study_bigger_grid_target import grid_instance  # a sibling script: benchmarks/ is on the path
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import LSTDQ
from nsrl.greedy.feature_maps import make_feature_map

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "study_grid_transitions.jsonl"
MAPS = ("cells", "tiles-25600", "tiles-102400", "multires")  # the maps of part calls
FLOOR_MAPS = ("rbf-100", "rbf-400", "tiles-1600", "tiles-6400", *MAPS)  # and of part floors
TARGET = 0.10  # the issue's target: a loss <= 10% of pi_0's


def check_map(name: str) -> str:
    """``name`` if it names a map (:data:`FLOOR_MAPS`, or tiles-N, rbf-N), else ValueError."""
    kind, _, size = name.partition("-")
    if name in ("cells", "multires") or (kind in ("tiles", "rbf") and size.isdigit()):
        return name
    raise ValueError(f"map should be one of {FLOOR_MAPS} (or tiles-N, rbf-N), got {name!r}.")


def feature_map(name: str, mdp: nsrl.FiniteMDP) -> sp.csr_matrix | np.ndarray:
    """The map ``name`` of the grid world's cell coordinates: a CSR table (RBF: dense)."""
    check_map(name)
    cells = sp.identity(mdp.n_states, format="csr")
    if name == "cells":
        return cells
    kind, _, size = name.partition("-")
    if kind == "tiles":
        return make_feature_map("tiles", int(size), 2).set_params(
            sparse_output=True).fit_transform(mdp.features)
    if kind == "rbf":  # dense: the sweep's kind of map, for the floors
        return make_feature_map("rbf", int(size), 2).fit_transform(mdp.features)
    tilings = make_feature_map("tiles", 4 * 81 * 81, 2).set_params(  # multires
        sparse_output=True, n_tiles=80).fit_transform(mdp.features)
    return sp.hstack([cells, tilings], format="csr")


def project(phi: sp.csr_matrix | np.ndarray, y: np.ndarray) -> np.ndarray:
    """Phi w with w the least-squares fit of y on Phi's columns (sparse: LSQR; dense: SVD)."""
    if isinstance(phi, np.ndarray):
        return phi @ np.linalg.lstsq(phi, y, rcond=None)[0]
    w = spla.lsqr(phi, y, atol=1e-12, btol=1e-12, iter_lim=20 * phi.shape[1])[0]
    return np.asarray(phi @ w)


def write(record: dict, out: Path) -> None:
    print(json.dumps(record), flush=True)
    with out.open("a") as f:
        f.write(json.dumps(record) + "\n")


def floors(mdp: nsrl.FiniteMDP, l0: float, maps: list[str], out: Path) -> None:
    v_star = nsrl.optimal_value(mdp)
    q_star = nsrl.q_values(mdp, v_star)
    hist = nsrl.run("api", nsrl.ExactGreedy(mdp), 30, rng=np.random.default_rng(0))
    write({"part": "exact-api", "n_states": mdp.n_states, "loss_pi0": l0,
           "losses": [float(x) for x in hist.losses]}, out)
    for name in maps:
        start = time.process_time()
        phi = feature_map(name, mdp)
        v_hat = project(phi, v_star)
        q_hat = np.column_stack([project(phi, q_star[:, a]) for a in range(mdp.n_actions)])
        from_v = nsrl.loss(mdp, nsrl.Deterministic(nsrl.greedy_actions(mdp, v_hat)))
        from_q = nsrl.loss(mdp, nsrl.Deterministic(np.argmax(q_hat, axis=1)))
        write({"part": "floors", "map": name, "n_states": mdp.n_states,
               "columns": int(phi.shape[1]), "loss_pi0": l0,
               "greedy_of_projected_v": float(from_v), "argmax_of_projected_q": float(from_q),
               "v_fit_rmse": float(np.sqrt(np.mean((v_hat - v_star) ** 2))),
               "cpu_seconds": round(time.process_time() - start, 1)}, out)


def _api_run(mdp: nsrl.FiniteMDP, phi, name: str, n: int, iterations: int,
             cap: float, queue) -> None:
    """One configuration of part calls, in a child process limited to ``cap`` CPU seconds."""
    resource.setrlimit(resource.RLIMIT_CPU, (int(cap), int(cap) + 10))
    start = time.process_time()
    op = LSTDQ(FiniteMDPVectorEnv(mdp, num_envs=1), budget=n, features=phi, reuse=False,
               sparse_ordering="MMD_ATA" if name == "multires" else "COLAMD")
    hist = nsrl.run("api", op, iterations, rng=np.random.default_rng(0), mdp=mdp,
                    engine="reference")
    queue.put(([round(float(x), 6) for x in hist.losses], time.process_time() - start))


def calls(mdp: nsrl.FiniteMDP, l0: float, maps: list[str], budgets: list[int],
          iterations: int, cap: float, out: Path) -> None:
    """API with LSTD-Q per map and transitions per call; a run over ``cap`` CPU s is stopped
    (SIGXCPU) and recorded as such, without losses."""
    ctx = mp.get_context("fork")  # the child shares the model and the map
    for name in maps:
        phi = feature_map(name, mdp)
        for n in budgets:
            queue = ctx.Queue()
            child = ctx.Process(target=_api_run, args=(mdp, phi, name, n, iterations, cap, queue))
            child.start()
            child.join()
            record = {"part": "calls", "map": name, "scheme": "API", "n_states": mdp.n_states,
                      "columns": int(phi.shape[1]), "transitions_per_call": n,
                      "iterations": iterations, "loss_pi0": l0}
            if child.exitcode != 0:
                write({**record, "losses": None, "first_call_within_target": None,
                       "stopped": f"over the cap of {cap:.0f} CPU s (exit code "
                                  f"{child.exitcode})", "cpu_seconds": cap}, out)
                continue
            losses, cpu = queue.get()
            crossed = np.flatnonzero(np.asarray(losses) / l0 <= TARGET)
            write({**record, "losses": losses,
                   "first_call_within_target": int(crossed[0]) + 1 if len(crossed) else None,
                   "cpu_seconds": round(cpu, 1)}, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("floors", "calls"), required=True)
    parser.add_argument("--maps", default=None,
                        help=f"comma-separated (default: part floors {','.join(FLOOR_MAPS)}, "
                        f"part calls {','.join(MAPS)})")
    parser.add_argument("--transitions", default="100000,1000000,10000000",
                        help="transitions per call, comma-separated (part calls)")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--cap", type=float, default=1800.0,
                        help="CPU seconds after which a configuration of part calls is "
                        "stopped and recorded as stopped")
    parser.add_argument("--n-states", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON-lines file appended to")
    args = parser.parse_args()
    maps = args.maps.split(",") if args.maps else list(
        FLOOR_MAPS if args.part == "floors" else MAPS)
    mdp, l0 = grid_instance(args.n_states)
    for name in maps:
        check_map(name)  # a wrong name fails before any work
    with threadpool_limits(1, "blas"):
        if args.part == "floors":
            floors(mdp, l0, maps, args.out)
        else:
            calls(mdp, l0, maps, [int(x) for x in args.transitions.split(",")],
                  args.iterations, args.cap, args.out)


if __name__ == "__main__":
    main()
