"""Values of docs/bigger.md about the powered family (``nsrl reproduce --preset bigger-powered``).

The **projection** of its cost is generated now, from the committed run of the ``bigger``
family (``docs/bigger/full_run/*/sessions.jsonl``: each shard's CPU seconds for the 7
schemes x 10 iterations x 1 run) and the registered family's design: a powered shard is the
same (domain, operator, size) shard with ``ITERATIONS / 10`` times the iterations and 9/7 times
the schemes. The model is linear in scheme-iterations and so an over-estimate where a shard's
fixed part (building the model, v*) is not negligible, or where CPI+ stops calling the
operator; it does not include the analysis' pi_0 losses (one evaluation per exact unit).

The **results** renderers (:func:`intervals_table`, :func:`carry_over_table`, the status,
flatness and comparison blocks) read the committed run in :data:`POWERED_DIR`: the variants
complete so far, each a results folder of the runner, the family's analysis over them
(``bigger-powered_*.csv``) and ``provenance.toml`` (the commit that computed each variant).
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import pandas as pd

from nsrl.experiments.bigger import inference, powered
from study.numbers.bigger import DOMAINS, SB3_1E6, SESSIONS, pi0, shard_events
from study.numbers.registry import block
from study.numbers.sources import listing, num, read_csv, read_text

POWERED_DIR = "docs/bigger/powered_run/"
PROVENANCE = POWERED_DIR + "provenance.toml"
ANALYSIS = [f"{POWERED_DIR}bigger-powered_{k}.csv"
            for k in ("intervals", "comparisons", "flatness", "observations")]
GARNETS = "docs/paper/observations.csv"
EFFICIENCY = 0.76  # measured on the bigger family's run on 2 workers (bigger-run-efficiency)
DASK_EFFICIENCY = 0.8  # the allowance of the bigger family's Dask projection
BASE_SCHEMES, BASE_ITERATIONS = 7, 10


def projection(root: Path) -> pd.DataFrame:
    """One row per variant of ``bigger-powered``: units, projected CPU s per shard and in all."""
    ev = shard_events(root)
    per_shard = ev.groupby(["dom", "op", "n"])["cpu"].mean()
    fam = powered.EXPERIMENT
    rows = []
    for variant, sweep in fam.sweeps().items():
        dom, op = variant.split("-")[:2]
        n = sweep.n_states[0]
        scale = (sweep.n_iterations / BASE_ITERATIONS) * (len(sweep.schemes) / BASE_SCHEMES)
        shard = float(per_shard[(dom, op, n)]) * scale
        rows.append({"variant": variant, "dom": dom, "op": op, "n": n, "units": sweep.n_mdps,
                     "shard_cpu": shard, "cpu": shard * sweep.n_mdps})
    return pd.DataFrame(rows)


def wall(table: pd.DataFrame, workers: int, efficiency: float) -> float:
    """Projected wall seconds: variants one after the other, each in waves of ``workers``."""
    return float(sum(math.ceil(r.units / workers) * r.shard_cpu / efficiency
                     for r in table.itertuples()))


@block("powered-projection", sources=SESSIONS)
def _projection(root: Path) -> str:
    t = projection(root)
    cpu_h = t["cpu"].sum() / 3600
    two = wall(t, 2, EFFICIENCY) / 3600
    dask = wall(t, int(t["units"].max()), DASK_EFFICIENCY) / 3600
    longest = t.loc[t["shard_cpu"].idxmax()]
    by_size = t.groupby("n")["cpu"].sum() / 3600
    return (f"**{cpu_h:.1f} CPU-hours** ({by_size[10_000]:.1f} at 10^4, "
            f"{by_size[100_000]:.1f} at 10^5); **about {two:.0f} hours on 2 cores** "
            f"(efficiency {EFFICIENCY}); on Dask **about {dask:.1f} hours with "
            f"{int(t['units'].max())} workers or more**: the runner takes the variants one "
            f"after another, so the wall is the sum of each variant's longest shard "
            f"(efficiency {DASK_EFFICIENCY}), the longest being {longest['variant']} "
            f"({num(longest['shard_cpu'], 0)} CPU s)")


@block("powered-projection-table", sources=SESSIONS)
def _projection_table(root: Path) -> str:
    t = projection(root)
    lines = ["| variant | units | CPU s per shard | CPU s in all |", "|---|---|---|---|"]
    lines += [f"| {r.variant} | {r.units} | {num(r.shard_cpu, 0)} | {num(r.cpu, 0)} |"
              for r in t.itertuples()]
    return "\n".join(lines)


def f2(x: float) -> str:
    """``x`` with two decimals, without the sign of a zero (v*'s certified error is +-1e-9)."""
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text


def intervals_table(root: Path, folder: str = POWERED_DIR, name: str = "bigger-powered",
                    domain: str = "grid", size: str = "1e4") -> str:
    """Final mean loss with its 95% t-interval, one column per operator, for a domain and size."""
    iv = read_csv(root, f"{folder}{name}_intervals.csv")
    part = iv[iv["variant"].str.endswith(f"-{size}") & (iv["domain"] == domain)].copy()
    if part.empty:
        raise ValueError(f"{folder}{name}_intervals.csv has no {domain} variant at {size}")
    part["cell"] = [f"{f2(m)} [{f2(lo)}, {f2(hi)}]" for m, lo, hi in
                    zip(part["mean"], part["low"], part["high"], strict=True)]
    wide = part.pivot_table(index="scheme", columns="operator", values="cell", aggfunc="first")
    cols = [c for c in powered.OPERATORS if c in wide.columns]
    lines = [f"| scheme ({DOMAINS[domain]}, {size}) | " + " | ".join(cols) + " |",
             "|---" * (len(cols) + 1) + "|"]
    lines += [f"| {s} | " + " | ".join(wide.loc[s, cols]) + " |" for s in wide.index]
    return "\n".join(lines)


def carry_over_table(root: Path, folder: str = POWERED_DIR, name: str = "bigger-powered",
                     operator: str = "exact") -> str:
    """Which observations carry over from Garnets to each domain (one operator), with evidence."""
    obs = read_csv(root, f"{folder}{name}_observations.csv")
    obs["holds"] = obs["holds"].astype(object).where(obs["holds"].notna(), None)
    domains = {DOMAINS[d]: part for d, part in obs[obs["operator"] == operator]
               .groupby("domain", sort=False)}
    table = inference.carry_over(read_csv(root, GARNETS), domains)
    cols = ["observation", "Garnets", *domains, "carries over", "evidence"]
    lines = ["| " + " | ".join(cols) + " |", "|---" * len(cols) + "|"]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for _, r in table.iterrows()]
    return "\n".join(lines)


