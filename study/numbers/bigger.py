"""Values of docs/bigger.md from the committed run of the ``bigger`` family and its benchmarks.

Sources:

- ``docs/bigger/full_run/<domain>-<operator>/``: the complete run of the family (both sizes),
  one folder per variant: ``stats_n_states.csv`` (mean loss by size, scheme and iteration),
  ``shards/*.parquet`` (each MDP's losses by scheme and iteration, with the transitions drawn
  by the sample-based operators), ``sessions.jsonl`` (each shard's wall and CPU seconds);
  ``bigger_gap.csv`` (each learner's final loss minus the exact operator's);
- ``benchmarks/results/``: ``mountain_car_check.txt``, ``feature_maps_greedy.txt``,
  ``bench_bigger_build.txt``,
  ``bench_exact_slow_mixing*.txt``,
  ``bigger_shards_*.txt`` (single shards run before the complete run), ``bigger_sb3*.csv``
  and ``bigger_targets_100000.txt`` (pi_0's loss on MDP 0 at 10^5 states).

The run stores no loss of pi_0 (its statistics start at iteration 1): pi_0's loss on MDP 0
comes from ``bigger_sb3.csv`` (10^4) and ``bigger_targets_100000.txt`` (10^5).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import (
    cells,
    listing,
    md_table,
    memo,
    num,
    read_csv,
    read_text,
    require,
    search,
)
from study.numbers.tables import table_after

R = "benchmarks/results/"
FULL = "docs/bigger/full_run/"
DOMAINS = {"grid": "grid world", "car": "mountain car"}
OPERATORS = {"exact": "exact", "projected": "projected", "lstdq": "LSTD-Q",
             "rollout": "rollouts + CSC"}
LEARNERS = ("projected", "lstdq", "rollout")
SIZES = (10000, 100000)
SIZE_TEXT = {10000: "10^4", 100000: "10^5"}
SHARDS = {dom: {n: [f"s{n}_a0{a}_b0{a}_m00{m}" for m in range(mdps)] for n in SIZES}
          for dom, a, mdps in (("grid", 4, 2), ("car", 3, 1))}
SB3_1E6, SB3_3E5 = R + "bigger_sb3.csv", R + "bigger_sb3_300k.csv"
TARGETS = R + "bigger_targets_100000.txt"
PI0_SOURCES = [SB3_1E6, TARGETS]
GAP = FULL + "bigger_gap.csv"


def variants() -> list[tuple[str, str]]:
    """Every (domain, operator) variant of the run."""
    return [(d, o) for d in DOMAINS for o in OPERATORS]


def stats_rel(dom: str, op: str) -> str:
    """The stats file of a variant, relative to the root."""
    return f"{FULL}{dom}-{op}/stats_n_states.csv"


def session_rel(dom: str, op: str) -> str:
    """The session log of a variant, relative to the root."""
    return f"{FULL}{dom}-{op}/sessions.jsonl"


def shard_rel(dom: str, op: str, n: int, mdp: int = 0) -> str:
    """The shard of MDP ``mdp`` at ``n`` states of a variant, relative to the root."""
    return f"{FULL}{dom}-{op}/shards/{SHARDS[dom][n][mdp]}.parquet"


STATS = [stats_rel(d, o) for d, o in variants()]
SESSIONS = [session_rel(d, o) for d, o in variants()]
MDP0 = [shard_rel(d, o, n) for d, o in variants() for n in SIZES]


def f2(x: float) -> str:
    """``x`` with two decimals."""
    return f"{x:.2f}"


def final(root: Path, dom: str, op: str, n: int) -> pd.Series:
    """Each scheme's mean loss over the MDPs of size ``n`` at the run's last iteration."""
    rel = stats_rel(dom, op)
    stats = read_csv(root, rel)
    stats = stats[stats["n_states"] == n]
    if stats.empty:
        raise ValueError(f"{rel} has no row with n_states = {n}")
    return stats[stats["iteration"] == stats["iteration"].max()].set_index("scheme")["mean"]


def table(root: Path, dom: str, n: int) -> pd.DataFrame:
    """Final mean loss by scheme (rows) and operator (columns)."""
    return pd.DataFrame({op: final(root, dom, op, n) for op in OPERATORS})


@memo
def shard(root: Path, dom: str, op: str, n: int, mdp: int = 0) -> pd.DataFrame:
    """The rows of one shard of a variant."""
    return pd.read_parquet(require(root, shard_rel(dom, op, n, mdp)))


def pi0(root: Path, dom: str, n: int) -> float:
    """pi_0's loss on MDP 0 of the domain at ``n`` states."""
    if n == 10000:
        sb3 = read_csv(root, SB3_1E6)
        return float(sb3[sb3["domain"] == dom]["loss_pi0"].iloc[0])
    return float(search(root, TARGETS, rf"^{dom} n_S=\d+: loss\(pi_0\) ([\d.]+)")[1])


def sessions(root: Path, dom: str, op: str) -> list[dict]:
    """The records of a variant's session log."""
    rel = session_rel(dom, op)
    return [json.loads(ln) for ln in read_text(root, rel).splitlines() if ln.strip()]


@memo
def shard_events(root: Path) -> pd.DataFrame:
    """One row per shard of the complete run: variant, shard, size, elapsed, cpu_seconds."""
    rows = []
    for dom, op in variants():
        for e in sessions(root, dom, op):
            if e["event"] == "shard":
                n = int(re.match(r"s(\d+)_", e["shard"])[1])
                rows.append({"dom": dom, "op": op, "shard": e["shard"], "n": n,
                             "elapsed": e["elapsed"], "cpu": e["cpu_seconds"]})
    return pd.DataFrame(rows)


