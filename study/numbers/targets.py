"""docs/bigger.md's targets at about 10^5 states, from the two target scripts' outputs.

``benchmarks/results/bigger_targets_100000.txt`` (``bench_bigger_targets.py``): per family,
pi_0's loss, the first greedy step of the exact and the projected operator, and CPI+ and
CPI(0.1) with LSTD-Q on the sweep's RBF features. ``benchmarks/results/
study_bigger_grid_target.txt`` (``study_bigger_grid_target.py``): one line per feature map,
scheme and protocol on grid world MDP 0, 10^6 transitions in all.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import memo, read_text

TARGETS = "benchmarks/results/bigger_targets_100000.txt"
STUDY = "benchmarks/results/study_bigger_grid_target.txt"
_FAMILY = re.compile(r"^(grid|car) n_S=(\d+): loss\(pi_0\) ([\d.]+); first step exact ([\d.]+) "
                     r"\((\d+)% .*?\), projected ([\d.]+) \((\d+)%; seeds ([\d., ]+)\)")
_SCHEME = re.compile(r"^\s+(\S+) \+ LSTD-Q: losses .*; final ([\d.]+) = (\d+)% of pi_0's, "
                     r"best [\d.]+ at ([\d,]+) transitions")
_STUDY = re.compile(r"^(?:n_states (\d+): )?(\w+) (\d+) features, (\S+) \+ LSTD-Q, (.+?): "
                    r"loss\(pi_0\) ([\d.]+); final ([\d.]+) \((\d+)% of pi_0's\), best ([\d.]+) "
                    r"\((\d+)%\) at (.+?); losses .* \[(\d+) CPU s\]$")


def targets(root: Path) -> dict:
    """The target study's rows by family.

    family -> {"n": states, "l0", "exact", "exact %", "projected", "projected %", "seeds",
    scheme -> (final, % of pi_0's, transitions at best)}.
    """
    out, family = {}, None
    for line in read_text(root, TARGETS).splitlines():
        if m := _FAMILY.match(line):
            family = m[1]
            out[family] = {"n": int(m[2]), "l0": m[3], "exact": m[4], "exact %": m[5],
                           "projected": m[6], "projected %": m[7], "seeds": m[8]}
        elif (m := _SCHEME.match(line)) and family:
            out[family][m[1]] = (m[2], m[3], m[4])
    return out


@block("bigger-targets", sources=[TARGETS])
def _targets(root: Path) -> str:
    t = targets(root)
    g, c = t["grid"], t["car"]

    def scheme(f, name):
        final, share, at = f[name]
        return f"{final} ({share}% of pi_0's; best at {at} transitions)"

    rows = [
        "| | grid world ({:,} states) | mountain car ({:,} states) |".format(g["n"], c["n"]),
        "|---|---:|---:|",
        f"| loss of pi_0 | {g['l0']} | {c['l0']} |",
        f"| first greedy step, exact operator | {g['exact']} ({g['exact %']}% of pi_0's loss "
        f"removed) | {c['exact']} ({c['exact %']}%) |",
        f"| first greedy step, projected operator (3 noise seeds) | {g['projected']} "
        f"({g['projected %']}%; {g['seeds']}) | {c['projected']} ({c['projected %']}%; "
        f"{c['seeds']}) |",
        f"| CPI+ + LSTD-Q, 10 x 10^5 transitions | {scheme(g, 'cpi+')} | {scheme(c, 'cpi+')} |",
        f"| CPI(0.1) + LSTD-Q, 10 x 10^5 transitions | {scheme(g, 'cpi(0.1)')} | "
        f"{scheme(c, 'cpi(0.1)')} |",
    ]
    return "\n".join(rows)


@memo
def study(root: Path) -> pd.DataFrame:
    """One row per line of the grid-target study.

    Lines without ``n_states`` ran at its default, 10^5 cells.
    """
    rows = []
    for line in read_text(root, STUDY).splitlines():
        m = _STUDY.match(line)
        if m is None:
            raise ValueError(f"{STUDY}: a line the study script does not write: {line[:80]!r}")
        rows.append({"cells": int(m[1] or 100_000), "map": m[2], "features": int(m[3]),
                     "scheme": m[4], "protocol": m[5], "l0": float(m[6]),
                     "final": float(m[7]), "final_pct": int(m[8]), "best": float(m[9]),
                     "best_pct": int(m[10]),
                     "best_at": m[11], "cpu_s": int(m[12])})
    return pd.DataFrame(rows)


@block("bigger-grid-study", sources=[STUDY])
def _study(root: Path) -> str:
    rows = ["| grid cells | features | scheme + LSTD-Q | transitions | pi_0's loss | final loss "
            "| final / pi_0's | best / pi_0's (at) | CPU s |",
            "|---:|---|---|---|---:|---:|---:|---|---:|"]
    for r in study(root).sort_values(["cells", "final_pct"]).itertuples():
        share = _share(r.final_pct, r.final, r.l0)
        share = f"**{share}**" if r.final_pct <= 10 else share
        rows.append(f"| {r.cells:,} | {r.map} {r.features:,} | {r.scheme} | {r.protocol} | "
                    f"{r.l0:.2f} | {r.final:.2f} | {share} | {_share(r.best_pct, r.best, r.l0)} "
                    f"({r.best_at}) | "
                    f"{r.cpu_s} |")
    return "\n".join(rows)


def _best(root: Path, cells: int, table: bool = False, scheme: str | None = None
          ) -> pd.Series:
    """The study's lowest final loss at ``cells``.

    Among the feature maps, or (``table``) among the runs on the table itself (one indicator
    per cell); of ``scheme`` if given.
    """
    s = study(root)
    s = s[(s["cells"] == cells) & ((s["map"] == "cells") == table)
          & ((s["scheme"] == scheme) if scheme else True)]
    if s.empty:
        raise ValueError(f"{STUDY} has no {'cells' if table else 'feature-map'} run "
                         f"{'of ' + scheme + ' ' if scheme else ''}at {cells}")
    return s.loc[s["final_pct"].idxmin()]


def _share(pct: int, final: float, l0: float) -> str:
    """The script's whole percentage, or one decimal (from the losses) where it shows 0%."""
    return f"{pct}%" if pct > 0 else f"{final / l0:.1%}"


def _describe(b: pd.Series) -> str:
    what = {"tiles": "tile coding", "cells": "one indicator per cell"}.get(b["map"], b["map"])
    share = _share(b["final_pct"], b["final"], b["l0"])
    return (f"{b['final']:.2f} = {share} of pi_0's loss ({b['scheme'].upper()} with "
            f"LSTD-Q on {what}, {b['features']:,} features, {b['protocol']})")


for _cells, _tag in ((10_000, "1e4"), (100_000, "1e5")):

    @block(f"bigger-grid-best-{_tag}", sources=[STUDY])
    def _best_value(root: Path, cells=_cells) -> str:
        return _describe(_best(root, cells))

    @block(f"bigger-grid-table-{_tag}", sources=[STUDY])
    def _table_value(root: Path, cells=_cells) -> str:
        return _describe(_best(root, cells, table=True))


@block("bigger-grid-table-psdp-1e5", sources=[STUDY])
def _table_psdp(root: Path) -> str:
    return f"{_best(root, 100_000, table=True, scheme='psdp')['final_pct']}%"
