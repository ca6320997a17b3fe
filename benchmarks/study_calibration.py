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

With ``--fractions``, the one thing that search held fixed: the number of features p, as a
fraction of n_S (the sweep field ``feature_fraction``; the Garnet draws Phi last, so its
transitions and rewards, and the exact losses, do not move with p), crossed with the
settings given as ``law:constant:noise_model`` (constant ``yes`` or ``no``; ``all``: the 24)
and the noise amplitudes iota of ``--noise``. Same instances, MDPs, runs and ranges. Each row
is added to (or replaces the row of the same setting in)
docs/sensitivity/calibration_search_p.csv, so the search can go in stages:

    nice -n 10 python benchmarks/study_calibration.py --fractions 0.1,0.2,0.5 \\
        --settings uniform:no:relative,binary:yes:span --noise 0.1,0.05

The committed file: ``--fractions 0.1,0.2,0.3333,0.5,0.6,0.65,0.7,0.75,0.85,0.9,1.0 --settings
all``, then ``--fractions 0.5,0.6 --settings uniform:yes:span,uniform:yes:absolute,
binary:yes:span --noise 0.05,0.2``. BLAS runs on one thread (``CPU s``: per setting).

Eight MDPs of four instances measure a setting roughly: the reading chosen from that file
(p = 0.6 n_S, U[0, 1], a constant feature, span noise) kept 0.75 of the step there and 0.49 on
the study's 135 MDPs. ``--instances study`` measures the candidates again on the study's mix,
all 27 instances x the same held-out MDPs 10 and 11 (54 MDPs), into
docs/sensitivity/calibration_confirm.csv.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments.sensitivity import SWEEP
from nsrl.experiments.sensitivity.calibration import (
    exact_step_losses,
    is_calibrated,
    relative_spread,
    step_fraction,
)
from nsrl.experiments.shards import Shard
from nsrl.greedy.model_based import FEATURE_LAWS, NOISE_MODELS
from nsrl.schemes import API

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = [(50, 2, 1), (100, 5, 2), (200, 10, 10), (100, 2, 10)]
MDPS = (10, 11)
RUNS, ITERATIONS = 4, 100
SEARCH = ROOT / "docs" / "sensitivity" / "calibration_search.csv"
SEARCH_P = ROOT / "docs" / "sensitivity" / "calibration_search_p.csv"
# --instances study: all 27 instances of the study (its mix of n_S, n_A, b), same held-out MDPs
CONFIRM = ROOT / "docs" / "sensitivity" / "calibration_confirm.csv"
STUDY_INSTANCES = list(itertools.product(SWEEP.n_states, SWEEP.n_actions, SWEEP.branching))
SETTING = ["feature_fraction", "feature_law", "constant_feature", "noise_model", "noise"]


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


def instances(feature_fraction: float | None = None, grid=INSTANCES) -> list:
    """[(mdp, L(pi_0), L(exact step))] of the search's MDPs with p = feature_fraction n_S."""
    sweep = dataclasses.replace(SWEEP, feature_fraction=feature_fraction)
    out = []
    for (s, a, b), m in itertools.product(grid, MDPS):
        mdp = sweep.model(Shard(s, a, b, m))
        out.append((mdp, *exact_step_losses(mdp)))
    return out


def parse_settings(text: str) -> list[tuple[str, bool, str]]:
    """``"all"`` (the 24 settings) or comma-separated :func:`parse_setting` strings."""
    if text == "all":
        return list(itertools.product(FEATURE_LAWS, (False, True), NOISE_MODELS))
    return [parse_setting(x) for x in text.split(",")]


def parse_setting(text: str) -> tuple[str, bool, str]:
    """``"binary:yes:span"`` -> ("binary", True, "span")."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in FEATURE_LAWS or parts[1] not in ("yes", "no") \
            or parts[2] not in NOISE_MODELS:
        raise argparse.ArgumentTypeError(
            f"a setting is law:constant:noise_model with law in {FEATURE_LAWS}, constant yes "
            f"or no and noise_model in {NOISE_MODELS}; got {text!r}, e.g. uniform:no:relative")
    return parts[0], parts[1] == "yes", parts[2]


def floats(text: str) -> list[float]:
    """``"0.5,0.3333"`` -> [0.5, 0.3333] (4 decimals, as the csv keeps them)."""
    return [round(float(x), 4) for x in text.split(",")]


def search_p(fractions, settings, noises, study: bool = False) -> None:
    """The p dimension: rows added to (or replacing theirs in) :data:`SEARCH_P` (or, on the
    study's 27 instances, :data:`CONFIRM`)."""
    start = time.process_time()
    path = CONFIRM if study else SEARCH_P
    table = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=SETTING)
    for f in fractions:
        mdps = instances(f, STUDY_INSTANCES if study else INSTANCES)
        for (law, constant, noise_model), noise in itertools.product(settings, noises):
            t0 = time.process_time()
            options = {"feature_law": law, "constant_feature": constant,
                       "noise_model": noise_model, "noise": noise}
            row = {"feature_fraction": f, **options, **measure(mdps, options),
                   "CPU s": time.process_time() - t0}
            key = np.ones(len(table), dtype=bool)
            for k in SETTING:
                key &= (table[k] == row[k]).to_numpy()
            table = pd.concat([table[~key], pd.DataFrame([row])], ignore_index=True)
            print(row, flush=True)
    table = table.sort_values(SETTING, ascending=[True, True, True, True, False],
                              kind="stable")
    table.to_csv(path, index=False, float_format="%.4f")
    print(f"{time.process_time() - start:.0f} CPU s -> {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", type=floats, default=None,
                        help="p / n_S values to search (default: the 24 settings at n_S / 10)")
    parser.add_argument("--settings", type=parse_settings,
                        default=[("uniform", False, "relative")],
                        help="law:constant:noise_model,... or all (with --fractions)")
    parser.add_argument("--instances", choices=("search", "study"), default="search",
                        help="with --fractions: the search's 4 instances (default) or the "
                             "study's 27 (rows go to calibration_confirm.csv)")
    parser.add_argument("--noise", type=floats, default=[0.1],
                        help="noise amplitudes iota (with --fractions; default 0.1)")
    args = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):  # one core, as the study's workers
        run(args)


def run(args) -> None:
    if args.fractions is not None:
        search_p(args.fractions, args.settings, args.noise, args.instances == "study")
        return
    start = time.process_time()
    mdps = instances()
    rows = []
    for law, constant, noise_model in itertools.product(FEATURE_LAWS, (False, True),
                                                        NOISE_MODELS):
        options = {"feature_law": law, "constant_feature": constant, "noise_model": noise_model}
        rows.append({**options, **measure(mdps, options)})
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(SEARCH, index=False, float_format="%.4f")
    print(f"{len(rows)} settings, {time.process_time() - start:.0f} CPU s -> {SEARCH}")


if __name__ == "__main__":
    main()
