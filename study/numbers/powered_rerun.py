"""docs/bigger.md's values on the powered family's learner variants, recomputed (issue 46).

``benchmarks/compare_powered_rerun.py --csv`` wrote :data:`RESULTS`: one row per (variant,
scheme) of the LSTD-Q and rollouts + CSC variants recomputed, the mean final loss over the units in
the run first committed (``old_mean``; rollouts with the logistic fit) and in the rerun on
the operators of issue 46 (``new_mean``), pi_0's mean loss on the same units, the largest
difference of a unit's final loss, and each run's CPU seconds per shard.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from study.numbers.powered import LEARNERS as NAMES
from study.numbers.powered import POWERED_DIR as POWERED
from study.numbers.powered import PROVENANCE, committed, profile_share
from study.numbers.registry import block
from study.numbers.sources import listing, md_table, num, read_csv, read_text, search

RESULTS = "benchmarks/results/powered_rerun.csv"


def rows(root: Path) -> pd.DataFrame:
    """The comparison's rows, with the operator and the move relative to pi_0's loss."""
    t = read_csv(root, RESULTS).copy()
    t["operator"] = t["variant"].str.split("-").str[1]
    t["move"] = (t["new_mean"] - t["old_mean"]) / t["pi0_mean"]
    return t


def per_variant(root: Path) -> pd.DataFrame:
    """One row per variant: its shards' CPU seconds in both runs."""
    t = rows(root)
    return t.groupby("variant", sort=False).first()[
        ["operator", "old_cpu_per_shard", "old_shards", "new_cpu_per_shard", "new_shards"]]


@block("powered-rerun-table", sources=[RESULTS])
def _table(root: Path) -> str:
    t, v = rows(root), per_variant(root)
    out = []
    for variant, r in v.iterrows():
        mine = t[t["variant"] == variant]
        worst = mine.loc[mine["move"].abs().idxmax()]
        out.append([variant, NAMES[r["operator"]], str(int(r["new_shards"])),
                    num(r["old_cpu_per_shard"], 0), num(r["new_cpu_per_shard"], 0),
                    f"{r['old_cpu_per_shard'] / r['new_cpu_per_shard']:.2f}x",
                    f"{worst['move']:+.3f} ({worst['scheme']})",
                    f"{mine['max_abs_diff'].max():.2g}"])
    return md_table(["variant", "operator", "units", "CPU s per shard, first run",
                     "CPU s per shard, rerun", "less CPU", "largest move of a scheme's mean, "
                     "in pi_0's loss", "largest move of a unit's final loss"], out, "llrrrrrr")


@block("powered-rerun-moved", sources=[RESULTS])
def _moved(root: Path) -> str:
    """LSTD-Q repeats its numbers; how far the rollouts' scheme means moved."""
    t = rows(root)
    lstdq, roll = t[t["operator"] == "lstdq"], t[t["operator"] == "rollout"]
    parts = []
    if len(lstdq):
        parts.append(f"LSTD-Q's final losses repeat the first run's within "
                     f"{lstdq['max_abs_diff'].max():.1g} on every unit (its weights are the "
                     f"same: what moves is round-off, of the statistics and of the exact loss that "
                     f"measures each policy)")
    if len(roll):
        worst = roll.loc[roll["move"].abs().idxmax()]
        within = roll["move"].abs()
        parts.append(f"the rollout variants' scheme means moved by at most "
                     f"{abs(worst['move']):.1%} of pi_0's loss ({worst['scheme']} on "
                     f"{worst['variant']}, {worst['old_mean']:.2f} to {worst['new_mean']:.2f}); "
                     f"{int((within <= 0.01).sum())} of {len(roll)} scheme means moved by at "
                     f"most 1%")
    return "; ".join(parts)


PARTIAL = "benchmarks/results/powered_rerun_partial.txt"


@block("powered-rerun-lstdq-1e5-partial", sources=[PARTIAL])
def _lstdq_1e5_partial(root: Path) -> str:
    """The units of grid-lstdq-1e5 rerun before that rerun's sitting was cut off."""
    head = search(root, PARTIAL, r"^## grid-lstdq-1e5: CPU per shard ([\d,]+) s committed "
                  r"\((\d+) shards\), ([\d,]+) s rerun \((\d+) shards\): ([\d.]+)x$")
    section = read_text(root, PARTIAL).split(head[0], 1)[1].split("\n\n", 1)[0]
    largest = max(float(line.split()[-1]) for line in section.splitlines()[2:] if line.strip())
    return (f"on {head[4]} of its {head[2]} units every scheme's final loss repeated the "
            f"committed one within {largest:.0e}, at {num(_count(head[3]), 0)} CPU s a shard "
            f"against {num(_count(head[1]), 0)} ({head[5]}x less)")


def _count(text: str) -> float:
    """A number printed with thousands separators ("1,689")."""
    return float(text.replace(",", ""))


@block("powered-rerun-cpu", sources=[RESULTS])
def _cpu(root: Path) -> str:
    """The learners' CPU in both runs, by operator (the variants rerun in full)."""
    v = per_variant(root).loc[rerun_variants(root)]
    v = v.assign(old=v["old_cpu_per_shard"] * v["old_shards"],
                 new=v["new_cpu_per_shard"] * v["new_shards"])
    by = v.groupby("operator")[["old", "new"]].sum()
    parts = [f"{NAMES[op]} {r.old / 3600:.1f} CPU-hours before, {r.new / 3600:.1f} after "
             f"({r.old / r.new:.1f}x)" for op, r in by.iterrows()]
    return (f"the {len(v)} learner variants took {v['old'].sum() / 3600:.1f} CPU-hours in the "
            f"first run and {v['new'].sum() / 3600:.1f} in the rerun: {listing(parts)}")


