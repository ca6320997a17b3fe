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
committed, each a results folder of the runner, the family's analysis over them
(``bigger-powered_*.csv``) and ``provenance.toml`` (the commit that computed each variant),
with ``benchmarks/results/check_provenance.txt`` (one unit of a variant rerun at it).

**The answer** (:func:`answer_table`, :func:`o6_table`, :func:`c_table` and the inline
readings) reads whatever variants are committed: each observation's differences with
their significance after Holm over the variant and over the family (``*``, ``**``), each
verdict with the clause that decides how firm it is (its margin and standard error,
``bigger-powered_margins.csv``), C on its own test (``bigger-powered_c.csv``), and the
claims of the prose that a rerun could move (the lowest scheme of a variant, the schemes
apart from API, the levels and spreads of the units, where each observation holds) as
per-variant or per-observation blocks, so that a rerun rewrites them with the data.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats as st

from nsrl.experiments.bigger import inference, powered
from study.numbers.bigger import (
    DOMAINS,
    OPERATORS,
    SB3_1E6,
    SESSIONS,
    at_budget,
    pi0,
    shard_events,
)
from study.numbers.registry import block
from study.numbers.sources import cells, listing, md_table, num, read_csv, read_text, search

POWERED_DIR = "docs/bigger/powered_run/"
PROVENANCE = POWERED_DIR + "provenance.toml"
ANALYSIS = [f"{POWERED_DIR}bigger-powered_{k}.csv"
            for k in ("intervals", "comparisons", "flatness", "observations", "c", "margins",
                      "units")]
INTERVALS, COMPARISONS, FLATNESS, OBSERVATIONS, C_TESTS, MARGINS, UNITS = ANALYSIS
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
            f"{int(t['units'].max())} workers or more**: the runner then took the variants one "
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
    iv = read_csv(root, f"{folder}{name}_intervals.csv")
    sizes = {d: ", ".join(powered.size_label(int(n)) for n in sorted(part["n_states"].unique()))
             for d, part in iv[iv["operator"] == operator].groupby("domain")}
    domains = {f"{DOMAINS[d]} ({sizes[d]})": part for d, part in
               obs[obs["operator"] == operator].groupby("domain", sort=False)}
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


@block("powered-provenance", sources=[PROVENANCE])
def _provenance(root: Path) -> str:
    prov = tomllib.loads(read_text(root, PROVENANCE))
    by_commit: dict[str, list[str]] = {}
    for variant, commit in prov.items():
        by_commit.setdefault(commit, []).append(variant)
    return "; ".join(f"{commit} for {listing(variants)}" for commit, variants in by_commit.items())


CHECK = "benchmarks/results/check_provenance.txt"


def provenance_checks(root: Path) -> pd.DataFrame:
    """The rows of check_provenance.py's output: one per variant (and commit) rerun."""
    rows = []
    for line in read_text(root, CHECK).splitlines():
        row = cells(line)
        if line.startswith("|") and len(row) == 9 and row[0] != "variant" and \
                not row[0].startswith("-"):
            rows.append({"variant": row[0], "commit": row[1], "schemes": row[2],
                         "cpu": float(row[3]), "max": float(row[4]),
                         "median": float(row[5]), "verdict": row[8]})
    if not rows:
        raise ValueError(f"{CHECK} holds no row of benchmarks/check_provenance.py's table")
    return pd.DataFrame(rows)


@block("powered-provenance-check", sources=[CHECK, PROVENANCE])
def _provenance_check(root: Path) -> str:
    t = provenance_checks(root)
    prov = tomllib.loads(read_text(root, PROVENANCE))
    named = t[[prov.get(v) == c for v, c in zip(t["variant"], t["commit"], strict=True)]]
    other = t.drop(named.index)
    parts = []
    same = named[named["verdict"] == "round-off"]
    if len(same):
        parts.append(f"unit 0 of {listing(list(same['variant']))} agrees with its committed "
                     f"shard to round-off at the commit named (the largest difference of a "
                     f"loss {same['max'].max():.1g}, the median difference at most "
                     f"{same['median'].max():.1g})")
    exact = list(named[named["verdict"] == "bitwise"]["variant"])
    if exact:
        parts.append(f"bit for bit: {listing(exact)}")
    apart = named[named["verdict"] == "differs"]
    for r in apart.itertuples():
        parts.append(f"{r.variant}'s differs (largest difference {r.max:.2g}, median "
                     f"{r.median:.2g})")
    for r in other.itertuples():
        parts.append(f"rerun at another commit, {r.commit}, {r.variant} "
                     + ("agrees to round-off" if r.verdict != "differs" else
                        f"differs (median difference {r.median:.1g}, largest {r.max:.1g})"))
    cpu = ", ".join(f"{r.variant} {r.cpu:.0f}" for r in named.itertuples())
    left = committed(root)
    left = left[left["done"] & ~left["variant"].isin(named["variant"])]
    text = "; ".join(parts) + f" (CPU s per unit: {cpu})"
    if len(left):
        text += "; not rerun: " + listing([f"{r.variant} ({num(r.cpu / r.units, 0)} CPU s a "
                                           f"unit in the run)" for r in left.itertuples()])
    return text


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


@block("powered-cost-ratio", sources=[PROVENANCE, *SESSIONS])
def _cost_ratio(root: Path) -> str:
    t = committed(root)
    done, left = t[t["done"]], t[~t["done"]]
    ratio = done["cpu"].sum() / done["projected"].sum()
    share = done["cpu"] / done["projected"]
    operator = t["variant"].str.split("-").str[1]  # dom-op-size
    by_op = done["cpu"].groupby(operator).sum() / done["projected"].groupby(operator).sum()
    ahead = (left["projected"] * operator[left.index].map(by_op).fillna(ratio)).sum()
    run = "run so far" if len(left) else "of the family"
    text = (f"the {len(done)} variants {run} took {share.min():.2f} to {share.max():.2f} "
            f"of their projection ({ratio:.2f} of it in all: {done['cpu'].sum() / 3600:.1f} "
            f"CPU-hours)")
    if left.empty:
        return text
    which = "the variant left" if len(left) == 1 else f"the {len(left)} variants left"
    return (f"{text}; scaled by the ratio measured with the same operator, {which} would take "
            f"about {ahead / 3600:.0f} CPU-hours (an estimate: an operator's ratio moves with "
            f"the size)")


