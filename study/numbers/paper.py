"""Blocks that quote the full ``paper`` run committed in docs/paper/ (summary.md, manifest.json).

The section 5 observations are read one by one from the summary's tables with the criteria of
nsrl/experiments/observations.py ("close": final means within 10%). When the summary holds
the observation table (a run made after it was added), its verdicts are quoted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import listing, md_table, read_text, search, section_table

SUMMARY = "docs/paper/summary.md"
MANIFEST = "docs/paper/manifest.json"
CLOSE = 0.10


def final(root: Path) -> pd.DataFrame:
    """The summary's final-loss table, numbers as floats, indexed by scheme."""
    table = section_table(root, SUMMARY, "## Final loss (iteration 100)").set_index("scheme")
    return table.astype(float)


def conditioned(root: Path, factor: str) -> pd.DataFrame:
    """The final means conditioned on ``factor`` ('n_S', 'n_A' or 'b'), one column per value."""
    table = section_table(root, SUMMARY, f"## Final loss conditioned on {factor}")
    table = table.set_index("scheme")
    means = table[[c for c in table.columns if c.startswith("mean ")]].astype(float)
    return means.rename(columns=lambda c: c.split("=")[1])


def stopped(root: Path) -> pd.Series:
    """CPI+'s fraction of runs stopped by iteration k, indexed by 'k=..'."""
    table = section_table(root, SUMMARY, "## Stopping rule").set_index("scheme")
    return table.loc["CPI+"].astype(float)


def has_observations(root: Path) -> bool:
    """True if the committed summary holds section 5's observation table."""
    return "## Section 5's observations" in read_text(root, SUMMARY)


@block("paper-final-table", sources=[SUMMARY])
def _final_table(root: Path) -> str:
    table = section_table(root, SUMMARY, "## Final loss (iteration 100)")
    return md_table(list(table.columns), table.values.tolist())


@block("paper-run", sources=[SUMMARY, MANIFEST])
def _run(root: Path) -> str:
    coverage = search(root, SUMMARY, r"Coverage: (\d+)/(\d+) shards")
    wall = search(root, SUMMARY, r"Wall time of the computation: (\d+) s over (\d+) session")
    cpu = search(root, SUMMARY, r"Worker CPU time: (\d+) s")[1]
    created = json.loads(read_text(root, MANIFEST))["created"].replace("T", " ")
    text = (f"The committed summary covers {coverage[1]}/{coverage[2]} shards; its computation "
            f"took {wall[1]} s of wall time over {wall[2]} session(s) and {cpu} s of worker "
            f"CPU.")
    if has_observations(root):
        return text + f" The committed `manifest.json` is that run's (created {created} UTC)."
    return text + (f" The committed `manifest.json` (created {created} UTC) is from an earlier "
                   "run of the same sweep, not from the run whose summary is committed (whose "
                   "summary predates the observation table): rerunning the preset and "
                   "committing its folder whole replaces both.")


def _pct(a: float, b: float) -> float:
    return abs(a - b) / min(a, b) * 100


def _obs1(t: pd.DataFrame) -> str:
    order = t["mean"].sort_values(ascending=False)
    within = t["mean_of_std"].sort_values(ascending=False)
    return (f"API's final mean is {t.loc['API', 'mean']:.2f}, rank {int(t.loc['API', 'rank'])} "
            f"of {len(t)} (highest: {order.index[0]}, next {order.index[1]} "
            f"{order.iloc[1]:.2f}); its within-MDP std E[Std] {t.loc['API', 'mean_of_std']:.2f}"
            f" is {'the largest' if within.index[0] == 'API' else 'not the largest'} (next: "
            f"{within.index[1]} {within.iloc[1]:.2f}); Std[Std] {t.loc['API', 'std_of_std']:.2f}.")


def _obs2(t: pd.DataFrame, stop: pd.Series) -> str:
    cpi, plus = t.loc["CPI(0.1)", "mean"], t.loc["CPI+", "mean"]
    return (f"CPI+ ends at {plus:.2f} against {cpi:.2f} for CPI(0.1) ({_pct(plus, cpi):.0f}% "
            f"apart; close means within {CLOSE:.0%}); CPI's stopping rule has fired in "
            f"{stop['k=10']:.0%} of CPI+'s runs by k = 10, {stop['k=20']:.0%} by k = 20 and "
            f"{stop['k=100']:.0%} by k = 100; its mean settles within 1% of its final value "
            f"from k = {int(t.loc['CPI+', 'k_1pct'])}.")