LEARNERS = [f"{dom}-{op}-{size}" for size in ("1e4", "1e5") for dom in ("grid", "car")
            for op in NAMES]
TARGET_HOURS = 4  # issue 31's target for the whole family on 2 cores


def events(root: Path, variant: str) -> list[dict]:
    """A committed variant's session records."""
    return [json.loads(line) for line in
            read_text(root, f"{POWERED}{variant}/sessions.jsonl").splitlines() if line.strip()]


def rerun_variants(root: Path) -> list[str]:
    """The learner variants recomputed in full (every shard of the first run, rerun)."""
    v = per_variant(root)
    return list(v.index[v["new_shards"] == v["old_shards"]])


def rerun_sittings(root: Path) -> pd.DataFrame:
    """Per sitting of the learners' rerun (the sessions of the variants recomputed), its cost.

    Its workers, its last shard's end from the sitting's start (the wall it took) and the
    CPU seconds of its shards.
    """
    jobs: dict[str, int] = {}
    shards = []
    for variant in rerun_variants(root):
        for e in events(root, variant):
            if e["event"] == "start":
                jobs[e["session"]] = int(e["jobs"])
            elif e["event"] == "shard":
                shards.append({"session": e["session"], "elapsed": e["elapsed"],
                               "cpu": e["cpu_seconds"]})
    t = pd.DataFrame(shards)
    if t.empty:
        raise ValueError(f"{POWERED}: no recomputed learner variant has shards")
    out = t.groupby("session").agg(wall=("elapsed", "max"), cpu=("cpu", "sum"),
                                   shards=("cpu", "size"))
    out["jobs"] = out.index.map(jobs)
    return out


def cpu(root: Path) -> pd.Series:
    """Variant -> the CPU seconds of its committed shards (:func:`powered.committed`)."""
    return committed(root).set_index("variant")["cpu"]


@block("powered-rerun-wall", sources=[RESULTS, PROVENANCE,
                                      *(f"{POWERED}{v}/sessions.jsonl" for v in LEARNERS)])
def _wall(root: Path) -> str:
    """The rerun's measured wall and what the whole family costs on today's operators."""
    s = rerun_sittings(root)
    wall, used = s["wall"].sum(), s["cpu"].sum()
    jobs = int(s["jobs"].max())
    efficiency = used / (jobs * wall)
    per = cpu(root)
    family, others = per.sum(), per.drop(LEARNERS).sum()  # the exact and projected variants
    rerun = rerun_variants(root)
    first = [v for v in LEARNERS if v not in rerun]
    kept = f" ({listing(first)} at the first run's CPU)" if first else ""
    floor = family / jobs / 3600
    verdict = (f"within issue 31's {TARGET_HOURS} hours" if floor / efficiency <= TARGET_HOURS
               else f"above issue 31's {TARGET_HOURS} hours" if floor > TARGET_HOURS else
               f"within {TARGET_HOURS} hours only with the workers never idle")
    sittings = f"{len(s)} sitting{'s' if len(s) > 1 else ''}"
    return (f"the learners' rerun took {wall / 3600:.1f} hours of wall over {sittings} "
            f"on {jobs} workers, for {used / 3600:.1f} CPU-hours (efficiency "
            f"{efficiency:.2f}; the tests and CI shared the cores at times). With the exact and "
            f"projected variants' {others / 3600:.1f} CPU-hours, the family now needs "
            f"{family / 3600:.1f} CPU-hours{kept}: at least {floor:.1f} hours on {jobs} cores, "
            f"{floor / efficiency:.1f} at the rerun's efficiency, {verdict}")


@block("powered-rerun-lstdq-1e5", sources=[PROVENANCE])
def _lstdq_1e5(root: Path) -> str:
    """grid-lstdq-1e5's CPU per shard and share of the family's."""
    t = committed(root).set_index("variant")
    mine = t.loc["grid-lstdq-1e5"]
    return (f"{num(mine['cpu'] / mine['units'], 0)} CPU s a shard, "
            f"{mine['cpu'] / t['cpu'].sum():.0%} of the family's CPU")


LSTDQ_PROFILE = "benchmarks/results/profile_bigger_grid-lstdq-1e5_100000.txt"


@block("powered-lstdq-profile", sources=[LSTDQ_PROFILE])
def _lstdq_profile(root: Path) -> str:
    """Where a grid-lstdq-1e5 shard's time goes (a tenth of its iterations, profiled)."""
    def share(part: str) -> str:
        return profile_share(root, LSTDQ_PROFILE, part)

    def own(function: str) -> float:  # cProfile's own time of one function
        return float(search(root, LSTDQ_PROFILE,
                            r"^\s+[\d/]+\s+([\d.]+)\s.*" + re.escape(function) + r"$")[1])
    head = search(root, LSTDQ_PROFILE, r"^# Profile of .*: (\d+) iterations .*, (\d+) schemes$")
    total = float(search(root, LSTDQ_PROFILE, r"profiled total ([\d.]+) s")[1])
    return (f"{head[2]} schemes x {head[1]} iterations of MDP 0: the LSTD statistics rebuilt "
            f"from the store at each call (G, b and Phi^T N_a over the reached states) "
            f"{share('LSTD statistics: G, b')}, the X_pi products "
            f"{own('(_add_cross)') / total:.0%}, the exact loss and the greedy error of each "
            f"iteration (the measurement, not the operator) {share('exact loss')} and "
            f"{share('greedy error')}")
