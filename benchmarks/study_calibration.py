"""The calibration search (issue 24, 3d): which reading meets the paper's calibration sentence?

Over what the paper leaves open, with p = n_S / 10 and iota = 0.1 as it states them: the law
of Phi's entries (``feature_law``: uniform, centred, gaussian, binary), a constant feature
(no, yes) and the noise model (relative, absolute, span): 24 settings. Each is measured on 4
of the sensitivity study's instances, on MDPs 10 and 11 (held out: the study uses MDPs 0-4),
4 runs of API x 100 iterations each (the batched engine), by the two measures of
:mod:`nsrl.experiments.sensitivity.calibration` against its ranges, which were fixed before
this search ran (step fraction in [0.5, 0.9], relative spread in [0.01, 0.2]).

Writes docs/sensitivity/calibration_search.csv (one row per setting).

    nice -n 10 python benchmarks/study_calibration.py
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd

import nsrl
from nsrl.experiments.domains import build_mdp
from nsrl.experiments.presets import Shard
from nsrl.experiments.sensitivity import SWEEP
from nsrl.experiments.sensitivity.calibration import (
    exact_step_losses,
    is_calibrated,
    relative_spread,
    step_fraction,
)
from nsrl.greedy.model_based import FEATURE_LAWS, NOISE_MODELS
from nsrl.schemes import API

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = [(50, 2, 1), (100, 5, 2), (200, 10, 10), (100, 2, 10)]
MDPS = (10, 11)
RUNS, ITERATIONS = 4, 100


def measure(mdps, options: dict) -> dict:
    """Both measures of one setting over ``mdps`` [(mdp, L(pi_0), L(exact step))]."""
    l0, lx, l1, spread, final = [], [], [], [], []
    for i, (mdp, loss0, loss_x) in enumerate(mdps):
        runs = nsrl.run(API(), nsrl.OperatorSpec("projected", **options), ITERATIONS,
                        rng=[np.random.default_rng([24, i, r]) for r in range(RUNS)], mdp=mdp,
                        engine="batched").losses
        l0.append(loss0), lx.append(loss_x), l1.append(runs[:, 0].mean())
        spread.append(runs[:, -1].std()), final.append(runs[:, -1].mean())
    fraction, rel = step_fraction(l0, lx, l1), relative_spread(spread, l0)
    return {"step fraction": fraction, "relative spread": rel,
            "calibrated": is_calibrated(fraction, rel),
            "API final / pi_0": float(np.mean(final) / np.mean(l0))}


def main() -> None:
    start = time.process_time()
    mdps = []
    for (s, a, b), m in itertools.product(INSTANCES, MDPS):
        mdp = build_mdp(SWEEP, Shard(s, a, b, m))
        mdps.append((mdp, *exact_step_losses(mdp)))
    rows = []
    for law, constant, noise_model in itertools.product(FEATURE_LAWS, (False, True),
                                                        NOISE_MODELS):
        options = {"feature_law": law, "constant_feature": constant, "noise_model": noise_model}
        rows.append({**options, **measure(mdps, options)})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    out = ROOT / "docs" / "sensitivity" / "calibration_search.csv"
    table.to_csv(out, index=False, float_format="%.4f")
    print(f"{len(rows)} settings, {time.process_time() - start:.0f} CPU s -> {out}")


if __name__ == "__main__":
    main()