def _obs3(t: pd.DataFrame) -> str:
    a, c = t.loc["API(0.1)", "mean"], t.loc["CPI(0.1)", "mean"]
    close = _pct(a, c) <= CLOSE * 100
    return (f"API(0.1) {a:.2f} against CPI(0.1) {c:.2f}: {_pct(a, c):.1f}% apart, "
            f"{'close' if close else 'not close'} by the 10% rule, API(0.1) "
            f"{'the higher' if a > c else 'the lower'}.")


def _obs4(t: pd.DataFrame) -> str:
    within = t["mean_of_std"].sort_values()
    rank = list(within.index).index("PSDP") + 1
    where = ("the smallest" if rank == 1 else
             f"rank {rank} from the smallest ({within.index[0]} {within.iloc[0]:.2f})")
    return (f"PSDP ranks {int(t.loc['PSDP', 'rank'])} by final mean ({t.loc['PSDP', 'mean']:.2f};"
            f" CPI+ {t.loc['CPI+', 'mean']:.2f}, CPI(0.1) {t.loc['CPI(0.1)', 'mean']:.2f}); "
            f"its within-MDP std {t.loc['PSDP', 'mean_of_std']:.2f} is {where}.")


def _obs5(t: pd.DataFrame) -> str:
    chain = ["API", "NSPI(5)", "NSPI(10)", "NSPI(30)", "PSDP"]
    means = [t.loc[s, "mean"] for s in chain]
    monotone = all(a >= b for a, b in zip(means, means[1:], strict=False))
    n30, psdp = t.loc["NSPI(30)", "mean"], t.loc["PSDP", "mean"]
    better = [s for s in ("API(0.1)", "CPI(0.1)", "CPI+") if n30 < t.loc[s, "mean"]]
    worse = [s for s in ("API(0.1)", "CPI(0.1)", "CPI+") if s not in better]
    gap = _pct(n30, psdp)
    text = (f"final means {', '.join(f'{s} {m:.2f}' for s, m in zip(chain, means, strict=True))}"
            f" ({'non-increasing' if monotone else 'not monotone'} along the chain); NSPI(30) "
            f"is {gap:.1f}% from PSDP ({'close' if gap <= CLOSE * 100 else 'not close'} by the "
            f"10% rule)")
    text += f", below {listing(better)}" if better else ""
    return text + (f", above {listing(worse)}" if worse else "") + " on the mean."


def _ranking_sentence(means: pd.DataFrame, label: str) -> str:
    parts = []
    for value in means.columns:
        order = list(means[value].sort_values().index)
        parts.append(f"{label} = {value}: {', '.join(order[:3])} ... {order[-1]} last")
    return "; ".join(parts)


def _obs6(root: Path, t: pd.DataFrame) -> str:
    by_b = conditioned(root, "b")
    ranges = [by_b[c].max() - by_b[c].min() for c in by_b.columns]
    shares = [r / by_b[c].mean() for r, c in zip(ranges, by_b.columns, strict=True)]
    by_a = conditioned(root, "n_A")
    spread_a = [by_a[c].max() - by_a[c].min() for c in by_a.columns]
    return (f"range of the schemes' final means {' / '.join(f'{r:.1f}' for r in ranges)} for "
            f"b = {' / '.join(by_b.columns)} ({' / '.join(f'{s:.0%}' for s in shares)} of the "
            f"mean loss); range {' / '.join(f'{r:.1f}' for r in spread_a)} for n_A = "
            f"{' / '.join(by_a.columns)}. Best three and last by final mean: "
            f"{_ranking_sentence(conditioned(root, 'n_S'), 'n_S')}; "
            f"{_ranking_sentence(by_a, 'n_A')}.")


