"""Blocks of docs/sampled.md and the README that quote the ``sampled`` family's run.

Sources: docs/sampled/sampled.csv (the combined table), docs/sampled/<variant>/stats.csv and
summary.md, benchmarks/results/reference_policies_sampled.txt (pi_0 and the uniform policy)
and benchmarks/results/bench_sampled_dask.txt.
"""

from __future__ import annotations

from pathlib import Path

from study.numbers.registry import block
from study.numbers.sources import (
    final_stats,
    listing,
    md_table,
    num,
    read_csv,
    search,
    section_table,
    slug,
)

CSV = "docs/sampled/sampled.csv"
REFERENCE = "benchmarks/results/reference_policies_sampled.txt"
DASK = "benchmarks/results/bench_sampled_dask.txt"
VARIANTS = ("projected", "lstdq-onehot", "lstdq-phi", "rollout-onehot")
SCHEMES = ("API", "API(0.1)", "CPI(0.1)", "CPI+", "NSPI(5)", "NSPI(10)", "NSPI(30)", "PSDP")
OBS = ("O1", "O2", "O3", "O4", "O5", "O6", "C")


def _stats(variant: str) -> str:
    return f"docs/sampled/{variant}/stats.csv"


def _table(root: Path):
    return read_csv(root, CSV).set_index("variant")


def reference(root: Path) -> tuple[float, float]:
    """Mean exact loss of pi_0 and of the uniform random policy on the family's MDPs."""
    pi0 = float(search(root, REFERENCE, r"^pi_0 .*: ([\d.]+)")[1])
    uniform = float(search(root, REFERENCE, r"^uniform random policy: ([\d.]+)")[1])
    return pi0, uniform


@block("sampled-reference", sources=[REFERENCE])
def _reference(root: Path) -> str:
    pi0, uniform = reference(root)
    n = search(root, REFERENCE, r"(\d+) MDPs")[1]
    return (f"pi_0 (action 0 everywhere, every scheme's start) has a mean loss of {pi0:.2f} on "
            f"these {n} MDPs; the uniform random policy {uniform:.2f}.")


@block("sampled-final-means", sources=[CSV])
def _final_means(root: Path) -> str:
    table = _table(root)
    rows = []
    for variant in VARIANTS:
        means = [table.loc[variant, f"mean {s}"] for s in SCHEMES]
        ranks = [sorted(means).index(m) + 1 for m in means]
        cells = [f"**{m:.2f}** ({r})" if r == 1 else f"{m:.2f} ({r})"
                 for m, r in zip(means, ranks, strict=True)]
        rows.append([variant, *cells])
    return md_table(["variant", *SCHEMES], rows)


@block("sampled-observations", sources=[CSV])
def _observations(root: Path) -> str:
    table = _table(root)
    rows = [[v, str(table.loc[v, "held"]), *(table.loc[v, o] for o in OBS)] for v in VARIANTS]
    return md_table(["variant", "held", *OBS], rows)


@block("sampled-spread", sources=[CSV])
def _spread(root: Path) -> str:
    table = _table(root)
    cols = ["Std[E] (mean over schemes)", "E[Std] (mean over schemes)", "CPI+ stopped k=1",
            "CPI+ stopped k=10", "CPI+ stopped k=20"]
    rows = [[v, *(f"{table.loc[v, c]:.2f}" for c in cols)] for v in VARIANTS]
    return md_table(["variant", "Std[E]", "E[Std]", "CPI+ stopped by k = 1", "k = 10",
                     "k = 20"], rows, "lrrrrr")


def _sig(x: float) -> str:
    return f"{x:.2g}" if x < 0.1 else f"{x:.3g}" if x < 1 else f"{x:.2f}"


@block("sampled-errors", sources=[CSV])
def _errors(root: Path) -> str:
    table = _table(root)
    sampled = [v for v in VARIANTS if v != "projected"]
    rows = [[v, *(_sig(table.loc[v, f"error {s}"]) for s in SCHEMES)] for v in sampled]
    drawn = []
    for s in SCHEMES:
        values = sorted({round(table.loc[v, f"transitions {s}"], -3) for v in sampled})
        drawn.append(" / ".join(num(x, 0) for x in values))
    rows.append(["transitions (distinct values over the variants)", *drawn])
    return md_table(["variant", *SCHEMES], rows)


def _final(root: Path, variant: str):
    return final_stats(root, _stats(variant))


def _register_values() -> None:
    """Inline values ``sampled.<what>.<variant>.<scheme>`` for the prose."""
    columns = {"mean": "mean", "within": "mean_of_std"}
    for what, column in columns.items():
        for variant in VARIANTS:
            for scheme in SCHEMES:
                def render(root: Path, v=variant, s=scheme, c=column) -> str:
                    return f"{_final(root, v).loc[s, c]:.2f}"
                block(f"sampled.{what}.{variant}.{slug(scheme)}", sources=[_stats(variant)],
                      optional=True)(render)
    for variant in VARIANTS[1:]:
        for scheme in SCHEMES:
            def error(root: Path, v=variant, s=scheme) -> str:
                return _sig(_table(root).loc[v, f"error {s}"])
            block(f"sampled.error.{variant}.{slug(scheme)}", sources=[CSV], optional=True)(error)