ROLLOUT_PROFILE = "benchmarks/results/profile_bigger_grid-rollout-1e4_10000.txt"


def profile_share(root: Path, rel: str, part: str) -> str:
    """The share ("91%") of a part of a shard's profile (``profile_bigger_shard.py``'s table)."""
    return search(root, rel, r"^\|\s+" + re.escape(part) + r".*\| (\d+%) \|$")[1]


@block("powered-rollout-profile", sources=[ROLLOUT_PROFILE])
def _rollout_profile(root: Path) -> str:
    """Where a rollouts + CSC shard's time goes: the classifier's fits against the rest."""
    def share(part: str) -> str:
        return profile_share(root, ROLLOUT_PROFILE, part)
    head = search(root, ROLLOUT_PROFILE, r"^# Profile of .*: (\d+) iterations .*, (\d+) schemes$")
    cpu = search(root, ROLLOUT_PROFILE, r"^shard: ([\d.]+) CPU s")[1]
    # cProfile's ncalls of scipy's L-BFGS driver (one per fit) and of the loss's gradient
    fits = search(root, ROLLOUT_PROFILE,
                  r"^\s+(\d+)\s.*/_lbfgsb_py\.py:\d+\(_minimize_lbfgsb\)$")[1]
    iters = search(root, ROLLOUT_PROFILE,
                   r"^\s+(\d+)\s.*/_linear_loss\.py:\d+\(loss_gradient\)$")[1]
    return (f"{head[2]} schemes x {head[1]} iterations, {cpu} CPU s: the classifier's fits "
            f"{share('the classifier')}, {fits} L-BFGS fits of about "
            f"{int(iters) / int(fits):.0f} gradient evaluations each, the rollouts "
            f"themselves {share('rollouts (sampler')}, the exact loss of each iteration "
            f"{share('exact loss')}")


@block("powered-flatness", sources=ANALYSIS)
def _flatness(root: Path) -> str:
    f = read_csv(root, FLATNESS)
    worst = f.loc[f["relative"].idxmax()]
    moved = f[~f["flat"]].groupby("scheme").size().sort_values(ascending=False)
    return (f"{int(f['flat'].sum())} of {len(f)} exact-operator curves are flat by the criterion; "
            f"not flat: {listing([f'{s} on {k} of the units' for s, k in moved.items()])}; "
            f"the least flat, {worst['scheme']} on {worst['variant']} unit {int(worst['mdp'])}, "
            f"moved by {100 * worst['relative']:.2f}% of pi_0's loss over its last "
            f"{int(worst['iterations'] - worst['window'])} iterations")


def not_flat(root: Path) -> str:
    """Every curve that is not flat, by scheme and variant, and which way it still moves."""
    f = read_csv(root, FLATNESS)
    bad = f[~f["flat"]]
    if bad.empty:
        return "none"
    parts = []
    for (scheme, variant), part in bad.groupby(["scheme", "variant"], sort=False):
        units = [str(int(u)) for u in sorted(part["mdp"])]
        parts.append(f"{scheme} on {variant} unit{'s' if len(units) > 1 else ''} "
                     f"{listing(units)}")
    falling = bool((bad["change"] < 0).all())
    rising = bad[bad["change"] >= 0]
    way = ("each still falling at iteration "
           f"{int(bad['iterations'].max())}" if falling else
           "falling but for " + listing([f"{r.scheme} on {r.variant} unit {int(r.mdp)}"
                                         for r in rising.itertuples()]))
    return f"{listing(parts)} ({way})"


@block("powered-not-flat", sources=[FLATNESS])
def _not_flat(root: Path) -> str:
    return not_flat(root)


def significance_counts(root: Path) -> pd.DataFrame:
    """Per variant: pairs, significant after Holm per variant, and over the whole family."""
    c = read_csv(root, COMPARISONS)
    return c.groupby("variant", sort=False).agg(
        pairs=("significant", "size"), variant_holm=("significant", "sum"),
        family_holm=("significant_family", "sum")).reset_index()


@block("powered-significant", sources=[COMPARISONS])
def _significant(root: Path) -> str:
    t = significance_counts(root)
    rows = [[r.variant, str(r.pairs), str(r.variant_holm), str(r.family_holm)]
            for r in t.itertuples()]
    rows.append(["all", str(t["pairs"].sum()), str(t["variant_holm"].sum()),
                 str(t["family_holm"].sum())])
    return md_table(["variant", "pairs", "significant, Holm over the variant's pairs",
                     "significant, Holm over the family's pairs"], rows, "lrrr")


@block("powered-family-tests", sources=[COMPARISONS])
def _family_tests(root: Path) -> str:
    return str(int(significance_counts(root)["pairs"].sum()))


@block("powered-family-holm", sources=[COMPARISONS])
def _family_holm(root: Path) -> str:
    t = significance_counts(root)
    lost = t[(t["variant_holm"] > 0) & (t["family_holm"] == 0)]["variant"].tolist()
    kept = t[(t["family_holm"] == t["variant_holm"]) & (t["variant_holm"] > 0)]["variant"]
    text = (f"of the {int(t['variant_holm'].sum())} pairs significant after Holm over their "
            f"variant's, {int(t['family_holm'].sum())} remain after Holm over the family's "
            f"{int(t['pairs'].sum())}")
    if lost:
        text += f"; every significant pair of {listing(lost)} drops out"
    if len(kept):
        text += f"; every one of {listing(list(kept))} remains"
    return text


@block("powered-carry-over-exact", sources=[*ANALYSIS, GARNETS])
def _carry_exact(root: Path) -> str:
    return carry_over_table(root, operator="exact")