@block("paper-observations-measured", sources=[SUMMARY])
def _observations(root: Path) -> str:
    t = final(root)
    lines = [f"- **O1** (API worst and most variable): {_obs1(t)}",
             f"- **O2** (CPI+ ~ CPI(0.1), CPI+ stops in < 20 iterations): "
             f"{_obs2(t, stopped(root))}",
             f"- **O3** (API(0.1) close to CPI(0.1), slightly worse): {_obs3(t)}",
             f"- **O4** (PSDP best and least variable): {_obs4(t)}",
             f"- **O5** (NSPI(m) from API to PSDP as m grows; NSPI(30) better than API(0.1), "
             f"CPI+ and CPI(0.1) and close to PSDP): {_obs5(t)}",
             f"- **O6** (stable with n_S and n_A; differences vanish as b grows): "
             f"{_obs6(root, t)}"]
    return "\n".join(lines)


def verdicts(root: Path, compact: bool) -> str:
    """Section 5's verdicts on the paper run, or on the sensitivity default if it has none."""
    if has_observations(root):
        table = section_table(root, SUMMARY, "## Section 5's observations")
        if compact:
            held = [r.iloc[0] for _, r in table.iterrows() if "holds" in r["verdict"]
                    and "not" not in r["verdict"]]
            failed = [r.iloc[0] for _, r in table.iterrows() if r.iloc[0] not in held]
            return ("Verdicts of the observation checks on this run (`docs/paper/summary.md`): "
                    + (f"{listing(held)} {'holds' if len(held) == 1 else 'hold'}" if held
                       else "none holds")
                    + (f"; {listing(failed)} do not." if failed else "."))
        return ("Verdicts of the observation checks on this run (`summary.md`):\n\n"
                + md_table(list(table.columns), table.values.tolist()))
    from study.numbers.sensitivity import default_verdicts
    return ("The committed summary predates the observation checks (a new run of the preset, "
            "or `nsrl plot` on its folder, adds them). Their verdicts under the same reading on "
            "5 MDPs x 4 runs per instance (the `sensitivity` study's `default` variant): "
            + default_verdicts(root) + ".")


@block("paper-verdicts", sources=[SUMMARY, "docs/sensitivity/observations.csv"])
def _verdicts(root: Path) -> str:
    return verdicts(root, compact=False)


@block("readme-paper-ranking", sources=[SUMMARY, "docs/sensitivity/observations.csv"])
def _readme_ranking(root: Path) -> str:
    t = final(root).sort_values("mean")
    rows = [[s, f"{r['mean']:.2f}", f"{r['mean_of_std']:.2f}", f"{r['memory']:.0f}"]
            for s, r in t.iterrows()]
    table = md_table(["scheme", "final mean loss", "within-MDP std", "stored policies"], rows,
                     "lrrr")
    return table + "\n\n" + verdicts(root, compact=True)


@block("paper-reference", sources=["benchmarks/results/reference_policies_sampled.txt"])
def _reference(root: Path) -> str:
    from study.numbers.sampled import reference
    pi0, uniform = reference(root)
    return f"{pi0:.2f} for pi_0 and {uniform:.2f} for the uniform random policy"


@block("paper-sweep-instances", sources=["benchmarks/results/bench_sweep_final_code.txt"])
def _instances(root: Path) -> str:
    import re
    rel = "benchmarks/results/bench_sweep_final_code.txt"
    text = read_text(root, rel)
    rows = re.findall(r"^\s+\((\d+), (\d+), (\d+)\)\s+(?:[\d.]+\s+){8}([\d.]+)$", text,
                      re.MULTILINE)
    base = search(root, rel, r"\(200, 5, 2\)\s+([\d.]+) s")[1]
    fast = {r[:3]: float(r[3]) for r in rows}
    parts = []
    for n in sorted({int(r[0]) for r in rows}):
        totals = [t for k, t in fast.items() if int(k[0]) == n]
        parts.append(f"n_S = {n}: {min(totals):.1f}-{max(totals):.1f} s")
    ratio = float(base) / fast[("200", "5", "2")]
    return ("; ".join(parts) + f" (the baseline at (200, 5, 2): {float(base):.0f} s, "
            f"{ratio:.0f}x slower)")