_register_values()


@block("sampled-above-pi0", sources=[CSV, REFERENCE])
def _above_pi0(root: Path) -> str:
    """LSTD-Q on Phi against pi_0: which schemes end above and below it."""
    pi0, _ = reference(root)
    means = {s: _table(root).loc["lstdq-phi", f"mean {s}"] for s in SCHEMES}
    above = [f"{s} ({m:.2f})" for s, m in means.items() if m > pi0]
    below = [f"{s} ({m:.2f})" for s, m in sorted(means.items(), key=lambda x: x[1]) if m < pi0]
    lo, hi = min(means.values()), max(means.values())
    text = (f"every final mean is within {max(abs(lo - pi0), abs(hi - pi0)):.2f} of pi_0 "
            f"({lo:.2f}-{hi:.2f} against {pi0:.2f})")
    if above:
        text += f"; {listing(above)} end above it"
    if below:
        text += f", {listing(below)} below it, by at most {pi0 - lo:.2f}"
    return text


@block("sampled-first-call", sources=[_stats("lstdq-onehot")])
def _first_call(root: Path) -> str:
    """Loss after one greedy call with LSTD-Q on one-hot features."""
    stats = read_csv(root, _stats("lstdq-onehot"))
    first = stats[stats["iteration"] == 1].set_index("scheme")["mean"].sort_values()
    best, second, third = first.index[:3]
    rest = first.iloc[3:]
    return (f"{best} is the best after one call ({first[best]:.1f}, against {first[second]:.1f} "
            f"for {second}, {first[third]:.1f} for {third} and {rest.min():.0f}-{rest.max():.0f} "
            f"for the others)")


@block("sampled-below-half", sources=[_stats("lstdq-onehot"), CSV])
def _below_half(root: Path) -> str:
    """When each scheme's mean loss first drops below 0.5 with LSTD-Q on one-hot features."""
    stats = read_csv(root, _stats("lstdq-onehot"))
    per_call = _table(root).loc["lstdq-onehot", "transitions API"] / stats["iteration"].max()
    parts = []
    for scheme, group in stats.groupby("scheme"):
        below = group[group["mean"] < 0.5]["iteration"]
        if len(below):
            k = int(below.min())
            parts.append((k, f"{scheme} after {k} calls ({num(k * per_call, 0)} transitions)"))
    never = sorted(set(stats["scheme"]) - {p[1].split(" after")[0] for p in parts})
    text = "; ".join(p for _, p in sorted(parts))
    return text + (f"; never: {listing(never)}" if never else "")


def api_variability(root: Path) -> str:
    """Where API's within-MDP std ranks with rollouts + CSC."""
    within = _final(root, "rollout-onehot")["mean_of_std"].sort_values(ascending=False)
    order = list(within.index)
    above = [f"{s}'s ({within[s]:.2f})" for s in order[: order.index("API")]]
    least = order[-1]
    text = f"API's within-MDP std ({within['API']:.2f}) is "
    if not above:
        return text + f"the largest ({least} {within[least]:.2f}, the least variable)"
    return text + (f"larger than that of the {len(order) - len(above) - 1} other schemes "
                   f"({least} {within[least]:.2f}, the least variable) but smaller than "
                   f"{listing(above)}")


block("sampled-api-variability", sources=[_stats("rollout-onehot")])(api_variability)


@block("readme-sampled", sources=[CSV, _stats("rollout-onehot"), REFERENCE])
def _readme(root: Path) -> str:
    table = _table(root)

    def means(variant: str):
        return table.loc[variant, [f"mean {s}" for s in SCHEMES]].rename(
            lambda c: c[5:]).astype(float).sort_values()

    onehot = means("lstdq-onehot")
    stop = table.loc["lstdq-onehot", "CPI+ stopped k=10"]
    rest = onehot.drop("CPI+")
    rollout = means("rollout-onehot")
    best = [f"{s} {m:.2f}" for s, m in rollout.iloc[:3].items()]
    worst = [f"{s} {m:.2f}" for s, m in rollout.iloc[-2:].items()]
    return (f"- LSTD-Q on one-hot features: every scheme but CPI+ ends at "
            f"{rest.min():.2f}-{rest.max():.2f}; CPI+ at {onehot['CPI+']:.2f} (its stopping "
            f"rule fired in {stop:.0%} of its runs by k = 10);\n"
            f"- rollouts + CSC on one-hot features: best {listing(best)}, API "
            f"{rollout['API']:.2f}; {api_variability(root)}; last {listing(worst)};\n"
            f"- LSTD-Q on the paper's Phi: {_above_pi0(root)}.")