@block("powered-carry-over-projected", sources=[*ANALYSIS, GARNETS])
def _carry_projected(root: Path) -> str:
    return carry_over_table(root, operator="projected")


@block("powered-carry-over-lstdq", sources=[*ANALYSIS, GARNETS])
def _carry_lstdq(root: Path) -> str:
    return carry_over_table(root, operator="lstdq")


@block("powered-carry-over-rollout", sources=[*ANALYSIS, GARNETS])
def _carry_rollout(root: Path) -> str:
    return carry_over_table(root, operator="rollout")


def pi0_text(root: Path, dom: str, n: int) -> str:
    """pi_0's mean loss over a domain's units at ``n`` states, with its range."""
    p = read_csv(root, POWERED_DIR + "bigger-powered_pi0.csv")
    loss = p[(p["domain"] == dom) & (p["n_states"] == n)]["pi0"]
    if loss.empty:
        raise ValueError(f"{POWERED_DIR}bigger-powered_pi0.csv has no {dom} unit at {n} states")
    if loss.max() - loss.min() < 0.05:  # one model (the car): one value
        return f"{loss.mean():.1f}"
    return f"{loss.mean():.1f} on average over them ({loss.min():.1f} to {loss.max():.1f})"


NEAR = 0.05  # "near the optimum": a final loss below this fraction of pi_0's
SPLIT = 0.5  # a scheme whose units spread over more than this fraction of pi_0's loss


def spread_text(root: Path, variant: str) -> str:
    """The schemes of ``variant`` whose units end far apart, as fractions of pi_0's loss.

    Those whose final losses over the units spread over more than :data:`SPLIT` of pi_0's
    loss, each with its range, and which of them end near the optimum (below :data:`NEAR`
    of pi_0's loss; the optimum's loss is 0) on some unit.
    """
    u = read_csv(root, UNITS)
    part = u[u["variant"] == variant]
    if part.empty:
        raise ValueError(f"{UNITS} has no unit of {variant}")
    dom, n = part["domain"].iloc[0], int(part["n_states"].iloc[0])
    p = read_csv(root, POWERED_DIR + "bigger-powered_pi0.csv")
    p = p[(p["domain"] == dom) & (p["n_states"] == n)].set_index("mdp")["pi0"]
    # each grid world unit is an MDP of its own; the car's are run seeds on its one model,
    # whose pi_0 loss the exact variant's units give (a unit beyond them: the same model)
    scale = part["mdp"].map(p).fillna(p.mean()).to_numpy()
    share = (part.assign(loss=part["loss"] / scale)
             .groupby("scheme", sort=True)["loss"].agg(["min", "max"]))
    wide = share[share["max"] - share["min"] > SPLIT].sort_values("min")
    if wide.empty:
        return f"no scheme's units spread over more than {SPLIT:.0%} of pi_0's loss"
    near = share[share["min"] < NEAR].index.tolist()
    return (listing([f"{s} from {r['min']:.0%} to {r['max']:.0%}" for s, r in wide.iterrows()])
            + f" of pi_0's loss over the units; below {NEAR:.0%} of it (near the optimum) "
            + f"on some unit: {listing(near) if near else 'none'}")


def _register_per_variant() -> None:
    """Per committed variant: how far apart its schemes' units end (optional blocks)."""
    for variant in powered.EXPERIMENT.sweeps():
        def text(root: Path, variant: str = variant) -> str:
            return spread_text(root, variant)
        block(f"powered-spread.{variant}", sources=[UNITS], optional=True)(text)


_register_per_variant()


def _register_per_size() -> None:
    """The intervals table and pi_0's loss of each domain at each size (10^4, 10^5)."""
    for dom in DOMAINS:
        for size in ("1e4", "1e5"):
            def table(root: Path, dom: str = dom, size: str = size) -> str:
                return intervals_table(root, domain=dom, size=size)

            def loss(root: Path, dom: str = dom, size: str = size) -> str:
                return pi0_text(root, dom, int(float(size)))
            block(f"powered-intervals-{dom}-{size}", sources=ANALYSIS)(table)
            block(f"powered-pi0-{dom}-{size}",
                  sources=[POWERED_DIR + "bigger-powered_pi0.csv"])(loss)


_register_per_size()

SHARD_BENCH = "benchmarks/results/bench_powered_shard_lstdq_1e5.txt"


def shard_bench(root: Path, rel: str) -> tuple[list[str], dict[str, list[str]]]:
    """bench_powered_shard.py's output: (the "all" row, {scheme: its row}).

    Each row's cells: scheme, before, today, before / today, final loss, same loss; every
    scheme's loss must agree with before's.
    """
    rows = {}
    for line in read_text(root, rel).splitlines():
        row = cells(line)
        if line.startswith("|") and len(row) == 6 and row[1].replace(".", "").isdigit():
            rows[row[0]] = row
    total = rows.pop("all")
    if not all(r[5] == "True" for r in rows.values()):
        raise ValueError(f"{rel}: a scheme's final loss differs from before's")
    return total, rows


@block("powered-lstdq-speedup", sources=[SHARD_BENCH])
def _lstdq_speedup(root: Path) -> str:
    total, rows = shard_bench(root, SHARD_BENCH)
    ranked = sorted(rows.values(), key=lambda r: -float(r[3]))
    level = [r for r in ranked if float(r[3]) < 1.1]
    return (f"{total[1]} CPU s before and {total[2]} today over the {len(rows)} schemes "
            f"({total[3]}x), every final loss equal to 1e-12; most for "
            + listing([f"{r[0]} ({r[3]}x)" for r in ranked[:3]])
            + (f"; no gain for {listing([f'{r[0]} ({r[3]}x)' for r in level])}, whose "
               f"targets are new mixtures at every call (their X_pi is computed as before)"
               if level else ""))


SUPPORT_BENCH = {dom: f"benchmarks/results/bench_powered_shard_support_{dom}_1e5.txt"
                 for dom in DOMAINS}


