"""The best learned Tetris controller of a preset's run, re-evaluated on fresh games.

    python benchmarks/tetris_best.py --results DIR --preset tetris-small [--candidates 5]
                                     [--games 10000] [--jobs 2] [--variants cbmpi,dpi]
                                     [--save docs/tetris/best-10x10.json]

Among the outputs of the run in DIR that are one linear controller (memory 1: API's, CPI+'s
after a full step, DPI's), the ``--candidates`` of highest score over the preset's evaluation
games (200 per point on 10 x 10) are rebuilt: each (unit, scheme, iteration) is rerun from
the sweep's own seeds up to that iteration (a run is a function of them), and its output is
checked to score what the shard recorded. Each candidate then plays ``--games`` fresh games
(another seed than the run's evaluation games, so that picking the best of the first games
does not bias its score), beside DU, BDU, DT-10 and DT-20 on the same games. The best one on
the fresh games is saved in nsrl's controller format, for ``nsrl tetris play --policy``.
``--variants`` limits the candidates to some variants of the preset (a run rebuilds only on
the install that made it: the sums of its fits differ between builds of the numeric
libraries, and a run is chaotic in them).
Writes benchmarks/results/tetris_best_<board>.txt.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard
from nsrl.greedy.tetris import controller_of
from nsrl.tetris import SHIPPED, play_games, save_controller

ROOT = Path(__file__).resolve().parent.parent  # the checkout
RESULTS = ROOT / "benchmarks" / "results"
PUBLISHED = {10: {"du": 3_800, "bdu": 4_200, "dt-10": 5_000, "dt-20": 4_300},
             20: {"du": 31_000_000, "bdu": 36_000_000, "dt-10": 29_000_000,
                  "dt-20": 51_000_000}}
FRESH_SEED = 7_777_777  # the fresh games' seed: not a seed of any preset's evaluation


def candidates(results: Path, experiment, count: int,
               variants: list[str] | None = None) -> pd.DataFrame:
    """The ``count`` single-controller outputs of highest recorded score, best first.

    ``variants``: only these variants' outputs (default every variant of the experiment).
    """
    known = list(experiment.sweeps())
    unknown = sorted(set(variants or ()) - set(known))
    if unknown:
        raise ValueError(f"--variants: {unknown} are not variants of {experiment.name!r}; "
                         f"its variants are {known}.")
    frames = []
    for variant in variants or known:
        df = pd.read_parquet(experiment.folder(results, variant) / "shards")
        df["variant"] = variant
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    single = df[df["memory"] == 1].sort_values("score", ascending=False)
    return single.head(count).reset_index(drop=True)


def rebuild(experiment, row: pd.Series):
    """The output policy of the run of ``row``, rerun from the sweep's seeds."""
    sweep = experiment.sweeps()[row["variant"]]
    shard = Shard(*(int(row[a]) for a in sweep.axis_names), int(row["mdp"]),
                  axes=sweep.domain_entry.axes)
    rng = sweep.run_rngs(shard, row["scheme"])[int(row["run"])]
    # One BLAS thread, as the sweep's workers run: the fits' sums depend on the thread count,
    # and a run is chaotic in them (two threads rebuild another policy).
    with threadpool_limits(limits=1, user_api="blas"):
        hist = nsrl.run(sweep.scheme(row["scheme"]), sweep.operator_spec(shard),
                        int(row["iteration"]), rng=rng, env=sweep.env(shard))
    # The rebuilt policy scores on the shard's own games what the shard recorded.
    score = sweep.domain_entry.make_estimate(sweep.env(shard), int(row["games"]),
                                             sweep.games_seed(shard))(hist.output)
    if score.mean != row["score"]:
        raise RuntimeError(f"{row.to_dict()} rebuilt scores {score.mean}, not {row['score']}: "
                           f"is the code the run's?")
    return hist.output


def command_line(argv: list[str]) -> str:
    """The command as run, every option given, paths inside the checkout relative to it."""
    def shown(arg: str) -> str:
        path = Path(arg)
        if path.is_absolute() and path.resolve().is_relative_to(ROOT):
            return str(path.resolve().relative_to(ROOT))
        return arg
    return "python benchmarks/tetris_best.py " + shlex.join(shown(a) for a in argv)


def evaluate(controller, games: int, width: int, height: int, jobs: int) -> tuple[float, float]:
    g = play_games(controller, games, width=width, height=height, seed=FRESH_SEED, jobs=jobs)
    return float(g.lines.mean()), 1.96 * float(g.lines.std(ddof=1)) / np.sqrt(games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--preset", default="tetris-small")
    parser.add_argument("--candidates", type=int, default=5)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--shipped", default="du,bdu,dt-10,dt-20",
                        help="shipped controllers played on the same games, comma-separated "
                             "('' for none: on 10 x 20 each game of DT-20 is ~1 CPU-minute)")
    parser.add_argument("--variants", default=None,
                        help="the variants whose outputs are candidates, comma-separated "
                             "(default every variant)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    variants = args.variants.split(",") if args.variants else None
    experiment = load_experiment(args.preset)
    sweep = next(iter(experiment.sweeps().values()))
    width, height = int(sweep.axis("width")[0]), int(sweep.axis("height")[0])
    start = time.process_time()
    # The install matters: a run rebuilds only on the install that made it.
    rows = [f"# {command_line(sys.argv[1:])}",
            f"# nsrl {nsrl.__version__} from {Path(nsrl.__file__).parent}",
            f"{time.strftime('%Y-%m-%d %H:%M')}, load "
            f"{os.getloadavg()[0]:.2f} at start; board {width} x {height}; fresh games: "
            f"seed {FRESH_SEED}, games 0..{args.games - 1}", "",
            "| controller | from | recorded score (its games) | fresh games: mean lines "
            "(95%) | published |", "|---|---|---:|---:|---:|"]
    best, best_mean = None, -1.0
    for i, row in candidates(args.results, experiment, args.candidates, variants).iterrows():
        policy = rebuild(experiment, row)
        controller = controller_of(policy)
        mean, ci = evaluate(controller, args.games, width, height, args.jobs)
        variant = f"{row['variant']} " if row["variant"] else ""  # "": a one-sweep preset
        where = (f"{variant}unit {int(row['mdp'])}, {row['scheme']}, iteration "
                 f"{int(row['iteration'])}")
        rows.append(f"| candidate {i + 1} | {where} | {row['score']:,.0f} ({int(row['games'])}) "
                    f"| {mean:,.0f} +- {ci:,.0f} | - |")
        print(rows[-1], flush=True)
        if mean > best_mean:
            best, best_mean = controller, mean
    shipped = [name for name in args.shipped.split(",") if name]
    for name, published in PUBLISHED.get(height, {}).items():
        if name == "bdu" and width != 10 or name not in shipped:
            continue
        mean, ci = evaluate(SHIPPED[name], args.games, width, height, args.jobs)
        rows.append(f"| {name.upper()} | shipped | - | {mean:,.0f} +- {ci:,.0f} | "
                    f"{published:,} |")
        print(rows[-1], flush=True)
    rows += ["", f"CPU {time.process_time() - start:.0f} s in this process (the games of "
             f"--jobs > 1 run in workers); load {os.getloadavg()[0]:.2f} at the end"]
    if best is not None and args.save is not None:
        save_controller(best, args.save)
        rows.append(f"saved the best on the fresh games to {args.save}")
    out = args.out or RESULTS / f"tetris_best_{width}x{height}.txt"
    out.write_text("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
