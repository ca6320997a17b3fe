"""The shipped controllers against their published scores, through ``nsrl tetris play``.

    python benchmarks/tetris_published.py [--games 10000] [--minutes 60] [--jobs 2]
                                          [--boards small,large]

10 x 10: DT-10, DT-20 and Dellacherie's controller over ``--games`` games each (10,000 by
default, as Scherrer et al., JMLR 2015, Table 1). 10 x 20: games there last millions of
pieces, so each controller gets an equal share of ``--minutes`` and as many games as that
share allows at the speed measured on 10 x 10 (pieces per game taken as 2.5 x the published
lines, 10 cells per line and 4 per piece); the number of games is fixed before they are
played, so that the mean is not biased toward short games. Each evaluation is one subprocess
``nsrl tetris play --json`` (default overflow rule 'end', seed 0).

``--clear-first N`` (2,000 by default, 0 to skip) also plays DT-10 and DT-20 on 10 x 10 under
the other overflow rule (lines completed by a piece that sticks out are removed first), to
show what the rule changes.

Prints a table and writes benchmarks/results/tetris_published.txt (the table) and
benchmarks/results/tetris_published.json (every command's JSON); ``--name`` changes the stem
(``--boards large --name tetris_published_large`` keeps the 10 x 10 files).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

# Lines per game published: JMLR 2015 Table 1 (10 x 10 and 10 x 20, 10,000 games, D-T
# policies); Dellacherie's controller on 10 x 20: about 5 M (Thiery and Scherrer 2009).
PUBLISHED = {("dt-10", 10): 5_000, ("dt-20", 10): 4_300, ("dellacherie", 10): None,
             ("dt-10", 20): 29e6, ("dt-20", 20): 51e6, ("dellacherie", 20): 5e6}
CONTROLLERS = ("dt-10", "dt-20", "dellacherie")


def play(controller: str, height: int, games: int, jobs: int, seed: int,
         overflow: str = "end") -> dict:
    command = [sys.executable, "-m", "nsrl.cli", "tetris", "play", "--controller", controller,
               "--width", "10", "--height", str(height), "--games", str(games), "--seed",
               str(seed), "--jobs", str(jobs), "--overflow", overflow, "--json"]
    print("nsrl " + " ".join(command[3:]), file=sys.stderr, flush=True)
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:,.1f} M" if x >= 1e6 else f"{x:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="games per controller, 10 x 10")
    parser.add_argument("--minutes", type=float, default=60.0, help="10 x 20 budget in total")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--boards", default="small,large", help="small (10 x 10), large")
    parser.add_argument("--clear-first", type=int, default=2_000,
                        help="games of DT-10 and DT-20 on 10 x 10 under 'clear-first' (0: none)")
    parser.add_argument("--name", default="tetris_published",
                        help="stem of the result files under benchmarks/results/")
    args = parser.parse_args()
    boards = args.boards.split(",")
    results, speed = [], None
    start = time.time()
    if "small" in boards:
        for name in CONTROLLERS:
            got = play(name, 10, args.games, args.jobs, args.seed)
            results.append(got)
            speed = max(speed or 0, got["pieces_per_s"])
        for name in CONTROLLERS[:2] if args.clear_first else ():
            results.append(play(name, 10, args.clear_first, args.jobs, args.seed, "clear-first"))
    if "large" in boards:
        speed = speed or 4e5 * args.jobs  # no 10 x 10 run: a guess, said in the table
        share = args.minutes * 60 / len(CONTROLLERS)
        for name in CONTROLLERS:
            per_game = 2.5 * PUBLISHED[(name, 20)] / speed
            games = max(1, math.floor(share / per_game))
            results.append(play(name, 20, games, args.jobs, args.seed))
    lines = [f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cpus, --jobs {args.jobs}, "
             f"seed {args.seed}; {(time.time() - start) / 60:.1f} min in all; "
             f"load {os.getloadavg()[0]:.2f} at the end",
             "",
             "| controller | board | overflow | games | published | measured (lines per game) "
             "| 95% CI | pieces/s |",
             "|---|---|---|---:|---:|---:|---|---:|"]
    for got in results:
        width, height = got["board"]
        low, high = got["ci95"]
        published = PUBLISHED[(got["controller"], height)] if got["overflow"] == "end" else None
        lines.append(f"| {got['controller']} | {width} x {height} | {got['overflow']} | "
                     f"{got['games']:,} | {fmt(published)} | {fmt(got['mean_lines'])} | "
                     f"{fmt(low)} to {fmt(high)} | {got['pieces_per_s']:,.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.txt").write_text(text)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
