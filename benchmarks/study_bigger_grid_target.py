"""The grid-world target at 10^5 states, tried as a user would (issue 21): LSTD-Q on more
RBF centres and other feature maps, at a fixed total budget of 10^6 transitions.

Target: the best sample-based scheme reaches an exact loss <= 10% of pi_0's within 10^6
transitions on the ``bigger`` sweep's grid world MDP 0 at n_states = 10^5 (90 007 states).
Each configuration is (feature map, features, scheme, iterations x transitions per call =
10^6); one run seed. Tile coding is passed to LSTD-Q as a scipy.sparse table (its sparse
path and default ridge); ``cells`` is the table itself (one indicator per grid cell: LSTD-Q's
one-hot path, the reference that no feature map's resolution can beat on this data); the
other maps as the model's dense Phi. Appends one line per
configuration to benchmarks/results/study_bigger_grid_target.txt as soon as it is done.

    python benchmarks/study_bigger_grid_target.py --configs "rbf:400:cpi(0.1):20"
    python benchmarks/study_bigger_grid_target.py --configs "tiles:63504:psdp:50"
    python benchmarks/study_bigger_grid_target.py --configs "cells:0:api:60:batch"
    python benchmarks/study_bigger_grid_target.py --n-states 10000 \
        --configs "tiles:6400:psdp:50,tiles:6400:psdp:50:batch"
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.domains import side
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.greedy import TransitionStore
from nsrl.greedy.feature_maps import coordinate_features, make_feature_map
from nsrl.greedy.sampling import make_sampler

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 1_000_000


def grid_instance(n_states: int) -> tuple[nsrl.FiniteMDP, float]:
    """The ``bigger`` sweep's grid world MDP 0 at ``n_states`` (the instance of its shards),
    with the cells' coordinates as features, and pi_0's loss."""
    sweep = load_experiment("bigger").sweeps()["grid-lstdq"]
    shard = Shard(n_states, 4, 4, 0)
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    mdp = nsrl.gridworld(side(n_states), gamma=sweep.gamma, seed=rng)
    return mdp, nsrl.loss(mdp, nsrl.constant())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="rbf:400:cpi(0.1):20,rbf:400:api(0.1):20",
                        help="kind:n_features:scheme:iterations[:batch], comma-separated "
                        "(batch: tiles or cells, all 10^6 transitions drawn first; cells: one "
                        "indicator per cell, n_features ignored)")
    parser.add_argument("--n-states", type=int, default=100_000)
    args = parser.parse_args()
    sweep = load_experiment("bigger").sweeps()["grid-lstdq"]
    base, l0 = grid_instance(args.n_states)
    out = ROOT / "benchmarks" / "results" / "study_bigger_grid_target.txt"
    for config in args.configs.split(","):
        kind, n_features, scheme, iterations, *mode = config.split(":")
        n_features, iterations, batch = int(n_features), int(iterations), mode == ["batch"]
        start = time.process_time()
        if kind in ("tiles", "cells"):  # scipy.sparse tables: LSTD-Q's sparse/one-hot paths
            phi = sp.identity(base.n_states, format="csr") if kind == "cells" else \
                make_feature_map(kind, n_features, 2).set_params(sparse_output=True) \
                .fit_transform(base.features)
            mdp, env = base, FiniteMDPVectorEnv(base, num_envs=1)
            if batch:  # textbook LSPI's protocol: one batch of 10^6, then no new transitions
                store = TransitionStore(BUDGET)
                store.add(make_sampler(env, None).transitions(BUDGET, np.random.default_rng(1)))
                spec = nsrl.LSTDQ(env, budget=0, features=phi, store=store)
            else:
                spec = nsrl.LSTDQ(env, budget=BUDGET // iterations, features=phi)
        else:
            phi = coordinate_features(base.features, kind, n_features)
            mdp = nsrl.with_features(base, phi)
            spec = nsrl.OperatorSpec("lstdq", budget=BUDGET // iterations, features="phi")
        with threadpool_limits(1, "blas"):
            hist = nsrl.run(sweep.scheme(scheme), spec, iterations,
                            rng=np.random.default_rng(0), mdp=mdp, engine="reference")
        best = int(np.argmin(hist.losses))
        where = f"iteration {best + 1}" if batch else f"{int(hist.samples[best]):,} transitions"
        calls = f"one batch of {BUDGET:,} (uniform walks), {iterations} iterations" if batch \
            else f"{iterations} x {BUDGET // iterations:,}"
        line = (f"n_states {args.n_states}: {kind} {phi.shape[1]} features, {scheme} + LSTD-Q, "
                f"{calls}: loss(pi_0) {l0:.2f}; final {hist.losses[-1]:.2f} "
                f"({hist.losses[-1] / l0:.0%} of pi_0's), best {hist.losses[best]:.2f} "
                f"({hist.losses[best] / l0:.0%}) at {where}; "
                f"losses {np.round(hist.losses, 2).tolist()} "
                f"[{time.process_time() - start:.0f} CPU s]")
        print(line, flush=True)
        with out.open("a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