@block("powered-lstdq-support-speedup", sources=list(SUPPORT_BENCH.values()))
def _support_speedup(root: Path) -> str:
    parts = []
    for dom, rel in SUPPORT_BENCH.items():
        total, rows = shard_bench(root, rel)
        ratios = [float(r[3]) for r in rows.values()]
        parts.append(f"on the {DOMAINS[dom]} {total[1]} CPU s before and {total[2]} today "
                     f"({total[3]}x; {min(ratios):.2f}x to {max(ratios):.2f}x by scheme)")
    return "; ".join(parts) + ", every final loss equal to 1e-12"


# ---------------------------------------------------------------------------------------
# SB3's DQN and PPO on the powered units, at the learners' transitions

SB3_POWERED = {size: f"benchmarks/results/powered_sb3_{size}.csv" for size in ("1e4", "1e5")}
LEARNERS = {"lstdq": "LSTD-Q", "rollout": "rollouts + CSC"}
SB3_BUDGET = 1e6  # the learners' first 10 iterations (10^5 transitions per greedy call)


def sb3_units(root: Path, rel: str = SB3_POWERED["1e4"],
              budget: float = SB3_BUDGET) -> pd.DataFrame:
    """Per (domain, algo, unit): the loss at the last checkpoint within ``budget``.

    With 1% slack; beside it pi_0's loss and the run's CPU seconds.
    """
    df = read_csv(root, rel)
    df = df[df["samples"] <= 1.01 * budget].sort_values("samples")
    return df.groupby(["domain", "algo", "unit"]).last().reset_index()


def scheme_units(root: Path, variant: str,
                 units: list[int]) -> dict[float | None, pd.DataFrame]:
    """unit x scheme losses of a committed variant on ``units``, each shard read once.

    Keyed by :data:`SB3_BUDGET` (at 10^6 transitions) and None (at the last iteration).
    """
    folder = Path(root) / POWERED_DIR / variant / "shards"
    out: dict[float | None, dict[int, pd.Series]] = {SB3_BUDGET: {}, None: {}}
    for unit in units:
        hits = sorted(folder.glob(f"*_m{unit:03d}.parquet"))
        if len(hits) != 1:
            raise FileNotFoundError(f"{POWERED_DIR}{variant}: expected one shard of unit "
                                    f"{unit}, found {len(hits)}; restore the variant")
        runs = pd.read_parquet(hits[0])
        out[None][unit] = runs.sort_values("iteration").groupby("scheme")["loss"].last()
        out[SB3_BUDGET][unit] = at_budget(runs, SB3_BUDGET)
    return {budget: pd.DataFrame(by_unit).T for budget, by_unit in out.items()}


def _cell(values) -> str:
    m, lo, hi = inference.interval(values)
    return f"{f2(m)} [{f2(lo)}, {f2(hi)}]"


def sb3_comparison(root: Path, size: str = "1e4"
                   ) -> tuple[list[list[str]], list[str], list[tuple]]:
    """The table's rows, the comparisons' sentences (Holm over all of them) and the tests.

    Each test: (domain, agent, operator, best scheme, agent minus scheme, Holm p).
    """
    sb3 = sb3_units(root, SB3_POWERED[size])
    units = sorted(sb3["unit"].unique())
    rows = [["pi_0", *(_cell(sb3[(sb3["domain"] == d) & (sb3["algo"] == "dqn")]["loss_pi0"])
                       for d in DOMAINS), ""]]
    per = {}
    for algo in ("ppo", "dqn"):
        part = {d: sb3[(sb3["domain"] == d) & (sb3["algo"] == algo)].set_index("unit")
                for d in DOMAINS}
        for d in DOMAINS:
            if sorted(part[d].index) != units:
                raise ValueError(f"{SB3_POWERED[size]}: {algo} on {d} has units "
                                 f"{sorted(part[d].index)}, expected {units}")
            per[(algo, d)] = part[d]["loss"]
        cpu = pd.concat([part[d]["cpu_s"] for d in DOMAINS])
        rows.append([f"SB3 {algo.upper()}, 10^6 transitions",
                     *(_cell(per[(algo, d)]) for d in DOMAINS),
                     f"{cpu.min():.0f}-{cpu.max():.0f} per run"])
    tests = []
    done = committed(root)
    done = set(done[done["done"]]["variant"])
    for op, what in LEARNERS.items():
        losses_of = {d: scheme_units(root, f"{d}-{op}-{size}", units)
                     for d in DOMAINS if f"{d}-{op}-{size}" in done}
        for budget, when in ((SB3_BUDGET, "10^6 transitions"),
                             (None, "end of the run")):
            cells = []
            for d in DOMAINS:
                if d not in losses_of:
                    cells.append("not run yet")
                    continue
                losses = losses_of[d][budget]
                best = losses.mean().idxmin()
                cells.append(f"{best}: {_cell(losses[best])}")
                if budget is not None:
                    per[(op, d)] = losses[best].rename(best)
            rows.append([f"best scheme + {what}, {when}", *cells, ""])
    for d in DOMAINS:
        for op in LEARNERS:
            if (op, d) not in per:
                continue
            best = per[(op, d)]
            for algo in ("ppo", "dqn"):
                agent = per[(algo, d)]
                if d == "grid":  # the same MDPs: paired
                    diff = agent.loc[best.index] - best
                    p = float(st.ttest_1samp(diff, 0.0).pvalue)
                    mean, low, high = inference.interval(diff.to_numpy())
                else:  # one model, independent seeds: Welch
                    test = st.ttest_ind(agent, best, equal_var=False)
                    p, mean = float(test.pvalue), float(agent.mean() - best.mean())
                    low, high = test.confidence_interval(inference.LEVEL)
                tests.append((d, algo, op, best.name, mean, float(low), float(high), p))
    adjusted = inference.holm([t[-1] for t in tests]) if tests else []
    sentences = [f"{DOMAINS[d]}: {algo.upper()} minus {best} with {LEARNERS[op]} "
                 f"{f2(m)} [{f2(lo)}, {f2(hi)}] (Holm p {q:.2g}"
                 f"{', significant' if q < 0.05 else ''})"
                 for (d, algo, op, best, m, lo, hi, _), q in zip(tests, adjusted, strict=True)]
    return rows, sentences, [(d, algo, op, best, m, q) for (d, algo, op, best, m, *_), q
                             in zip(tests, adjusted, strict=True)]


