"""docs/tetris_learning.md: the Tetris presets' results, the fits' benchmark, the best policies.

Sources: the committed results folder of ``nsrl reproduce --preset tetris-small``
(docs/tetris/small_run: the experiment's analysis files tetris_final.csv and
tetris_comparisons.csv, each variant's sessions.jsonl with the workers' CPU seconds per shard),
``benchmarks/results/bench_tetris_csc.txt`` (the two fits on the same rollouts) and
``benchmarks/results/tetris_best_<board>.txt`` (the best learned controllers on fresh games).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import md_table, read_csv, read_text

RUNS = {"small": "docs/tetris/small_run"}
VARIANTS = {"small": ("cbmpi", "dpi")}
R = "benchmarks/results/"


def _ci(mean: float, low: float, high: float) -> str:
    if pd.isna(low):
        return f"{mean:,.0f}"
    return f"{mean:,.0f} [{low:,.0f}, {high:,.0f}]"


def final(root: Path, board: str) -> pd.DataFrame:
    """The preset's tetris_final.csv."""
    return read_csv(root, f"{RUNS[board]}/tetris_final.csv")


def final_table(root: Path, board: str) -> str:
    """Per variant and scheme: the last and the best iteration's mean lines with intervals."""
    rows = []
    for r in final(root, board).to_dict("records"):
        rows.append([str(r["variant"]).upper() if board == "small" else "CBMPI", r["scheme"],
                     str(r["units"]), _ci(r["final"], r["final_low"], r["final_high"]),
                     f"{_ci(r['best'], r['best_low'], r['best_high'])} (k = "
                     f"{r['best_iteration']})", f"{r['memory']:.0f}",
                     f"{r['samples_per_iteration'] / 1e6:.2f} M"])
    return md_table(["operator", "scheme", "units", "last iteration: mean lines [95%]",
                     "best iteration: mean lines [95%]", "policies stored",
                     "samples per iteration"], rows, "llrrrrr")


def pairs(root: Path, board: str) -> pd.DataFrame:
    """The preset's tetris_comparisons.csv."""
    return read_csv(root, f"{RUNS[board]}/tetris_comparisons.csv")


def pairs_table(root: Path, board: str) -> str:
    """The pairs significant after Holm over the experiment's pairs, and how many were tested."""
    c = pairs(root, board)
    sig = c[c["significant"]].sort_values("p_holm")
    rows = [[str(r["variant"]).upper(), r["better"], r["b"] if r["better"] == r["a"] else r["a"],
             _ci(abs(r["diff"]), *sorted((abs(r["low"]), abs(r["high"])))) if
             r["low"] * r["high"] > 0 else _ci(abs(r["diff"]), float("nan"), float("nan")),
             f"{r['p_t']:.2g}", f"{r['p_wilcoxon']:.2g}", f"{r['p_holm']:.2g}"]
            for r in sig.to_dict("records")]
    head = (f"{len(sig)} of the {len(c)} pairs of schemes are significant at 5% after Holm's "
            f"correction over all {len(c)} (paired t-test over the units; the Wilcoxon test "
            f"beside it):\n\n")
    if not rows:
        return head.replace(":\n\n", ".\n")
    return head + md_table(["operator", "better", "than", "difference in mean lines [95%]",
                            "p (t)", "p (Wilcoxon)", "p (Holm)"], rows, "lllrrrr") + "\n"


def spread(root: Path, board: str) -> str:
    """CBMPI's schemes by their last iteration's 95% half-width over the units, widest first.

    Every scheme has the same units, so the half-widths order their spread across runs.
    """
    f = final(root, board)
    f = f[f["variant"] == "cbmpi"].assign(half=lambda d: (d["final_high"] - d["final_low"]) / 2)
    return ", ".join(f"{r['scheme']} +- {r['half']:,.0f}"
                     for r in f.sort_values("half", ascending=False).to_dict("records"))