@block("sampled-rollout-by-b", sources=["docs/sampled/rollout-onehot/summary.md"])
def _rollout_by_b(root: Path) -> str:
    table = section_table(root, "docs/sampled/rollout-onehot/summary.md",
                          "## Final loss conditioned on b").set_index("scheme")
    others = table.drop(index=["CPI(0.1)", "CPI+"]).astype(float)
    b1, b10 = others["mean b=1"], others["mean b=10"]
    return (f"the six other schemes end at {b10.min():.2f}-{b10.max():.2f} at b = 10, against "
            f"{b1.min():.2f}-{b1.max():.2f} at b = 1")


@block("sampled-wall", sources=[f"docs/sampled/{v}/summary.md" for v in VARIANTS])
def _wall(root: Path) -> str:
    rows, wall, cpu = [], 0, 0
    for v in VARIANTS:
        rel = f"docs/sampled/{v}/summary.md"
        w = int(search(root, rel, r"Wall time of the computation: (\d+) s")[1])
        c = int(search(root, rel, r"Worker CPU time: (\d+) s")[1])
        rows.append([v, f"{num(w, 0)} s", f"{num(c, 0)} s"])
        wall, cpu = wall + w, cpu + c
    rows.append(["**the four variants**", f"**{num(wall, 0)} s**", f"{num(cpu, 0)} s"])
    return md_table(["variant", "computation (wall)", "worker CPU"], rows, "lrr")


@block("sampled-dask", sources=[DASK])
def _dask(root: Path) -> str:
    one = search(root, DASK, r"1 worker\(s\):\s+([\d.]+) s")[1]
    two = search(root, DASK, r"2 worker\(s\):\s+([\d.]+) s")[1]
    speed = search(root, DASK, r"over 1: ([\d.]+)x \(efficiency ([\d.]+)\)")
    same = search(root, DASK, r"identical losses .*: (\w+)")[1]
    rows = [["LocalCluster, 1 worker", f"{one} s"],
            ["LocalCluster, 2 workers", f"{two} s ({speed[1]}x; efficiency {speed[2]})"],
            ["losses identical on 1 and 2 Dask workers and in the loky run",
             "yes" if same == "True" else "no"]]
    return md_table(["", "wall time of the slice"], rows, "lr")


@block("sampled-dask-projection", sources=[DASK])
def _dask_projection(root: Path) -> str:
    import re

    from study.numbers.sources import read_text
    pairs = re.findall(r"projected on\s+(\d+) workers:\s+([\d.]+) min", read_text(root, DASK))
    if not pairs:
        raise ValueError(f"{DASK} has no 'projected on N workers' lines")
    shards = search(root, DASK, r"(\d+) shards, (\d+) CPU s, longest shard ([\d.]+) s")
    intro = (f"From the {num(int(shards[2]), 0)} CPU s of the loky run's {shards[1]} shards "
             f"(longest {shards[3]} s):\n\n")
    return intro + md_table(["workers", *(w for w, _ in pairs)],
                    [["projected minutes", *(m for _, m in pairs)]], "l" + "r" * len(pairs))


@block("sampled-psdp-rise", sources=[_stats("projected")])
def _psdp_rise(root: Path) -> str:
    """PSDP's mean loss along the iterations under the projected operator."""
    stats = read_csv(root, _stats("projected"))
    psdp = stats[stats["scheme"] == "PSDP"].set_index("iteration")["mean"]
    low = int(psdp.idxmin())
    return (f"{psdp.iloc[0]:.1f} at k = 1, {psdp[low]:.1f} at its lowest (k = {low}), "
            f"{psdp.iloc[-1]:.1f} at k = {int(psdp.index[-1])}")


@block("sampled-rollout-share", sources=[f"docs/sampled/{v}/summary.md" for v in VARIANTS])
def _rollout_share(root: Path) -> str:
    """Rollouts + CSC's share of the four variants' computation (wall time)."""
    wall = {v: int(search(root, f"docs/sampled/{v}/summary.md",
                          r"Wall time of the computation: (\d+) s")[1]) for v in VARIANTS}
    return f"{wall['rollout-onehot'] / sum(wall.values()):.0%}"


def _stopped(variant: str, k: int):
    def render(root: Path) -> str:
        rel = f"docs/sampled/{variant}/summary.md"
        table = section_table(root, rel, "## Stopping rule").set_index("scheme")
        return f"{float(table.loc['CPI+', f'k={k}']):.0%}"
    return render


for _variant in VARIANTS:
    for _k in (5, 10, 20, 50, 100):
        block(f"sampled.cpi-plus-stopped.{_variant}.k{_k}",
              sources=[f"docs/sampled/{_variant}/summary.md"], optional=True)(
            _stopped(_variant, _k))