PROBES = {dom: f"benchmarks/results/powered_iterations_{dom}.txt" for dom in DOMAINS}


def probe(root: Path, dom: str) -> pd.DataFrame:
    """The iteration probe's losses (iteration x scheme) on MDP 0 of ``dom`` at 10^4 states."""
    lines = read_text(root, PROBES[dom]).splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("scheme"))
    schemes = lines[head].split()[1:]
    rows = {int(ln.split()[0]): [float(x) for x in ln.split()[1:]]
            for ln in lines[head + 2:] if ln.strip()}
    return pd.DataFrame.from_dict(rows, orient="index", columns=schemes)


@block("powered-iterations", sources=[*PROBES.values(), SB3_1E6])
def _iterations(root: Path) -> str:
    parts = []
    for dom in DOMAINS:
        p, scale = probe(root, dom)["PSDP"], pi0(root, dom, 10_000)
        pct = {k: 100 * p[k] / scale for k in (50, 100)}
        moved = {k: 100 * (p[round(0.9 * k)] - p[k]) / scale for k in (50, 100)}
        parts.append(f"on the {DOMAINS[dom]} PSDP's loss is {pct[50]:.1f}% of pi_0's at "
                     f"iteration 50 and {pct[100]:.1f}% at 100, its last 10% of iterations "
                     f"moving it by {moved[50]:.2f}% and {moved[100]:.2f}% of pi_0's loss")
    return "; ".join(parts)


def committed(root: Path) -> pd.DataFrame:
    """One row per variant of the family: units, whether committed, its shards' CPU seconds."""
    prov = tomllib.loads(read_text(root, PROVENANCE))
    table = projection(root).set_index("variant")
    rows = []
    for variant, r in table.iterrows():
        sessions = f"{POWERED_DIR}{variant}/sessions.jsonl"  # read_text names a missing file
        cpu = [e["cpu_seconds"] for e in map(json.loads, read_text(root, sessions).splitlines())
               if e["event"] == "shard"] if variant in prov else []
        if variant in prov and len(cpu) < r["units"]:
            raise ValueError(f"{POWERED_DIR}{variant}: {len(cpu)} shards of {r['units']}")
        rows.append({"variant": variant, "units": int(r["units"]), "done": variant in prov,
                     "commit": prov.get(variant, ""), "cpu": float(sum(cpu)),
                     "projected": float(r["cpu"])})
    return pd.DataFrame(rows)


