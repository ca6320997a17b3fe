"""docs/bigger.md's grid world at 10^5 states, revisited: ``benchmarks/study_grid_transitions.py``.

Its JSON lines (``benchmarks/results/study_grid_transitions.jsonl``): ``exact-api`` (exact API's
losses, the yardstick), ``floors`` (per map, the losses of the greedy policies of the
least-squares projections of v* and Q*) and ``calls`` (per map and transitions per call, API
with LSTD-Q's losses after every call). A later line of the same configuration replaces an
earlier one (a rerun).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import listing, memo, num, read_text

RESULTS = "benchmarks/results/study_grid_transitions.jsonl"
TARGET = 0.10  # the target of docs/bigger.md: a loss <= 10% of pi_0's
NAMES = {"rbf-100": "RBF grid 10 x 10 (the sweep's)", "rbf-400": "RBF grid 20 x 20",
         "tiles-1600": "tile coding", "tiles-6400": "tile coding", "tiles-25600": "tile coding",
         "tiles-102400": "tile coding", "cells": "cells (one indicator per cell)",
         "multires": "multi-resolution (the cells + 4 tilings of 80 x 80)"}
SHORT = {"cells": "the cells", "tiles-25600": "25 600 tiles", "tiles-102400": "102 400 tiles",
         "multires": "the multi-resolution map"}


@memo
def records(root: Path) -> dict[str, pd.DataFrame]:
    """The study's records by part, the last line of each configuration kept."""
    rows: dict[str, dict[tuple, dict]] = {}
    for line in read_text(root, RESULTS).splitlines():
        if line.strip():
            r = json.loads(line)
            key = (r.get("map"), r.get("transitions_per_call"), r.get("scheme"))
            rows.setdefault(r["part"], {})[key] = r
    return {part: pd.DataFrame(list(by_key.values())) for part, by_key in rows.items()}


def share(loss: float, l0: float) -> str:
    """``loss`` as a percentage of pi_0's loss (one decimal below 10%)."""
    s = loss / l0
    return f"{s:.1%}" if s < 0.1 else f"{s:.0%}"


def first_within(losses: list[float], l0: float) -> int | None:
    """The first call (1-based) whose loss is at most TARGET of pi_0's, or None."""
    return next((i + 1 for i, x in enumerate(losses) if x <= TARGET * l0), None)


def _map(name: str, columns: int) -> str:
    return f"{NAMES[name]}, {num(columns, 0)} columns"


def power(n: int) -> str:
    """10^k for a power of ten, else the number."""
    k = len(str(n)) - 1
    return f"10^{k}" if n == 10**k else num(n, 0)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in the study's order of maps (SHORT's), then by transitions per call."""
    order = {m: i for i, m in enumerate(SHORT)}
    return frame.sort_values(["map", "transitions_per_call"],
                             key=lambda col: col.map(order) if col.name == "map" else col)


@block("grid-floors", sources=[RESULTS])
def _floors(root: Path) -> str:
    rows = ["| map | greedy step of Pi v* | argmax of Pi Q* (per action) |", "|---|---:|---:|"]
    for r in records(root)["floors"].itertuples():
        rows.append(f"| {_map(r.map, r.columns)} | {r.greedy_of_projected_v:.2f} "
                    f"({share(r.greedy_of_projected_v, r.loss_pi0)}) | "
                    f"{r.argmax_of_projected_q:.2f} "
                    f"({share(r.argmax_of_projected_q, r.loss_pi0)}) |")
    return "\n".join(rows)


@block("grid-calls", sources=[RESULTS])
def _calls(root: Path) -> str:
    c = _ordered(records(root)["calls"])
    rows = ["| map | transitions per call | calls | final loss | best loss (call) | first call "
            "<= 10% of pi_0's | CPU s |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in c.itertuples():
        if not isinstance(r.losses, list):  # stopped at the script's CPU cap
            rows.append(f"| {_map(r.map, r.columns)} | {power(r.transitions_per_call)} | "
                        f"{r.iterations} | stopped, {r.stopped} | | | |")
            continue
        best = min(range(len(r.losses)), key=r.losses.__getitem__)
        first = first_within(r.losses, r.loss_pi0)
        rows.append(f"| {_map(r.map, r.columns)} | {power(r.transitions_per_call)} | "
                    f"{r.iterations} | {r.losses[-1]:.2f} ({share(r.losses[-1], r.loss_pi0)}) "
                    f"| {r.losses[best]:.2f} ({share(r.losses[best], r.loss_pi0)}, {best + 1}) "
                    f"| {first or 'none'} | {r.cpu_seconds:.0f} |")
    return "\n".join(rows)


@block("grid-calls-crossing", sources=[RESULTS])
def _crossing(root: Path) -> str:
    rec = records(root)
    c, exact = rec["calls"], rec["exact-api"].iloc[0]
    crossed, missed, stopped = [], [], []
    for m, part in _ordered(c).groupby("map", sort=False):
        done = part[part["losses"].map(lambda x: isinstance(x, list))]
        if done.empty:
            stopped.append(SHORT[m])
            continue
        part = done
        hits = [(r.transitions_per_call, first_within(r.losses, r.loss_pi0))
                for r in part.itertuples()]
        hit = next(((n, k) for n, k in hits if k is not None), None)
        if hit is None:
            most = power(part["transitions_per_call"].max())
            missed.append(f"{SHORT[m]} (up to {most} per call)")
        else:
            crossed.append(f"{SHORT[m]} from {power(hit[0])} transitions per call (call {hit[1]})")
    exact_at = first_within(list(exact["losses"]), exact["loss_pi0"])
    text = ((f"10% of pi_0's loss is crossed by {listing(crossed)}" if crossed
             else "no map crosses 10% of pi_0's loss")
            + (f"; not by {listing(missed)}" if missed else "")
            + (f" ({listing(stopped)}: no run finished within the CPU cap)" if stopped else "")
            + f"; exact API crosses it at iteration {exact_at}")
    return text