def starts_and_ends(root: Path) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The first session's start and the last session's end (start + wall time)."""
    spans = []
    for dom, op in variants():
        events = sessions(root, dom, op)
        start = pd.Timestamp(re.match(r"(\d{8}T\d{6})", events[0]["session"])[1])
        end = next(e for e in events if e["event"] == "end")
        spans.append((start, start + pd.Timedelta(seconds=end["wall_time"])))
    return min(s for s, _ in spans), max(e for _, e in spans)


def variant_walls(root: Path) -> dict[tuple[str, str], float]:
    """Each variant's wall time, from its session log's end record."""
    out = {}
    for dom, op in variants():
        end = next(e for e in sessions(root, dom, op) if e["event"] == "end")
        out[(dom, op)] = end["wall_time"]
    return out


def at_budget(runs: pd.DataFrame, budget: float) -> pd.Series:
    """Each scheme's loss at its last checkpoint within ``budget`` transitions (1% slack).

    A run that stopped (CPI+) keeps its last policy; a scheme with no checkpoint within the
    budget is left out.
    """
    ok = runs[runs["samples"] <= 1.01 * budget].sort_values("iteration")
    return ok.groupby("scheme")["loss"].last()


# ---------------------------------------------------------------------------------------
# The final-loss tables and pi_0

def _final_table(dom: str, n: int):
    def render(root: Path) -> str:
        t = table(root, dom, n)
        rows = [[s, *(f2(t.loc[s, op]) for op in OPERATORS)] for s in t.index]
        return md_table(["scheme", *OPERATORS.values()], rows, "lrrrr")
    return render


for _dom in DOMAINS:
    for _n in SIZES:
        block(f"bigger-final.{_dom}.{_n}", sources=[stats_rel(_dom, o) for o in OPERATORS])(
            _final_table(_dom, _n))


@block("bigger-pi0", sources=PI0_SOURCES)
def _pi0(root: Path) -> str:
    return (f"{f2(pi0(root, 'grid', 10000))} on the grid world and {f2(pi0(root, 'car', 10000))}"
            f" on the mountain car at 10^4 states (`bigger_sb3.csv`), "
            f"{f2(pi0(root, 'grid', 100000))} and {f2(pi0(root, 'car', 100000))} at 10^5 "
            f"(`bigger_targets_100000.txt`)")


@block("bigger-free-cells", sources=[SB3_1E6, TARGETS])
def _free_cells(root: Path) -> str:
    sb3 = read_csv(root, SB3_1E6)
    small = int(sb3[sb3["domain"] == "grid"]["n_states"].iloc[0])
    big = int(search(root, TARGETS, r"^grid n_S=(\d+):")[1])
    return f"{num(small, 0)} at 10^4 (`bigger_sb3.csv`) and {num(big, 0)} at 10^5"


# ---------------------------------------------------------------------------------------
# The MountainCar-v0 check

CHECK = R + "mountain_car_check.txt"
SOLVED = -110.0


def car_check(root: Path) -> pd.DataFrame:
    """The rows of the mountain car check: grid, interpolation, seed set and its returns."""
    rows = re.findall(r"^\s*(\d+)\^2\s+(\d+)\s+(barycentric|nearest)\s+[\d.]+\s+(\d+)-(\d+)"
                      r"\s+(\d+)\s+(-?[\d.]+)\s+([\d.]+)\s+(-?\d+)\s+(-?\d+)$",
                      read_text(root, CHECK), re.MULTILINE)
    if not rows:
        raise ValueError(f"{CHECK} has no result rows (grid, interpolation, seed set, returns)")
    t = pd.DataFrame(rows, columns=["side", "states", "interp", "first", "last", "episodes",
                                    "mean", "se", "min", "max"])
    t = t.astype({"side": int, "states": int, "first": int, "last": int, "episodes": int,
                  "mean": float, "se": float, "min": int, "max": int})
    t["seeds"] = t["first"].astype(str) + "-" + t["last"].astype(str)
    return t


def car_worst(root: Path) -> pd.DataFrame:
    """Per grid and interpolation: the seed set of lowest mean (its row), and the best mean."""
    t = car_check(root)
    worst = t.loc[t.groupby(["side", "interp"])["mean"].idxmin()].set_index(["side", "interp"])
    worst["best"] = t.groupby(["side", "interp"])["mean"].max()
    worst["n_sets"] = t.groupby(["side", "interp"]).size()
    return worst.sort_index()


def _bold_if_solved(x: float, text: str) -> str:
    return f"**{text}**" if x >= SOLVED else text


def _mean_se(r: pd.Series) -> str:
    return f"{r['mean']:.1f} ± {r['se']:.1f}"


@block("bigger-car-check", sources=[CHECK])
def _car_check(root: Path) -> str:
    t = car_check(root)
    seeds = list(dict.fromkeys(t["seeds"]))
    worst = car_worst(root)
    rows = []
    for side in sorted(set(t["side"])):
        bary = t[(t["side"] == side) & (t["interp"] == "barycentric")].set_index("seeds")
        near = worst.loc[(side, "nearest")]
        rows.append([f"{side} x {side}", num(bary["states"].iloc[0], 0),
                     *(_bold_if_solved(bary.loc[s, "mean"], _mean_se(bary.loc[s]))
                       for s in seeds),
                     f"{_bold_if_solved(near['mean'], format(near['mean'], '.1f'))} / "
                     f"{_bold_if_solved(near['best'], format(near['best'], '.1f'))}"])
    return md_table(["grid", "states", *(f"barycentric, seeds {s}" for s in seeds),
                     "nearest point, worst / best set"], rows, "lr" + "r" * (len(seeds) + 1))


@block("bigger-car-seed-sets", sources=[CHECK])
def _car_seed_sets(root: Path) -> str:
    t = car_check(root)
    sets = list(dict.fromkeys(zip(t["seeds"], t["episodes"], strict=True)))
    return (f"{len(sets)} disjoint seed sets (reset seeds "
            f"{listing([s for s, _ in sets])}, {listing(sorted({str(n) for _, n in sets}))} "
            f"episodes each)")


def _solves_from(root: Path, interp: str) -> int | None:
    """The smallest side from which every larger grid solves the task on its worst seed set."""
    t = car_worst(root).xs(interp, level="interp").sort_index()
    ok = (t["mean"] >= SOLVED).to_numpy()
    if not ok[-1]:
        return None
    i = len(ok) - 1
    while i > 0 and ok[i - 1]:
        i -= 1
    return int(t.index[i])


@block("bigger-car-solves-from", sources=[CHECK])
def _car_solves(root: Path) -> str:
    side = _solves_from(root, "barycentric")
    if side is None:
        raise ValueError(f"{CHECK}: the barycentric model does not solve the task at the "
                         "largest grid on its worst seed set")
    return f"{side} x {side}"


@block("bigger-car-claim", sources=[CHECK])
def _car_claim(root: Path) -> str:
    """The stated size: its worst seed set, the others, and the grid below it."""
    side = _solves_from(root, "barycentric")
    if side is None:
        raise ValueError(f"{CHECK}: no grid solves the task on its worst seed set")
    t = car_check(root)
    bary = t[t["interp"] == "barycentric"]
    at = bary[bary["side"] == side].sort_values("mean")
    margin = (at["mean"].iloc[0] - SOLVED) / at["se"].iloc[0]
    text = (f"**{side} x {side} solves it**: the mean return of its worst seed set is "
            f"{_mean_se(at.iloc[0])} (seeds {at['seeds'].iloc[0]}; the others "
            f"{listing([f'{m:.1f}' for m in at['mean'].iloc[1:]])}), {margin:.1f} standard "
            f"errors above {SOLVED:.0f}")
    below = sorted(s for s in set(bary["side"]) if s < side)
    if below:
        w = car_worst(root).loc[(below[-1], "barycentric")]
        text += (f"; {below[-1]} x {below[-1]} does not ({_mean_se(w)} on seeds {w['seeds']}, "
                 f"{w['best']:.1f} on its best set)")
    return text


@block("bigger-car-nearest", sources=[CHECK])
def _car_nearest(root: Path) -> str:
    """Where the nearest-point model fails on every seed set, and what it does above."""
    t = car_check(root)
    t = t[t["interp"] == "nearest"]
    solved = (t["mean"] >= SOLVED).groupby(t["side"]).sum().sort_index()
    n_sets = t.groupby("side").size()
    if solved.iloc[0]:
        raise ValueError(f"{CHECK}: the nearest-point model solves the smallest grid")
    k = int(np.argmax(solved.to_numpy() > 0)) if solved.any() else len(solved)
    last = solved.index[k - 1]
    text = f"fails Gymnasium's task on every seed set at every grid up to {last} x {last}"
    for side, count in solved.iloc[k:].items():
        means = t[t["side"] == side]["mean"]
        text += (f"; at {side} x {side} it solves it on {count} of {n_sets[side]} seed sets "
                 f"(means {means.min():.1f} to {means.max():.1f})")
    return text


def _car_return(side: int):
    def render(root: Path) -> str:
        w = car_worst(root)
        if (side, "barycentric") not in w.index:
            raise ValueError(f"{CHECK} has no barycentric rows for {side}^2")
        r = w.loc[(side, "barycentric")]
        worst_episode = car_check(root).query("side == @side and interp == 'barycentric'")["min"]
        return (f"{_mean_se(r)} on its worst seed set ({r['seeds']}; worst episode "
                f"{worst_episode.min()})")
    return render


block("bigger-car-return-100", sources=[CHECK])(_car_return(100))


# ---------------------------------------------------------------------------------------
# The certified evaluation on slow-mixing models

SLOW = {316: R + "bench_exact_slow_mixing.txt", 100: R + "bench_exact_slow_mixing_10k.txt"}
SLOW_LABELS = {"mountain car": "mountain car", "grid world": "grid world, the sweep's kind",
               "Garnet": "Garnet(S, 4, 4), control"}


def slow_mixing(root: Path, rel: str) -> list[dict]:
    """Per model of ``bench_exact_slow_mixing.py``'s output: name, states, solves and totals."""
    text = read_text(root, rel)
    out = []
    for section in re.split(r"\n\n", text)[1:]:
        head = re.match(r"(.+?): (\d+) states \(value tol ([\d.e+-]+) max-norm, occupancy tol "
                        r"([\d.e+-]+)", section)
        total = re.search(r"([\d.]+) s before, ([\d.]+) s after: ([\d.]+)x", section)
        solves = re.findall(r"^\S.*?\s+([\d.]+) s\s+([\d.]+) s\s+([\d.]+) s\s+([\d.]+) s\s+"
                            r"([\d.e+-]+), ([\d.e+-]+) \| ([\d.e+-]+), ([\d.e+-]+)$", section,
                            re.MULTILINE)
        if head is None or total is None or not solves:
            raise ValueError(f"{rel}: a model's section could not be read")
        s = pd.DataFrame(solves, dtype=float, columns=[
            "vb", "va", "ob", "oa", "bvb", "bob", "bva", "boa"])
        out.append({"name": head[1], "states": int(head[2]), "vtol": float(head[3]),
                    "otol": float(head[4]), "before": float(total[1]),
                    "after": float(total[2]), "speedup": float(total[3]), "solves": s})
    return out