@block("powered-status", sources=[PROVENANCE])
def _status(root: Path) -> str:
    c = committed(root)
    done = c[c["done"]]
    return (f"{len(done)} of {len(c)} variants ({listing(list(done['variant']))}; "
            f"{int(done['units'].sum())} units, {done['cpu'].sum() / 3600:.1f} CPU-hours)")


@block("powered-cost-table", sources=[PROVENANCE])
def _cost_table(root: Path) -> str:
    c = committed(root)
    lines = ["| variant | units | CPU s, measured | CPU s, projected | measured / projected "
             "| commit |", "|---|---:|---:|---:|---:|---|"]
    for r in c.itertuples():
        measured = num(r.cpu, 0) if r.done else "not run yet"
        ratio = f"{r.cpu / r.projected:.2f}" if r.done else ""
        lines.append(f"| {r.variant} | {r.units} | {measured} | {num(r.projected, 0)} | "
                     f"{ratio} | {r.commit} |")
    return "\n".join(lines)


@block("powered-flatness", sources=ANALYSIS)
def _flatness(root: Path) -> str:
    f = read_csv(root, ANALYSIS[2])
    worst = f.loc[f["relative"].idxmax()]
    moved = f[~f["flat"]].groupby("scheme").size().sort_values(ascending=False)
    return (f"{int(f['flat'].sum())} of {len(f)} exact-operator curves are flat by the criterion; "
            f"not flat: {listing([f'{s} on {k} of the units' for s, k in moved.items()])}; "
            f"the least flat, {worst['scheme']} on {worst['variant']} unit {int(worst['mdp'])}, "
            f"moved by {100 * worst['relative']:.2f}% of pi_0's loss over its last "
            f"{int(worst['iterations'] - worst['window'])} iterations")


@block("powered-intervals-grid-1e4", sources=ANALYSIS)
def _intervals_grid_1e4(root: Path) -> str:
    return intervals_table(root, domain="grid", size="1e4")


@block("powered-significant", sources=ANALYSIS)
def _significant(root: Path) -> str:
    c = read_csv(root, ANALYSIS[1])
    parts = [f"{variant}: {int(g['significant'].sum())} of {len(g)}"
             for variant, g in c.groupby("variant", sort=False)]
    return listing(parts)


@block("powered-carry-over-exact", sources=[*ANALYSIS, GARNETS])
def _carry_exact(root: Path) -> str:
    return carry_over_table(root, operator="exact")


@block("powered-carry-over-projected", sources=[*ANALYSIS, GARNETS])
def _carry_projected(root: Path) -> str:
    return carry_over_table(root, operator="projected")


@block("powered-carry-over-lstdq", sources=[*ANALYSIS, GARNETS])
def _carry_lstdq(root: Path) -> str:
    return carry_over_table(root, operator="lstdq")


@block("powered-pi0-grid-1e4", sources=[POWERED_DIR + "bigger-powered_pi0.csv"])
def _pi0_grid_1e4(root: Path) -> str:
    p = read_csv(root, POWERED_DIR + "bigger-powered_pi0.csv")
    loss = p[(p["domain"] == "grid") & (p["n_states"] == 10_000)]["pi0"]
    return f"{loss.mean():.1f} on average over them ({loss.min():.1f} to {loss.max():.1f})"


SHARD_BENCH = "benchmarks/results/bench_powered_shard_lstdq_1e5.txt"


@block("powered-lstdq-speedup", sources=[SHARD_BENCH])
def _lstdq_speedup(root: Path) -> str:
    rows = {}
    for line in read_text(root, SHARD_BENCH).splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) == 6 and cells[1].replace(".", "").isdigit():
            rows[cells[0]] = cells
    total = rows.pop("all")
    if not all(r[5] == "True" for r in rows.values()):
        raise ValueError(f"{SHARD_BENCH}: a scheme's final loss differs from before's")
    ranked = sorted(rows.values(), key=lambda r: -float(r[3]))
    level = [r for r in ranked if float(r[3]) < 1.1]
    return (f"{total[1]} CPU s before and {total[2]} today over the {len(rows)} schemes "
            f"({total[3]}x), every final loss equal to 1e-12; most for "
            + listing([f"{r[0]} ({r[3]}x)" for r in ranked[:3]])
            + (f"; no gain for {listing([f'{r[0]} ({r[3]}x)' for r in level])}, whose "
               f"targets are new mixtures at every call (their X_pi is computed as before)"
               if level else ""))