def cpu_hours(root: Path, board: str) -> str:
    """The workers' CPU-hours of the preset, summed over its shards (every variant)."""
    total = 0.0
    for variant in VARIANTS[board]:
        rel = f"{RUNS[board]}/{variant}/sessions.jsonl"
        for line in read_text(root, rel).splitlines():
            event = json.loads(line)
            if event.get("event") == "shard":
                total += float(event["cpu_seconds"])
    return f"{total / 3600:.1f}"


def best_scheme(root: Path, board: str) -> tuple[str, float]:
    """The scheme of highest last-iteration mean (CBMPI's step) and that mean."""
    f = final(root, board)
    f = f[f["variant"] != "dpi"].sort_values("final", ascending=False)
    top = f.iloc[0]
    return str(top["scheme"]), float(top["final"])


def quoted(root: Path, rel: str) -> str:
    """A result file's table lines, fenced, naming the file."""
    lines = [ln.rstrip() for ln in read_text(root, rel).splitlines()]
    return "```text\n" + "\n".join(lines) + f"\n```\n(`{rel}`)\n"


BEST = {"small": R + "tetris_best_10x10.txt"}
for _board in RUNS:
    block(f"tetris-{_board}-final", sources=[f"{RUNS[_board]}/tetris_final.csv"],
          optional=True)(lambda root, b=_board: final_table(root, b))
    block(f"tetris-{_board}-pairs", sources=[f"{RUNS[_board]}/tetris_comparisons.csv"],
          optional=True)(lambda root, b=_board: pairs_table(root, b))
    block(f"tetris-{_board}-spread", sources=[f"{RUNS[_board]}/tetris_final.csv"],
          optional=True)(lambda root, b=_board: spread(root, b))
    block(f"tetris-{_board}-cpu-hours", sources=[f"{RUNS[_board]}/tetris_final.csv"],
          optional=True)(lambda root, b=_board: cpu_hours(root, b))
    block(f"tetris-{_board}-best-scheme", sources=[f"{RUNS[_board]}/tetris_final.csv"],
          optional=True)(lambda root, b=_board: best_scheme(root, b)[0])
    block(f"tetris-{_board}-best-mean", sources=[f"{RUNS[_board]}/tetris_final.csv"],
          optional=True)(lambda root, b=_board: f"{best_scheme(root, b)[1]:,.0f}")
    block(f"tetris-{_board}-best-policy", sources=[BEST[_board]], optional=True)(
        lambda root, b=_board: quoted(root, BEST[b]))
block("tetris-csc-table", sources=[R + "bench_tetris_csc.txt"], optional=True)(
    lambda root: quoted(root, R + "bench_tetris_csc.txt"))


def speed_table(root: Path) -> str:
    """bench_tetris.txt's measurements: its header line, the table, the engines' ratios."""
    text = read_text(root, R + "bench_tetris.txt").splitlines()
    table = [ln for ln in text if ln.startswith("|")]
    ratios = [ln for ln in text if ln.startswith("batch engine")]
    loads = [ln for ln in text if ln.startswith("load")]
    return (f"Measured {text[0].strip()}.\n\n" + "\n".join(table) + "\n\n"
            + "; ".join(ratios + loads) + ".\n")


def speed_figure(root: Path, board: str, simulator: str = "nsrl batch engine") -> str:
    """The (median) pieces per CPU second of ``simulator``'s first row on ``board``.

    ``board`` is e.g. '10 x 20'; the batch engine's first row is today's engine.
    """
    for ln in read_text(root, R + "bench_tetris.txt").splitlines():
        cells = [c.strip() for c in ln.strip("|").split("|")]
        if len(cells) > 4 and cells[0].startswith(simulator) and cells[1] == board:
            return cells[3].split(" [")[0]
    raise ValueError(f"bench_tetris.txt has no row of {simulator} on {board}")


block("tetris-speed-table", sources=[R + "bench_tetris.txt"])(speed_table)
block("tetris-speed-10x20", sources=[R + "bench_tetris.txt"])(
    lambda root: speed_figure(root, "10 x 20"))
block("tetris-speed-gym-10x20", sources=[R + "bench_tetris.txt"])(
    lambda root: speed_figure(root, "10 x 20", "tetris-gymnasium"))