def _label(name: str) -> str:
    return next(v for k, v in SLOW_LABELS.items() if name.startswith(k))


@block("bigger-slow-mixing", sources=[SLOW[316]])
def _slow_mixing(root: Path) -> str:
    rows = []
    for m in slow_mixing(root, SLOW[316]):
        s = m["solves"]
        same = (s[["bvb", "bob"]].to_numpy() == s[["bva", "boa"]].to_numpy()).all()
        speed = f"{m['speedup']:.1f}x"
        speed = f"{speed} (same bounds)" if same else (f"**{speed}**" if m["speedup"] >= 2
                                                       else speed)
        slow_b = s[["vb", "ob"]].to_numpy().max()
        slow_a = s[["va", "oa"]].to_numpy().max()
        rows.append([f"{_label(m['name'])} ({num(m['states'], 0)} states)",
                     f"{m['before']:.1f} CPU s", f"{m['after']:.1f} CPU s", speed,
                     f"{slow_b:.1f} / {slow_a:.1f} s"])
    return md_table(["7 policies, about 10^5 states", "value + occupancy, before", "after",
                     "speed-up", "slowest solve before / after"], rows, "lrrrr")


@block("bigger-slow-mixing-10k", sources=[SLOW[100]])
def _slow_mixing_10k(root: Path) -> str:
    m = {_label(x["name"]).split(",")[0]: x for x in slow_mixing(root, SLOW[100])}
    return (f"the car gains {m['mountain car']['speedup']:.1f}x and the grid world "
            f"{m['grid world']['speedup']:.1f}x")