def sb3_reading(root: Path, size: str) -> str:
    """Each agent against each learner's best scheme in words: ahead, behind or neither."""
    tests = sb3_comparison(root, size)[2]
    parts = []
    for dom in DOMAINS:
        said = []
        for d, algo, op, best, m, q in tests:
            if d != dom:
                continue
            where = f"{best} with {LEARNERS[op]}"
            if q >= 0.05:
                said.append(f"{algo.upper()} not significantly apart from {where}")
            else:
                said.append(f"{algo.upper()} significantly {'behind' if m > 0 else 'ahead of'} "
                            f"{where}")
        if said:
            parts.append(f"on the {DOMAINS[dom]} {listing(said)}")
    return "; ".join(parts) if parts else "no learner's variant is committed at this size"


def sb3_table(root: Path, size: str) -> str:
    """The agents beside each learner's best scheme at ``size`` (``1e4``: 10^4 states)."""
    rows = sb3_comparison(root, size)[0]
    units = sb3_units(root, SB3_POWERED[size])["unit"].nunique()
    return md_table([f"10^{size[2:]} states, {units} units", *(DOMAINS[d] for d in DOMAINS),
                     "CPU s"], rows, "lllr")


@block("powered-sb3-1e4", sources=[SB3_POWERED["1e4"], PROVENANCE])
def _sb3_table(root: Path) -> str:
    return sb3_table(root, "1e4")


@block("powered-sb3-1e4-tests", sources=[SB3_POWERED["1e4"], PROVENANCE])
def _sb3_tests(root: Path) -> str:
    return "; ".join(sb3_comparison(root, "1e4")[1])


@block("powered-sb3-1e5", sources=[SB3_POWERED["1e5"], PROVENANCE])
def _sb3_table_1e5(root: Path) -> str:
    return sb3_table(root, "1e5")


@block("powered-sb3-1e4-reading", sources=[SB3_POWERED["1e4"], PROVENANCE])
def _sb3_reading_1e4(root: Path) -> str:
    return sb3_reading(root, "1e4")


@block("powered-sb3-1e5-reading", sources=[SB3_POWERED["1e5"], PROVENANCE])
def _sb3_reading_1e5(root: Path) -> str:
    return sb3_reading(root, "1e5")


@block("powered-sb3-1e5-tests", sources=[SB3_POWERED["1e5"], PROVENANCE])
def _sb3_tests_1e5(root: Path) -> str:
    tests = sb3_comparison(root, "1e5")[1]
    return "; ".join(tests) if tests else "none yet: no learner's 10^5 variant is committed"


# -- the answer, observation by observation ------------------------------------------------

# What each observation's table shows per (domain, size) and operator: a difference of final
# losses unit by unit (mean over the units with its 95% t-interval; "*" where the paired
# t-test is significant after Holm's correction over the variant's 36 pairs, "**" where it is
# after Holm's over the whole family's comparisons as well), or a rank.
ANSWER_CELLS = {
    "O1": "API's rank among the 9 schemes (1: lowest final loss) and API minus the "
          "highest other scheme",
    "O2": "CPI+ minus CPI(0.1)",
    "O3": "API(0.1) minus CPI(0.1)",
    "O4": "PSDP minus CPI(0.1), and PSDP's rank",
    "O5": "NSPI(30) minus PSDP, and NSPI(30) minus API",
}
SIZES = ("1e4", "1e5")


def paired(cmp: pd.DataFrame, a: str, b: str) -> str:
    """``a`` minus ``b`` unit by unit, with its interval ("*", "**": significant, the module)."""
    row = cmp[(cmp["a"] == a) & (cmp["b"] == b)]
    sign = 1.0
    if row.empty:
        row, sign = cmp[(cmp["a"] == b) & (cmp["b"] == a)], -1.0
    if len(row) != 1:
        raise ValueError(f"no single comparison of {a} and {b} in {COMPARISONS}")
    r = row.iloc[0]
    low, high = sorted((sign * r["low"], sign * r["high"]))
    star = ("**" if bool(r.get("significant_family", False)) else "*") \
        if bool(r["significant"]) else ""
    return f"{f2(sign * r['diff'])} [{f2(low)}, {f2(high)}]{star}"


def answer_cell(key: str, iv: pd.DataFrame, cmp: pd.DataFrame) -> str:
    """One (domain, size, operator) cell of observation ``key``'s table."""
    means = iv.set_index("scheme")["mean"]
    # ranked as shown (two decimals): v*'s certified error (+-1e-9) orders no tie
    rank = means.round(2).rank(method="min").astype(int)
    if key == "O1":
        top = means.drop("API").idxmax()
        return f"{rank['API']} of {len(means)}; minus {top}: {paired(cmp, 'API', top)}"
    if key == "O2":
        return paired(cmp, "CPI+", "CPI(0.1)")
    if key == "O3":
        return paired(cmp, "API(0.1)", "CPI(0.1)")
    if key == "O4":
        return f"{paired(cmp, 'PSDP', 'CPI(0.1)')}; rank {rank['PSDP']}"
    if key == "O5":
        return f"{paired(cmp, 'NSPI(30)', 'PSDP')}; {paired(cmp, 'NSPI(30)', 'API')}"
    raise ValueError(f"no answer table for {key!r}: expected one of {sorted(ANSWER_CELLS)}")


