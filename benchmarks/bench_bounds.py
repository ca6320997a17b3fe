"""How fast are the concentrability coefficients? Run (output committed as
benchmarks/results/bench_bounds.txt): OPENBLAS_NUM_THREADS=1 python benchmarks/bench_bounds.py

1. c(0..4) by the backward DP vs brute-force enumeration of policy sequences (the definition)
   on a tiny MDP: the same numbers, A^(S i) sequences against S A B S work per step.
2. One DP step on Garnets: a scipy.sparse product P[(s,a), s''] @ W (what nsrl uses) vs the
   dense BLAS product (the baseline), and the full `concentrability` call at gamma = 0.99.
"""

import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import nsrl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "theory"))
from test_concentrability import brute_force_c, random_mdp  # noqa: E402


def best_of(f, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def tiny():
    mdp, mu = random_mdp(0, 4, 2, 0.9)
    t_bf, expected = best_of(lambda: brute_force_c(mdp, mu, 5), repeat=1)
    t_dp, conc = best_of(lambda: nsrl.concentrability(mdp, mu, min_terms=5, max_terms=5))
    same = np.allclose(conc.c[:5], expected)
    n_seq = sum((2**4) ** i for i in range(5))
    print(f"tiny MDP (S=4, A=2), c(0..4): brute force {n_seq} sequences {t_bf * 1e3:8.1f} ms | "
          f"DP {t_dp * 1e3:6.2f} ms (whole call) | same numbers: {same}")


def step(S, A, b):
    mdp = nsrl.garnet(S, A, b, seed=0)
    W = np.random.default_rng(0).random((S, S))
    sparse, dense = sp.csr_matrix(mdp.P.reshape(S * A, S)), mdp.P.reshape(S * A, S)
    t_sp, x = best_of(lambda: (sparse @ W).reshape(S, A, S).max(axis=1), repeat=20)
    t_de, y = best_of(lambda: (dense @ W).reshape(S, A, S).max(axis=1), repeat=20)
    assert np.allclose(x, y)
    t_all, conc = best_of(lambda: nsrl.concentrability(mdp, m=(5,)), repeat=1)
    print(f"Garnet {S:3d},{A:2d},{b:2d}: DP step sparse {t_sp * 1e3:6.2f} ms | dense BLAS "
          f"{t_de * 1e3:6.2f} ms (baseline) | concentrability(gamma=0.99, tol=1e-4): "
          f"{conc.n_terms} terms in {t_all:5.2f} s")


if __name__ == "__main__":
    print(f"{os.cpu_count()} cpus; load {os.getloadavg()[0]:.2f}")
    tiny()
    for S, A, b in itertools.product((100, 200), (5, 10), (1, 10)):
        step(S, A, b)