@block("bigger-slow-mixing-bounds", sources=list(SLOW.values()))
def _slow_mixing_bounds(root: Path) -> str:
    models = [m for rel in SLOW.values() for m in slow_mixing(root, rel)]
    v = max(m["solves"][["bvb", "bva"]].to_numpy().max() for m in models)
    o = max(m["solves"][["bob", "boa"]].to_numpy().max() for m in models)
    vtol, otol = models[0]["vtol"], models[0]["otol"]
    if v >= vtol or o >= otol:
        return (f"Not every bound is below the tolerance: at most {v:.1e} for values (tolerance "
                f"{vtol:g}) and {o:.1e} for occupancies ({otol:g})")
    return (f"Every bound in both columns, at both sizes, is below the tolerance: at most "
            f"{v:.1e} for values (tolerance {vtol:g}), {o:.1e} for occupancies ({otol:g})")


SLOW_DIFF = {100: R + "bench_exact_slow_mixing_10k_diff.txt",
             316: R + "bench_exact_slow_mixing_diff.txt"}


def slow_mixing_diff(root: Path, rel: str) -> dict[str, tuple[float, float, bool]]:
    """Per model: the largest value and occupancy differences after - before, bit for bit."""
    found = re.findall(r"^([^\n]+?): \d+ states \(value tol.*?^largest difference after - before: "
                       r"values ([\d.e+-]+) \(max-norm\), occupancies ([\d.e+-]+) \(1-norm\); "
                       r"bit for bit the same: (yes|no)$", read_text(root, rel),
                       re.MULTILINE | re.DOTALL)
    if not found:
        raise ValueError(f"{rel} has no 'largest difference after - before' lines")
    names = {"mountain car": "the mountain car", "grid world": "the grid world",
             "Garnet": "the Garnet control"}
    return {next(v for k, v in names.items() if name.startswith(k)):
            (float(dv), float(dd), same == "yes") for name, dv, dd, same in found}


@block("bigger-ilu-same-numbers", sources=list(SLOW_DIFF.values()))
def _ilu_same_numbers(root: Path) -> str:
    """What the ILU(0) step changes in the results, model by model (fast vs slow mixing)."""
    exps = {100: "10^4", 316: "10^5"}
    by_model: dict[str, dict[str, tuple[float, float, bool]]] = {}
    for n, rel in SLOW_DIFF.items():
        for model, x in slow_mixing_diff(root, rel).items():
            by_model.setdefault(model, {})[exps[n]] = x
    same = [f"{m} ({listing(list(d))} states)" for m, d in by_model.items()
            if all(x[2] for x in d.values())]
    moved = [f"{m} ({'; '.join(f'{n}: {x[0]:.1e} and {x[1]:.1e}' for n, x in d.items())})"
             for m, d in by_model.items() if not all(x[2] for x in d.values())]
    text = (f"the same results bit for bit on {listing(same)}" if same else
            "no model with the same results bit for bit")
    if moved:
        text += ("; different ones, within the certified tolerances, on "
                 f"{listing(moved)}, the largest differences over the 7 policies of the "
                 "values (max-norm) and of the occupancies (1-norm)")
    return text


# ---------------------------------------------------------------------------------------
# Single shards run before the complete run

SHARD_FILES = {10000: R + "bigger_shards_10000.txt", 100000: R + "bigger_shards_100000.txt"}
SHARD_RE = (r"^(\w+)-(\w+) n_states=(\d+) mdp=(\d+): ([\d.]+) CPU s \((\d+) s wall\); "
            r"final losses: (.*); mean")


def single_shards(root: Path, n: int) -> list[dict]:
    """The single shards run at ``n`` states, one dict per line of their file."""
    rel = SHARD_FILES[n]
    found = re.findall(SHARD_RE, read_text(root, rel), re.MULTILINE)
    if not found:
        raise ValueError(f"{rel} has no shard line")
    out = []
    for dom, op, _, mdp, cpu, wall, losses in found:
        pairs = dict(re.findall(r"(\S+) ([\d.]+)(?:,|$)", losses))
        out.append({"dom": dom, "op": op, "mdp": int(mdp), "cpu": float(cpu),
                    "wall": float(wall), "losses": {k: float(x) for k, x in pairs.items()}})
    return out


def _variant_name(dom: str, op: str) -> str:
    what = {"exact": "exact operator", "projected": "projected operator", "lstdq": "LSTD-Q",
            "rollout": "rollouts + CSC"}[op]
    return f"{what}, {'mountain car' if dom == 'car' else 'grid world MDP 0'}"


