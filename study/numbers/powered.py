"""Values of docs/bigger.md about the powered family (``nsrl reproduce --preset bigger-powered``).

The **projection** of its cost is generated now, from the committed run of the ``bigger``
family (``docs/bigger/full_run/*/sessions.jsonl``: each shard's CPU seconds for the 7
schemes x 10 iterations x 1 run) and the registered family's design: a powered shard is the
same (domain, operator, size) shard with ``ITERATIONS / 10`` times the iterations and 9/7 times
the schemes. The model is linear in scheme-iterations and so an over-estimate where a shard's
fixed part (building the model, v*) is not negligible, or where CPI+ stops calling the
operator; it does not include the analysis' pi_0 losses (one evaluation per exact unit).

The **results** renderers (:func:`intervals_table`, :func:`carry_over_table`) read a results
folder of the family; they are registered as blocks once the run is committed (the paths
in :data:`POWERED_DIR`).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from nsrl.experiments.bigger import inference, powered
from study.numbers.bigger import DOMAINS, SB3_1E6, SESSIONS, pi0, shard_events
from study.numbers.registry import block
from study.numbers.sources import num, read_csv, read_text

POWERED_DIR = "docs/bigger/powered_run/"
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


def intervals_table(root: Path, folder: str = POWERED_DIR, name: str = "bigger-powered",
                    domain: str = "grid", size: str = "1e4") -> str:
    """Final mean loss with its 95% t-interval, one column per operator, for a domain and size."""
    iv = read_csv(root, f"{folder}{name}_intervals.csv")
    part = iv[iv["variant"].str.endswith(f"-{size}") & (iv["domain"] == domain)].copy()
    part["cell"] = [f"{m:.2f} [{lo:.2f}, {hi:.2f}]" for m, lo, hi in
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
