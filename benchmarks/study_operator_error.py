"""The projected operator's greedy error at CPI's first call, and the scale of Garnet values.

CPI's stopping rule compares the operator's advantage estimate with an accuracy epsilon (in
normalised units, default 1e-3 R_max). How accurate is the paper's operator there? On every MDP
of the sensitivity study (27 instances x MDPs 0-4, the default reading: p = n_S / 10 U[0, 1]
features, relative noise iota = 0.1), CPI's first call is measured: the operator's greedy
policy pi' of v_{pi_0} under rho = d_{pi_0,nu}, and its greedy error
``(1 - gamma) rho (T v - T_{pi'} v)`` in CPI's normalised units
(:func:`nsrl.schemes.base.greedy_error` times 1 - gamma), for :data:`DRAWS` draws of the noise
per MDP (Generators ``[SEED, n_S, n_A, b, mdp, draw]``).

The same MDPs give the scale of the values the noise is added to: the mean over states of
v_{pi_0} and of v*, per MDP (docs/decisions.md: what absolute and relative noise of 0.1 mean).

Writes docs/sensitivity/operator_error.csv (one row per MDP and draw) and
docs/sensitivity/garnet_values.csv (one row per MDP); docs/fidelity.md and docs/decisions.md
quote them (``python -m study.numbers``).

    nice -n 10 python benchmarks/study_operator_error.py     # about 2 CPU s
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from nsrl.exact import backend
from nsrl.experiments.sensitivity import SWEEP
from nsrl.greedy.base import Occupancy
from nsrl.greedy.model_based import ProjectedGreedy
from nsrl.schemes import rules
from nsrl.schemes.base import Step, greedy_error

ROOT = Path(__file__).resolve().parents[1]
ERRORS = ROOT / "docs" / "sensitivity" / "operator_error.csv"
VALUES = ROOT / "docs" / "sensitivity" / "garnet_values.csv"
SEED, DRAWS = 9, 10
KEYS = ["n_states", "n_actions", "branching", "mdp"]


def first_call_errors(mdp, key: tuple, draws: int = DRAWS) -> list[float]:
    """CPI's first-call greedy error on ``mdp``, normalised, for ``draws`` draws of the noise."""
    pi0 = rules.start_policy()
    rho, operator = Occupancy(pi0), ProjectedGreedy(mdp)  # the default reading
    out = []
    for d in range(draws):
        g = operator.greedy(pi0, rho, np.random.default_rng([SEED, *key, d]))
        out.append((1 - mdp.gamma) * greedy_error(mdp, Step(target=pi0, rho=rho, greedy=g)))
    return out


def main() -> None:
    start = time.process_time()
    errors, values = [], []
    for shard in SWEEP.shards():
        key = (shard.n_states, shard.n_actions, shard.branching, shard.mdp)
        mdp = SWEEP.model(shard)
        errors += [(*key, d, e) for d, e in enumerate(first_call_errors(mdp, key))]
        b = backend(mdp)
        values.append((*key, float(b.value(rules.start_policy()).mean()),
                       float(b.optimal_value().mean())))
    pd.DataFrame(errors, columns=KEYS + ["draw", "error"]).sort_values(
        KEYS + ["draw"]).to_csv(ERRORS, index=False, float_format="%.6g")
    pd.DataFrame(values, columns=KEYS + ["value_pi0", "value_star"]).sort_values(KEYS).to_csv(
        VALUES, index=False, float_format="%.6g")
    e = pd.read_csv(ERRORS)["error"]
    print(f"{len(e)} errors: median {e.median():.4f}, mean {e.mean():.4f}; "
          f"{time.process_time() - start:.1f} CPU s -> {ERRORS}, {VALUES}")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