@block("bigger-shards-100000", sources=[SHARD_FILES[100000]])
def _shards_table(root: Path) -> str:
    rows = [[_variant_name(s["dom"], s["op"]), f"**{s['cpu']:.1f}**", f"{s['wall']:.0f}"]
            for s in single_shards(root, 100000)]
    return md_table(["shard at 10^5 states", "CPU s", "wall s"], rows, "lrr")


@block("bigger-shards-10000-rollout", sources=[SHARD_FILES[10000]])
def _shards_10k(root: Path) -> str:
    s = next(x for x in single_shards(root, 10000) if x["dom"] == "grid" and x["op"] == "rollout")
    return f"{s['cpu']:.1f} CPU s (MDP {s['mdp']}, `bigger_shards_10000.txt`)"


@block("bigger-shards-wall-ratio", sources=list(SHARD_FILES.values()))
def _wall_ratio(root: Path) -> str:
    ratios = [s["wall"] / s["cpu"] for n in SIZES for s in single_shards(root, n)]
    return f"{min(ratios):.1f}-{max(ratios):.1f} times"


@block("bigger-shards-100000-losses", sources=[SHARD_FILES[100000], TARGETS])
def _shards_losses(root: Path) -> str:
    lines = []
    for s in single_shards(root, 100000):
        ref = pi0(root, s["dom"], 100000)
        ordered = sorted(s["losses"].items(), key=lambda kv: kv[1])
        stuck = [k for k, x in ordered if f2(x) == f2(ref)]
        moved = [f"{k} {f2(x)}" for k, x in ordered if k not in stuck]
        best_k, best = ordered[0]
        text = ", ".join(moved)
        if stuck:
            text += (f", {listing(stuck)} {f2(ref)} (pi_0's loss: "
                     f"{'it does' if len(stuck) == 1 else 'they do'} not move)")
        lines.append(f"* {_variant_name(s['dom'], s['op'])}: {text}; best {best_k}, "
                     f"{best / ref:.0%} of pi_0's loss ({f2(ref)})")
    return "\n".join(lines)


@block("bigger-shards-100000-same", sources=[SHARD_FILES[100000], *MDP0])
def _shards_same(root: Path) -> str:
    differ = []
    for s in single_shards(root, 100000):
        run = shard(root, s["dom"], s["op"], 100000, s["mdp"])
        last = run[run["iteration"] == run["iteration"].max()].set_index("scheme")["loss"]
        for k, x in s["losses"].items():
            if f2(last[k]) != f2(x):
                differ.append(f"{s['dom']}-{s['op']} {k}: {f2(x)} here, {f2(last[k])} there")
    if differ:
        return "the complete run gives other final losses: " + "; ".join(differ)
    return ("the complete run below gave MDP 0 the same final losses, to the two decimals "
            "shown, in all 8 variants")


# ---------------------------------------------------------------------------------------
# The complete run: its times

def _hms(t: pd.Timestamp) -> str:
    return t.strftime("%H:%M:%S")


@block("bigger-run-span", sources=SESSIONS)
def _run_span(root: Path) -> str:
    start, end = starts_and_ends(root)
    minutes, seconds = divmod(round((end - start).total_seconds()), 60)
    return (f"{_hms(start)} to {_hms(end)} UTC ({minutes} min {seconds} s) from the first "
            f"variant's start to the last shard's end")


def run_totals(root: Path) -> tuple[int, float, float]:
    """(shards, worker CPU s, wall s of the shard sessions added up)."""
    ev = shard_events(root)
    return len(ev), float(ev["cpu"].sum()), float(sum(variant_walls(root).values()))


@block("bigger-run-totals", sources=SESSIONS)
def _run_totals(root: Path) -> str:
    n, cpu, wall = run_totals(root)
    return (f"{n} shards, {num(wall, 0)} s of shard computing (the variants' sessions added up) "
            f"and **{num(cpu, 0)} worker CPU s**")


@block("bigger-run-efficiency", sources=SESSIONS)
def _run_efficiency(root: Path) -> str:
    _, cpu, wall = run_totals(root)
    return (f"{num(cpu, 0)} CPU s took {num(wall, 0)} s on 2 workers (efficiency "
            f"{cpu / (2 * wall):.2f})")


@block("bigger-run-variant-walls", sources=SESSIONS)
def _run_walls(root: Path) -> str:
    w = variant_walls(root)
    grid = ", ".join(f"{OPERATORS[o] if o != 'exact' else 'exact'} {w[('grid', o)]:.0f} s"
                     for o in OPERATORS)
    car = listing([f"{w[('car', o)]:.0f}" for o in OPERATORS])
    return f"grid world {grid}; mountain car {car} s"


@block("bigger-run-dask", sources=SESSIONS)
def _run_dask(root: Path) -> str:
    ev = shard_events(root)
    _, cpu, _ = run_totals(root)
    longest = ev.loc[ev["cpu"].idxmax()]
    size = SIZE_TEXT[int(longest["n"])]
    where = f"{OPERATORS[longest['op']]} on a {size} {DOMAINS[longest['dom']]}"
    minutes = {w: max(cpu / (0.8 * w), longest["cpu"]) / 60 for w in (4, 8)}
    return (f"the longest being {where} ({longest['cpu']:.0f} CPU s in this run): "
            f"**about {minutes[4]:.0f} minutes with 4 workers, {minutes[8]:.0f} with 8, and no "
            f"less than {longest['cpu'] / 60:.1f} minutes with more**")


@block("bigger-run-drop-lstdq", sources=SESSIONS)
def _run_drop(root: Path) -> str:
    ev = shard_events(root)
    _, cpu, wall = run_totals(root)
    drop = ev[(ev["op"] == "lstdq") & (ev["n"] == 100000)]
    eff = cpu / (2 * wall)
    left = (cpu - drop["cpu"].sum()) / (2 * eff) / 60
    return (f"{len(drop)} shards, {num(drop['cpu'].sum(), 0)} CPU s in this run: about "
            f"{left:.0f} minutes left at the same efficiency")