def clause_text(r) -> str:
    """A clause of :func:`nsrl.experiments.bigger.inference.margins` against its threshold.

    The statistic, the threshold, the distance to it (> 0: on the side that holds) and the
    statistic's standard error over the units.
    """
    x, limit, d, se = float(r["statistic"]), float(r["limit"]), float(r["distance"]), \
        float(r["se"])
    if r["kind"] == "p":
        return f"{r['clause']}: p = {x:.2g}, against {r['relation']} {limit:g}"
    if not np.isfinite(x):
        return f"{r['clause']}: not measured"
    if r["kind"] in ("fraction", "share"):
        return (f"{r['clause']} {100 * x:.2f}%, against {r['relation']} {100 * limit:g}%: "
                f"margin {100 * d:+.2f} pp, se {100 * se:.2f} pp")
    if r["kind"] == "loss" and abs(d) <= inference.TIE_ATOL:
        return (f"{r['clause']} {x:.1g}, against {r['relation']} {limit:g}: a tie (within "
                f"the solvers' {inference.TIE_ATOL:g})")
    value = f"{x:+.2f}" if r["kind"] == "loss" else f"{x:.3f}"
    margin = "" if limit == 0 else f" margin {d:+.3f},"
    return f"{r['clause']} {value}, against {r['relation']} {limit:g}:{margin} se {se:.2g}"


def verdict_cell(holds, clauses: pd.DataFrame) -> str:
    """The verdict, marked when on the edge, with the clause that decides how firm it is."""
    said = inference.verdict(holds)
    on_edge, row = inference.edge(clauses.reset_index(drop=True), holds)
    if row is None:
        return said
    return f"{said}{' (on the edge)' if on_edge else ''}: {clause_text(row)}"


def answer_table(root: Path, key: str) -> str:
    """Observation ``key`` in every (domain, size) and operator, then each domain's verdict."""
    iv, cmp = read_csv(root, INTERVALS), read_csv(root, COMPARISONS)
    obs, margins = read_csv(root, OBSERVATIONS), read_csv(root, MARGINS)
    ops = list(powered.OPERATORS)
    lines = [f"| {key}: {ANSWER_CELLS[key]} | " + " | ".join(OPERATORS[o] for o in ops) + " |",
             "|---" * (len(ops) + 1) + "|"]
    for dom in DOMAINS:
        for size in SIZES:
            cells = []
            for op in ops:
                variant = f"{dom}-{op}-{size}"
                part = iv[iv["variant"] == variant]
                cells.append(answer_cell(key, part, cmp[cmp["variant"] == variant])
                             if len(part) else "not run yet")
            lines.append(f"| {DOMAINS[dom]}, {size} | " + " | ".join(cells) + " |")
    for dom in DOMAINS:
        verdicts = []
        for op in ops:
            row = obs[(obs["domain"] == dom) & (obs["operator"] == op)
                      & (obs["observation"] == key)]
            clauses = margins[(margins["domain"] == dom) & (margins["operator"] == op)
                              & (margins["observation"] == key)]
            verdicts.append(verdict_cell(holds_of(row["holds"].iloc[0]), clauses)
                            if len(row) else "n/a")
        lines.append(f"| **{DOMAINS[dom]}: verdict** | " + " | ".join(verdicts) + " |")
    return "\n".join(lines)


