"""Builders of tests/hostile/test_round5.py for the exact backend (issue 47, item 4).

Each hostile model is an ordinary Garnet changed so that its v* is known from the Garnet's
own (an invariance, not another run of the code under test's answer): actions tied (every
action a copy of the one action of a one-action Garnet), a single action, rewards offset
(``v* + c / (1 - gamma)``), rewards scaled by s (``s v*``). Each is solved with every path
forced at 300 states: the elimination and float32 steps of large models (thresholds
``mpi.ELIMINATE_MIN_PAIRS`` and ``mpi.LARGE_STATES`` set to 0), the float64 steps (defaults
at this size) and dense policy iteration. Before the fix the forced path ran to
``_MAX_GREEDY`` steps and refused every one of these, and dense refused scale 1e-40.
"""

from __future__ import annotations

import numpy as np
import pytest

import nsrl
import nsrl.exact.mpi as mpi
from nsrl import FiniteMDP

N, GAMMA = 300, 0.999
MAX_GREEDY_STEPS = 100  # the forced path's steps: bounded, far below mpi._MAX_GREEDY (10^4)
_U = float(np.finfo(np.float64).eps) / 2


def _hostile(case: str) -> tuple[FiniteMDP, np.ndarray, float]:
    """(model, its v* from the base Garnet's, a bound on that v*'s error)."""
    base = nsrl.garnet(N, 1 if case in ("tied", "single") else 2, 2, seed=7, gamma=GAMMA)
    ref = nsrl.optimal_value(base, method="dense")
    v, err = np.asarray(ref), ref.bound
    nxt, p = base.successors
    if case == "tied":
        model = FiniteMDP._from_parts(np.repeat(nxt, 3, axis=1), np.repeat(p, 3, axis=1),
                                      np.repeat(base.R, 3, axis=1), GAMMA)
        return model, v, err
    if case == "single":
        return base, v, err
    if case.startswith("offset"):
        c = float(case.split("-", 1)[1])
        expected = v + c / (1 - GAMMA)
        return (FiniteMDP._from_parts(nxt, p, base.R + c, GAMMA), expected,
                err + 4 * _U * float(np.abs(expected).max()))
    s = float(case.split("-", 1)[1])  # scale-<s>
    return FiniteMDP._from_parts(nxt, p, base.R * s, GAMMA), v * s, err * s * (1 + 4 * _U)


def hard_model_holds(case: str, path: str) -> None:
    """``case`` solved on ``path`` is certified, and its v* agrees with the known one."""
    model, expected, err = _hostile(case)
    greedy: list[int] = []
    with pytest.MonkeyPatch.context() as mp:
        method = "dense" if path == "dense" else "mpi"
        if path == "forced":
            mp.setattr(mpi, "LARGE_STATES", 0)
            mp.setattr(mpi, "ELIMINATE_MIN_PAIRS", 0)
            run = mpi.optimal_mpi

            def counted(*a, **k):
                out = run(*a, **k)
                greedy.append(out[2]["greedy"])
                return out

            mp.setattr(mpi, "optimal_mpi", counted)
        v = nsrl.optimal_value(model, method=method)
    gap = float(np.abs(np.asarray(v) - expected).max())
    assert gap <= v.bound + err, (case, path, gap, v.bound, err)
    assert v.bound <= nsrl.exact.backend(model).value_tol, (v.bound,)
    assert all(steps <= MAX_GREEDY_STEPS for steps in greedy), greedy