# ---------------------------------------------------------------------------------------
# SB3 at equal transitions

def sb3_final(root: Path, rel: str) -> pd.DataFrame:
    """The last checkpoint of each (domain, algo) run of a bench_bigger_sb3 CSV."""
    df = read_csv(root, rel).sort_values("samples")
    return df.groupby(["domain", "algo"]).last()


def nsrl_best(root: Path, dom: str, op: str, budget: float) -> tuple[str, float]:
    """The best scheme of a sample-based variant on MDP 0 at 10^4 states within ``budget``."""
    losses = at_budget(shard(root, dom, op, 10000), budget)
    return str(losses.idxmin()), float(losses.min())


@block("bigger-sb3", sources=[SB3_1E6, SB3_3E5, *MDP0, *SESSIONS])
def _sb3(root: Path) -> str:
    small, big = sb3_final(root, SB3_3E5), sb3_final(root, SB3_1E6)
    pi = {d: f2(big.loc[(d, "ppo"), "loss_pi0"]) for d in DOMAINS}
    rows = []
    for algo in ("ppo", "dqn"):
        cpu = [big.loc[(d, algo), "cpu_s"] for d in DOMAINS]
        rows.append([f"SB3 {algo.upper()}",
                     *(f"{f2(small.loc[(d, algo), 'loss'])} / {f2(big.loc[(d, algo), 'loss'])}"
                       for d in DOMAINS), f"{min(cpu):.0f}-{max(cpu):.0f}"])
    ev = shard_events(root)
    for op, what in (("lstdq", "LSTD-Q (no reset-to-state)"),
                     ("rollout", "rollouts + CSC (reset-to-state)")):
        cells = []
        for d in DOMAINS:
            (s3, l3), (s6, l6) = nsrl_best(root, d, op, 3e5), nsrl_best(root, d, op, 1e6)
            cells.append(f"{f2(l3)} ({s3}) / {f2(l6)} ({s6})")
        cpu = ev[(ev["op"] == op) & (ev["n"] == 10000)
                 & ev["shard"].str.endswith("m000")]["cpu"]
        rows.append([f"best nsrl scheme + {what}", *cells,
                     f"{cpu.min():.0f}-{cpu.max():.0f} per 7 schemes"])
    return md_table(["at 3 x 10^5 / 10^6 transitions", f"grid world (pi_0: {pi['grid']})",
                     f"mountain car (pi_0: {pi['car']})", "CPU s (10^6)"], rows, "lrrr")


@block("bigger-sb3-compare", sources=[SB3_1E6, SB3_3E5, *MDP0, *SESSIONS])
def _sb3_compare(root: Path) -> str:
    small, big = sb3_final(root, SB3_3E5), sb3_final(root, SB3_1E6)
    parts = []
    for d in DOMAINS:
        s6, l6 = nsrl_best(root, d, "lstdq", 1e6)
        ahead = [a.upper() for a in ("ppo", "dqn") if l6 < big.loc[(d, a), "loss"]]
        behind = [a.upper() for a in ("ppo", "dqn") if l6 >= big.loc[(d, a), "loss"]]
        text = f"on the {DOMAINS[d]} LSTD-Q's best scheme at 10^6 ({s6}, {f2(l6)}) is "
        text += " and ".join(
            ([f"ahead of {listing(ahead)}"] if ahead else [])
            + ([f"behind {listing(behind)}"] if behind else []))
        text += " (" + ", ".join(f"{a.upper()} {f2(big.loc[(d, a), 'loss'])}"
                                 for a in ("ppo", "dqn")) + ")"
        parts.append(text)
    dqn3, dqn6 = small.loc[("car", "dqn"), "loss"], big.loc[("car", "dqn"), "loss"]
    s3, l3 = nsrl_best(root, "car", "lstdq", 3e5)
    ev = shard_events(root)
    lstdq_cpu = ev[(ev["dom"] == "car") & (ev["op"] == "lstdq") & (ev["n"] == 10000)]["cpu"]
    return ("; ".join(parts) + f". On the car DQN has {f2(dqn3)} at 3 x 10^5 transitions and "
            f"{f2(dqn6)} at 10^6, against {f2(l3)} for {s3} with LSTD-Q at 3 x 10^5 (the "
            f"LSTD-Q shard of all seven schemes took {lstdq_cpu.iloc[0]:.0f} CPU s, DQN's one "
            f"run {big.loc[('car', 'dqn'), 'cpu_s']:.0f})")


# ---------------------------------------------------------------------------------------
# The answer: section 5's claims recomputed from the complete run

CASES = [(n, d, o) for n in SIZES for d in DOMAINS for o in OPERATORS]
FAMILY = FULL + "bigger.csv"


def moving(root: Path, dom: str, op: str, n: int) -> pd.Series:
    """Final means of the six schemes other than plain CPI (which does not move), sorted."""
    return final(root, dom, op, n).drop("CPI").sort_values(kind="stable")


def _case(n: int, dom: str, op: str) -> str:
    return f"{DOMAINS[dom]} {OPERATORS[op]} {SIZE_TEXT[n]}"


def rank(root: Path, dom: str, op: str, n: int, scheme: str) -> int:
    """``scheme``'s rank (1 = lowest) among the moving averages of the final losses."""
    s = moving(root, dom, op, n)
    return 1 + int((s < s[scheme] - 5e-3).sum())


def _close(a: float, b: float) -> float:
    return abs(a - b) / max((a + b) / 2, 1e-12)