def holds_of(value):
    """A ``holds`` cell read back from a CSV: True, False or None (not judged)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, str):
        return {"True": True, "False": False}.get(value)
    return bool(value)


def o6_table(root: Path) -> str:
    """O6's size clause per domain and operator, on both readings, with margins."""
    margins = read_csv(root, MARGINS)
    ops = list(powered.OPERATORS)
    readings = {"O6": "each size against all units (the preset's)",
                inference.DIRECT: "10^4 against 10^5 (direct)"}
    lines = ["| O6: Kendall tau of the schemes' rankings | "
             + " | ".join(OPERATORS[o] for o in ops) + " |", "|---" * (len(ops) + 1) + "|"]
    for dom in DOMAINS:
        for key, words in readings.items():
            cells = []
            for op in ops:
                c = margins[(margins["domain"] == dom) & (margins["operator"] == op)
                            & (margins["observation"] == key)]
                if c.empty:
                    cells.append("not judged (one size so far)")
                    continue
                r = c.iloc[0]
                on_edge, _ = inference.edge(c.reset_index(drop=True), bool(r["holds"]))
                cells.append(f"{r['statistic']:.3f}: {inference.verdict(bool(r['holds']))}"
                             f"{' (on the edge)' if on_edge else ''}; margin "
                             f"{r['distance']:+.3f}, se {r['se']:.3f}")
            lines.append(f"| {DOMAINS[dom]}, {words} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def c_cell(part: pd.DataFrame) -> str:
    """C's comparisons of one (domain, operator) at one size (or all units), in words."""
    if part.empty:
        return "not run yet"
    n, units = len(part), int(part["units"].iloc[0])
    if bool(part["testable"].iloc[0]):
        below = part[part["result"] == "below API"]["scheme"].tolist()
        others = [s for s in part["scheme"] if s not in below]
        return f"{len(below)} of {n}" + (f" (not: {', '.join(others)})"
                                         if 0 < len(below) < n else "")
    on_average = part[part["result"] == "not testable"]["scheme"].tolist()
    above = part[part["result"] == "not below API"]["scheme"].tolist()
    return (f"untestable on {units} units: {len(on_average)} of {n} below API on average"
            + (f"; above it: {', '.join(above)}" if above else ""))


def c_table(root: Path) -> str:
    """C's comparisons by domain and size (and all units), then each domain's verdict."""
    c, obs = read_csv(root, C_TESTS), read_csv(root, OBSERVATIONS)
    c["size"] = c["size"].astype(str)
    ops = list(powered.OPERATORS)
    level = inference.CRITERIA.level
    lines = [f"| C: of {', '.join(inference.C_SCHEMES)}, those below API (one-sided Wilcoxon, "
             f"p < {level:g}) | " + " | ".join(OPERATORS[o] for o in ops) + " |",
             "|---" * (len(ops) + 1) + "|"]
    for dom in DOMAINS:
        sizes = sorted({x for x in c[c["domain"] == dom]["size"] if x != "all"}, key=int)
        for size in [*sizes, "all"]:
            cells = [c_cell(c[(c["domain"] == dom) & (c["operator"] == op) & (c["size"] == size)])
                     for op in ops]
            label = "both sizes" if size == "all" else powered.size_label(int(size))
            lines.append(f"| {DOMAINS[dom]}, {label} | " + " | ".join(cells) + " |")
    for dom in DOMAINS:
        verdicts = []
        for op in ops:
            row = obs[(obs["domain"] == dom) & (obs["operator"] == op)
                      & (obs["observation"] == "C")]
            verdicts.append(inference.verdict(holds_of(row["holds"].iloc[0])) if len(row)
                            else "n/a")
        lines.append(f"| **{DOMAINS[dom]}: verdict** | " + " | ".join(verdicts) + " |")
    return "\n".join(lines)


def edges(root: Path) -> str:
    """Every verdict on the edge, named, with the clause and its margin."""
    obs, margins = read_csv(root, OBSERVATIONS), read_csv(root, MARGINS)
    found = []
    for (dom, op, key), clauses in margins.groupby(["domain", "operator", "observation"],
                                                   sort=False):
        row = obs[(obs["domain"] == dom) & (obs["operator"] == op) & (obs["observation"] == key)]
        holds = holds_of(row["holds"].iloc[0]) if len(row) else bool(clauses["holds"].all())
        on_edge, r = inference.edge(clauses.reset_index(drop=True), holds)
        if on_edge:
            found.append(f"{key} on the {DOMAINS[dom]} with {OPERATORS[op]} "
                         f"({inference.verdict(holds)}; {clause_text(r)})")
    return listing(found) if found else "none"


def verdicts_text(root: Path, key: str) -> str:
    """Where observation ``key`` holds (edges marked), by domain and operator, in words."""
    obs, margins = read_csv(root, OBSERVATIONS), read_csv(root, MARGINS)
    held, edged, judged = [], [], 0
    for dom in DOMAINS:
        for op in powered.OPERATORS:
            clauses = margins[(margins["domain"] == dom) & (margins["operator"] == op)
                              & (margins["observation"] == key)]
            row = obs[(obs["domain"] == dom) & (obs["operator"] == op)
                      & (obs["observation"] == key)]
            if key == inference.DIRECT:
                holds = bool(clauses["holds"].all()) if len(clauses) else None
            else:
                holds = holds_of(row["holds"].iloc[0]) if len(row) else None
            if holds is None:
                continue
            judged += 1
            on_edge = inference.edge(clauses.reset_index(drop=True), holds)[0]
            where = f"the {DOMAINS[dom]} with {OPERATORS[op]}"
            if holds:
                held.append(where + (" (on the edge)" if on_edge else ""))
            elif on_edge:
                edged.append(where)
    if not judged:
        return "it is not judged yet"
    text = (f"it holds in {len(held)} of the {judged} (domain, operator) cells"
            + (f": {listing(held)}" if held else ""))
    if edged:
        text += f"; it fails on the edge on {listing(edged)}"
    return text


def stars_text(root: Path, key: str) -> str:
    """The cells of observation ``key``'s table that are significant, by correction."""
    cmp = read_csv(root, COMPARISONS)
    pairs = {"O1": None, "O2": [("CPI+", "CPI(0.1)")], "O3": [("API(0.1)", "CPI(0.1)")],
             "O4": [("PSDP", "CPI(0.1)")], "O5": [("NSPI(30)", "PSDP"), ("NSPI(30)", "API")]}[key]
    family, variant_only = [], []
    iv = read_csv(root, INTERVALS)
    for dom in DOMAINS:
        for size in SIZES:
            for op in powered.OPERATORS:
                v = f"{dom}-{op}-{size}"
                c = cmp[cmp["variant"] == v]
                if c.empty:
                    continue
                todo = pairs
                if todo is None:  # O1: API against the highest other scheme
                    means = iv[iv["variant"] == v].set_index("scheme")["mean"]
                    todo = [("API", means.drop("API").idxmax())]
                for a, b in todo:
                    r = c[((c["a"] == a) & (c["b"] == b)) | ((c["a"] == b) & (c["b"] == a))]
                    if len(r) != 1 or not bool(r["significant"].iloc[0]):
                        continue
                    what = (f"{DOMAINS[dom]} {OPERATORS[op]} {size}"
                            + (f" ({a} minus {b})" if len(todo) > 1 else ""))
                    (family if bool(r["significant_family"].iloc[0]) else variant_only
                     ).append(what)
    return (f"significant over the family: {listing(family) if family else 'none'}; "
            f"per variant only: {listing(variant_only) if variant_only else 'none'}")


def lowest_text(root: Path, variant: str) -> str:
    """The lowest scheme of ``variant`` and the schemes significantly above it."""
    iv, cmp = read_csv(root, INTERVALS), read_csv(root, COMPARISONS)
    means = iv[iv["variant"] == variant].set_index("scheme")["mean"]
    if means.empty:
        raise ValueError(f"{INTERVALS} has no {variant}")
    best = means.idxmin()
    c = cmp[(cmp["variant"] == variant) & (cmp["better"] == best)]
    above = [b if a == best else a for a, b in zip(c["a"], c["b"], strict=True)]
    family = [b if a == best else a for a, b, f in
              zip(c["a"], c["b"], c["significant_family"], strict=True) if f]
    text = f"{best} ends lowest ({f2(means[best])})"
    if not above:
        return text + ", significantly below no scheme"
    return text + f", significantly below {listing(above)} ({family_words(family, len(above))})"


def family_words(family: list[str], of: int) -> str:
    """Which of ``of`` per-variant findings stay significant over the family, in words."""
    if family and len(family) == of:
        return "over the family too"
    return f"over the family: {listing(family)} only" if family else "per variant only"


def api_text(root: Path, variant: str) -> str:
    """The schemes significantly below and above API in ``variant``, per variant and family."""
    cmp = read_csv(root, COMPARISONS)
    c = cmp[(cmp["variant"] == variant) & cmp["significant"]
            & ((cmp["a"] == "API") | (cmp["b"] == "API"))]
    if cmp[cmp["variant"] == variant].empty:
        raise ValueError(f"{COMPARISONS} has no {variant}")
    other = [b if a == "API" else a for a, b in zip(c["a"], c["b"], strict=True)]
    c = c.assign(other=other)
    parts = []
    for side, rows in (("below", c[c["better"] != "API"]), ("above", c[c["better"] == "API"])):
        if rows.empty:
            continue
        fam = rows[rows["significant_family"]]["other"].tolist()
        parts.append(f"{listing(rows['other'].tolist())} significantly {side} API "
                     f"({family_words(fam, len(rows))})")
    return "; ".join(parts) if parts else "no scheme significantly apart from API"


def levels_text(root: Path, variant: str) -> str:
    """Each scheme's mean final loss as a share of pi_0's, lowest first."""
    iv = read_csv(root, INTERVALS)
    part = iv[iv["variant"] == variant]
    if part.empty:
        raise ValueError(f"{INTERVALS} has no {variant}")
    dom, n = part["domain"].iloc[0], int(part["n_states"].iloc[0])
    p = read_csv(root, POWERED_DIR + "bigger-powered_pi0.csv")
    scale = float(p[(p["domain"] == dom) & (p["n_states"] == n)]["pi0"].mean())
    share = (part.set_index("scheme")["mean"] / scale).sort_values()
    return ", ".join(f"{s} {x:.0%}" for s, x in share.items()) + " of pi_0's mean loss"


def clause_cells(root: Path, key: str, clause: str) -> str:
    """The (domain, operator) cells where one clause of observation ``key`` holds, in words."""
    m = read_csv(root, MARGINS)
    part = m[(m["observation"] == key) & (m["clause"] == clause)]
    if part.empty:
        raise ValueError(f"{MARGINS} has no clause {clause!r} of {key}")
    cells = [f"the {DOMAINS[r.domain]} with {OPERATORS[r.operator]}"
             for r in part.itertuples() if bool(r.holds)]
    return (f"in {len(cells) or 'none'} of the {len(part)} (domain, operator) cells"
            + (f" ({listing(cells)})" if 0 < len(cells) < len(part) else ""))


def summary_text(root: Path) -> str:
    """Each observation: in how many (domain, operator) cells it holds, beside Garnets'."""
    obs, margins = read_csv(root, OBSERVATIONS), read_csv(root, MARGINS)
    garnets = read_csv(root, GARNETS).set_index("observation")["holds"]
    parts = []
    for key in (*ANSWER_CELLS, "O6", inference.DIRECT, "C"):
        said = holds = edged = 0
        for (dom, op), clauses in margins.groupby(["domain", "operator"], sort=False):
            c = clauses[clauses["observation"] == key]
            row = obs[(obs["domain"] == dom) & (obs["operator"] == op)
                      & (obs["observation"] == key)]
            h = bool(c["holds"].all()) if key == inference.DIRECT else \
                (holds_of(row["holds"].iloc[0]) if len(row) else None)
            if h is None or (key == inference.DIRECT and c.empty):
                continue
            said += 1
            holds += h
            edged += inference.edge(c.reset_index(drop=True), h)[0]
        base = "O6" if key == inference.DIRECT else key
        name = "O6 on the direct tau" if key == inference.DIRECT else key
        parts.append(f"{name} {holds} of {said}"
                     + (f", {edged} verdict{'s' if edged > 1 else ''} on the edge"
                        if edged else "")
                     + (f" (Garnets: {inference.verdict(holds_of(garnets[base]))})"
                        if key != inference.DIRECT and base in garnets.index else ""))
    return "; ".join(parts)


def _register_answer() -> None:
    for key in ANSWER_CELLS:
        def table(root: Path, key: str = key) -> str:
            return answer_table(root, key)
        block(f"powered-answer-{key.lower()}", sources=ANALYSIS)(table)
    block("powered-answer-o6", sources=[MARGINS])(o6_table)
    block("powered-answer-c", sources=[C_TESTS, OBSERVATIONS])(c_table)
    block("powered-edges", sources=[MARGINS, OBSERVATIONS])(edges)
    block("powered-summary", sources=[MARGINS, OBSERVATIONS, GARNETS])(summary_text)
    block("powered-o1-spread-cells", sources=[MARGINS])(
        lambda root: clause_cells(root, "O1", "API significantly the most variable"))
    block("powered-o2-stopped-cells", sources=[MARGINS])(
        lambda root: clause_cells(root, "O2", "CPI+ stopped by k = 10"))
    for key in (*ANSWER_CELLS, "O6", inference.DIRECT, "C"):
        def said(root: Path, key: str = key) -> str:
            return verdicts_text(root, key)
        name = "o6-direct" if key == inference.DIRECT else key.lower()
        block(f"powered-verdicts.{name}", sources=[OBSERVATIONS, MARGINS], optional=True)(said)
    for key in ANSWER_CELLS:
        def stars(root: Path, key: str = key) -> str:
            return stars_text(root, key)
        block(f"powered-stars.{key.lower()}", sources=[COMPARISONS, INTERVALS],
              optional=True)(stars)
    for variant in powered.EXPERIMENT.sweeps():
        def lowest(root: Path, variant: str = variant) -> str:
            return lowest_text(root, variant)

        def api(root: Path, variant: str = variant) -> str:
            return api_text(root, variant)

        def levels(root: Path, variant: str = variant) -> str:
            return levels_text(root, variant)
        block(f"powered-lowest.{variant}", sources=[COMPARISONS, INTERVALS],
              optional=True)(lowest)
        block(f"powered-api.{variant}", sources=[COMPARISONS], optional=True)(api)
        block(f"powered-levels.{variant}", sources=[INTERVALS], optional=True)(levels)


_register_answer()
