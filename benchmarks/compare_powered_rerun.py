"""How far the powered family's learner variants moved when rerun on today's operators.

Beside each other, per variant: the CPU seconds of its shards (``sessions.jsonl``) in the
committed run and in the rerun (``benchmarks/rerun_powered_fast.py``); per scheme, the mean
final loss over the units (last iteration) in both, their difference relative to the mean
loss of pi_0 on the same units (the scale the family's tables use), and the largest
difference of any unit's final loss. LSTD-Q's operator computes the same weights as before
(the store's running sums are exact), so its rows say whether the rerun repeats the
committed numbers; rollouts + CSC now fit the soft-label form, so their rows say by how much
the faster fit moved the results.

Run: ``python benchmarks/compare_powered_rerun.py --new results/powered-fast``
(``--old`` defaults to the committed ``docs/bigger/powered_run``; once the rerun is copied
there, ``--old`` is the folder of an earlier commit: ``git archive ac063fe
docs/bigger/powered_run | tar -x -C /tmp/old``). ``--csv FILE`` also writes the rows, one per
(variant, scheme), for docs/bigger.md's generated sentence.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def cpu_seconds(folder: Path) -> tuple[float, int]:
    """CPU seconds of the shards a folder's sessions recorded, and their number."""
    records = [json.loads(line) for line in (folder / "sessions.jsonl").read_text().splitlines()]
    shards = [r for r in records if r.get("event") == "shard"]
    return sum(r["cpu_seconds"] for r in shards), len(shards)


def finals(folder: Path) -> pd.DataFrame:
    """Per (mdp, run, scheme): the final loss (last iteration)."""
    df = pd.read_parquet(folder / "shards", columns=["mdp", "run", "scheme", "iteration", "loss"])
    last = df[df["iteration"] == df["iteration"].max()]
    return last.set_index(["mdp", "run", "scheme"])[["loss"]]


def pi0_losses(old: Path, variant: str) -> pd.Series:
    """pi_0's loss per unit of the variant's domain and size (the family's pi0 table)."""
    table = pd.read_csv(old / "bigger-powered_pi0.csv")
    dom, size = variant.split("-")[0], {"1e4": 10_000, "1e5": 100_000}[variant.split("-")[2]]
    rows = table[(table["domain"] == dom) & (table["n_states"] == size)]
    return rows.set_index("mdp")["pi0"]


def compare(old: Path, new: Path, variant: str) -> tuple[list[str], list[dict]]:
    """The variant's printed section, and its rows (one per scheme)."""
    o_cpu, o_n = cpu_seconds(old / variant)
    n_cpu, n_n = cpu_seconds(new / variant)
    o_mean, n_mean = o_cpu / o_n, n_cpu / n_n
    lines = [f"## {variant}: CPU per shard {o_mean:,.0f} s committed ({o_n} shards), "
             f"{n_mean:,.0f} s rerun ({n_n} shards): {o_mean / n_mean:.2f}x"]
    joined = finals(old / variant).merge(finals(new / variant), how="inner", left_index=True,
                                         right_index=True, suffixes=("_old", "_new"))
    if joined.empty:
        return [*lines, "no unit in both runs yet", ""], []
    pi0 = pi0_losses(old, variant)
    lines.append(f"{'scheme':10s} {'units':>5s} {'old mean':>10s} {'new mean':>10s} "
                 f"{'diff/pi0':>9s} {'max |diff| unit':>16s}")
    rows = []
    for scheme, g in joined.groupby(level="scheme", sort=False):
        scale = pi0.reindex(g.index.get_level_values("mdp")).mean()
        old_mean, new_mean = g["loss_old"].mean(), g["loss_new"].mean()
        largest = (g["loss_new"] - g["loss_old"]).abs().max()
        lines.append(f"{scheme:10s} {len(g):5d} {old_mean:10.4f} {new_mean:10.4f} "
                     f"{(new_mean - old_mean) / scale:+9.3f} {largest:16.3g}")
        rows.append({"variant": variant, "scheme": scheme, "units": len(g),
                     "old_mean": old_mean, "new_mean": new_mean, "pi0_mean": scale,
                     "max_abs_diff": largest, "old_cpu_per_shard": o_mean, "old_shards": o_n,
                     "new_cpu_per_shard": n_mean, "new_shards": n_n})
    return [*lines, ""], rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, default=ROOT / "docs/bigger/powered_run")
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--csv", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args()
    variants = sorted(p.name for p in args.new.iterdir()
                      if any((p / "shards").glob("*.parquet")) and (args.old / p.name).exists())
    print(f"# The powered family's learner variants: committed ({args.old.name}) against the "
          f"rerun ({args.new})\n")
    rows = []
    for variant in variants:
        lines, mine = compare(args.old, args.new, variant)
        print("\n".join(lines))
        rows += mine
    if args.csv:
        pd.DataFrame(rows).to_csv(args.csv, index=False, float_format="%.12g")


if __name__ == "__main__":
    main()