@block("bigger-answer-ranks", sources=STATS)
def _answer_ranks(root: Path) -> str:
    rows = []
    for d in DOMAINS:
        for o in OPERATORS:
            for n in SIZES:
                s, t = moving(root, d, o, n), final(root, d, o, n)
                a, c = t["API(0.1)"], t["CPI(0.1)"]
                rows.append([f"{DOMAINS[d]}, {OPERATORS[o]}", SIZE_TEXT[n],
                             f"{s.index[0]} ({f2(s.iloc[0])})",
                             str(rank(root, d, o, n, "API")), str(rank(root, d, o, n, "CPI+")),
                             str(rank(root, d, o, n, "PSDP")),
                             f"{f2(a)} / {f2(c)} ({_close(a, c):.0%})"])
    return md_table(["variant", "states", "best scheme", "API's rank", "CPI+'s rank",
                     "PSDP's rank", "API(0.1) / CPI(0.1) (apart)"], rows, "llrrrrr")


def _cases_where(root: Path, test, ops=tuple(OPERATORS)) -> list[str]:
    return [_case(n, d, o) for n, d, o in CASES if o in ops and test(root, d, o, n)]


def _count(found: list[str], total: int) -> str:
    return f"{len(found)} of {total}" + (f" ({listing(found)})" if found else "")


@block("bigger-answer-api-exact", sources=[stats_rel(d, "exact") for d in DOMAINS])
def _answer_api_exact(root: Path) -> str:
    best = _cases_where(root, lambda r, d, o, n: rank(r, d, o, n, "API") == 1, ("exact",))
    vals = "; ".join(f"{DOMAINS[d]} " + " and ".join(f2(final(root, d, "exact", n)["API"])
                                                     for n in SIZES) for d in DOMAINS)
    return f"the best in {len(best)} of {len(SIZES) * len(DOMAINS)} cases ({vals} at 10^4 and 10^5)"


@block("bigger-answer-api-approx", sources=STATS)
def _answer_api_approx(root: Path) -> str:
    total = len(SIZES) * len(DOMAINS) * len(LEARNERS)
    worst = _cases_where(root, lambda r, d, o, n: rank(r, d, o, n, "API") == 6, LEARNERS)
    best = _cases_where(root, lambda r, d, o, n: rank(r, d, o, n, "API") == 1, LEARNERS)
    return (f"it is the worst of the six schemes that move in {_count(worst, total)} and the "
            f"best in {_count(best, total)}")


@block("bigger-answer-api-oscillation", sources=[shard_rel("car", "projected", n)
                                                for n in SIZES])
def _answer_oscillation(root: Path) -> str:
    parts = []
    for n in SIZES:
        run = shard(root, "car", "projected", n)
        api = run[run["scheme"] == "API"].set_index("iteration")["loss"].sort_index()
        parts.append(f"at {SIZE_TEXT[n]} it ranges from {f2(api.min())} (iteration "
                     f"{api.idxmin()}) to {f2(api.max())} (iteration {api.idxmax()}) and ends "
                     f"at {f2(api.iloc[-1])}")
    return "; ".join(parts)


@block("bigger-answer-o3", sources=STATS)
def _answer_o3(root: Path) -> str:
    close = _cases_where(root, lambda r, d, o, n: _close(
        final(r, d, o, n)["API(0.1)"], final(r, d, o, n)["CPI(0.1)"]) <= 0.1)
    far = [c for c in (_case(n, d, o) for n, d, o in CASES) if c not in close]
    higher = _cases_where(root, lambda r, d, o, n: final(r, d, o, n)["API(0.1)"]
                          > final(r, d, o, n)["CPI(0.1)"] + 5e-3)
    return (f"within 10% of each other in {len(close)} of {len(CASES)} cases, not in "
            f"{listing(far) if far else 'none'}; API(0.1)'s the higher (the paper's \"slightly "
            f"worse\") in {len(higher)} of {len(CASES)}")


@block("bigger-answer-cpi-plus-best", sources=STATS)
def _answer_cpi_plus(root: Path) -> str:
    best = _cases_where(root, lambda r, d, o, n: rank(r, d, o, n, "CPI+") == 1, LEARNERS)
    return f"the best scheme in {_count(best, len(SIZES) * len(DOMAINS) * len(LEARNERS))}"


@block("bigger-answer-cpi-plus-stops", sources=[FAMILY])
def _answer_stops(root: Path) -> str:
    fam = read_csv(root, FAMILY).set_index("variant")["CPI+ stopped k=10"]
    every = fam[fam >= 1]
    some = [f"{v}: {x:.0%} of runs" for v, x in fam[fam < 1].items()]
    return (f"it stopped by k = 10 in every run of {len(every)} of the {len(fam)} variants"
            + (f" ({'; '.join(some)})" if some else ""))


@block("bigger-answer-cpi-plus-car-exact", sources=[*(shard_rel("car", "exact", n)
                                                      for n in SIZES), *PI0_SOURCES])
def _answer_cpi_plus_car(root: Path) -> str:
    parts = []
    for n in SIZES:
        run = shard(root, "car", "exact", n)
        cpi = run[run["scheme"] == "CPI+"]["loss"]
        parts.append(f"{f2(cpi.iloc[-1])} at {SIZE_TEXT[n]} (pi_0's: {f2(pi0(root, 'car', n))})")
    return listing(parts)


@block("bigger-answer-cpi", sources=[*MDP0, *PI0_SOURCES])
def _answer_cpi(root: Path) -> str:
    dev = 0.0
    for n, d, o in CASES:
        run = shard(root, d, o, n)
        dev = max(dev, float((run[run["scheme"] == "CPI"]["loss"] - pi0(root, d, n)).abs().max()))
    return (f"its loss stays within {dev:.2g} of pi_0's at every iteration on MDP 0, in every "
            f"variant at both sizes")


@block("bigger-answer-psdp", sources=STATS)
def _answer_psdp(root: Path) -> str:
    best = _cases_where(root, lambda r, d, o, n: rank(r, d, o, n, "PSDP") == 1)
    car = "; ".join(f"{SIZE_TEXT[n]}: " + ", ".join(f2(final(root, "car", o, n)["PSDP"])
                                                     for o in ("exact", "projected"))
                    for n in SIZES)
    return (f"it is the best scheme in {_count(best, len(CASES))}; on the car with the exact "
            f"and projected operators it ends near pi_0's loss ({car})")


@block("bigger-answer-checks", sources=[FAMILY])
def _answer_checks(root: Path) -> str:
    fam = read_csv(root, FAMILY).set_index("variant")
    parts = []
    for obs in ("O1", "O2", "O3", "O4", "O5", "O6", "C"):
        held = list(fam.index[fam[obs] == "yes"])
        na = bool((fam[obs] == "n/a").all())
        parts.append(f"{obs} {'n/a' if na else (listing(held) if held else 'none')}")
    return "; ".join(parts)


def gaps(root: Path, dom: str, n: int) -> pd.DataFrame:
    """The rows of the gap table of a domain at ``n`` states (CPI left out)."""
    g = read_csv(root, GAP)
    g = g[(g["domain"] == dom) & (g["n_states"] == n) & (g["scheme"] != "CPI")]
    if g.empty:
        raise ValueError(f"{GAP} has no row for {dom} at {n} states")
    return g.set_index("scheme")


@block("bigger-answer-gaps-grid", sources=[GAP])
def _answer_gaps(root: Path) -> str:
    parts = []
    for n in SIZES:
        g = gaps(root, "grid", n)
        each = ", ".join(
            f"{OPERATORS[o]} {f2(g[f'gap {o}'].min())}-{f2(g[f'gap {o}'].max())} (mean "
            f"{f2(g[f'gap {o}'].mean())}; largest: {g[f'gap {o}'].idxmax()})" for o in LEARNERS)
        parts.append(f"at {SIZE_TEXT[n]} {each}")
    return "; ".join(parts)


@block("bigger-answer-car-beats", sources=[GAP])
def _answer_car_beats(root: Path) -> str:
    parts = []
    for n in SIZES:
        g = gaps(root, "car", n)
        below = [f"{s} with {OPERATORS[o]} ({f2(g.loc[s, f'gap {o}'])})"
                 for o in LEARNERS for s in g.index if g.loc[s, f"gap {o}"] < -5e-3]
        parts.append(f"at {SIZE_TEXT[n]} " + (listing(below) if below else "none"))
    return "; ".join(parts)


@block("bigger-answer-car-best", sources=[stats_rel("car", o) for o in OPERATORS])
def _answer_car_best(root: Path) -> str:
    parts = []
    for n in SIZES:
        t = table(root, "car", n)
        learned = t[list(LEARNERS)].stack()
        (scheme, op), best = learned.idxmin(), learned.min()
        parts.append(f"{scheme} with {OPERATORS[op]} {f2(best)} against the exact operator's "
                     f"{t['exact'].idxmin()} {f2(t['exact'].min())} at {SIZE_TEXT[n]}")
    return "; ".join(parts)


@block("bigger-answer-car-rollout", sources=[stats_rel("car", "rollout"), *PI0_SOURCES])
def _answer_car_rollout(root: Path) -> str:
    parts = []
    for n in SIZES:
        s = final(root, "car", "rollout", n)
        parts.append(f"{f2(s.min())} ({s.idxmin()}) at {SIZE_TEXT[n]}, against pi_0's "
                     f"{f2(pi0(root, 'car', n))}")
    return "; ".join(parts)


FEATURE_MAPS = R + "feature_maps_greedy.txt"


@block("bigger-feature-maps", sources=[FEATURE_MAPS])
def _feature_maps(root: Path) -> str:
    """The loss of the greedy step of v*'s projection on each map, on both domains."""
    rows = [cells(ln)
            for ln in table_after(root, FEATURE_MAPS, "| model |").splitlines()]
    t = pd.DataFrame(rows[2:], columns=rows[0]).set_index("model")
    maps = [c for c in t.columns if c not in ("n_states", "pi_0")]
    g, c = t.loc["grid world"].astype(float), t.loc["mountain car"].astype(float)
    first = ", ".join(f"{g[m]:.1f} ({m})" for m in maps[:-1]) + f" and {g[maps[-1]]:.1f} " \
        f"({maps[-1]})"
    return (f"{first} on the grid world (pi_0: {g['pi_0']:.1f}), and "
            + listing([f"{c[m]:.1f}" for m in maps]) + f" on the mountain car (pi_0: "
            f"{c['pi_0']:.1f})")


BUILD = R + "bench_bigger_build.txt"


@block("bigger-build", sources=[BUILD])
def _build(root: Path) -> str:
    """CPU seconds of building each domain and of its v*, at 10^6 and 10^5 states."""
    rows = {(name, int(side)): (int(states), float(build), float(vstar))
            for name, side, states, build, vstar in re.findall(
                r"^\| (grid world|mountain car) (\d+) x \d+ \| (\d+) \| ([\d.]+) \| [\d.]+ \| "
                r"([\d.]+) \|", read_text(root, BUILD), re.MULTILINE)}
    try:
        g6, c6 = rows["grid world", 1000], rows["mountain car", 1000]
        g5, c5 = rows["grid world", 316], rows["mountain car", 316]
    except KeyError as missing:
        raise ValueError(f"{BUILD} has no row for {missing}") from None
    return (f"building 10^6 states took {g6[1]:.1f} CPU s (grid world, {num(g6[0], 0)} free "
            f"cells) and {c6[1]:.1f} CPU s (mountain car); v* took {g6[2]:.0f} and {c6[2]:.0f} "
            f"CPU s there, {g5[2]:.1f} and {c5[2]:.1f} at 10^5 states")
