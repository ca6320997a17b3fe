"""Section 5's observations, and the conclusion's claim, as checks on a results table.

Each check reads the per-MDP statistics (:func:`nsrl.experiments.stats.per_mdp`) at the final
iteration and returns one row: the observation, the criterion it is judged by, the measured
figures, and whether it holds. The paper states its observations in words; the criteria turn
them into numbers, one rule for each kind of phrase:

* **"close", "about the same", "similar"**: final mean losses within :data:`CLOSE` (10%) of
  each other, relative to their average;
* **"better", "worse", "smaller"** (on average): a lower (higher) final mean loss;
* **"significantly"**: a one-sided Wilcoxon signed-rank test on the per-MDP values, paired by
  MDP (every scheme runs on the same MDPs), at level :data:`LEVEL` (1%);
* **"more variable"**: the within-MDP standard deviation of the final loss (the paper's
  E[Std[L | M]]), compared MDP by MDP the same way;
* **CPI+ "converges"**: its stopping rule has fired (the step is 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, wilcoxon

CLOSE = 0.10
LEVEL = 0.01
KEYS = ["n_states", "n_actions", "branching", "mdp"]
NSPIS = ("NSPI(5)", "NSPI(10)", "NSPI(30)")


@dataclass
class Check:
    """One observation judged on a results table."""

    key: str
    paper: str
    criterion: str
    measured: str
    holds: bool | None  # None: the schemes it needs were not run


class Final:
    """The final-iteration per-MDP values of every scheme, as columns aligned by MDP."""

    def __init__(self, pm: pd.DataFrame):
        last = pm[pm["iteration"] == pm["iteration"].max()]
        self.pm = last
        self.mean = last.pivot_table(index=KEYS, columns="scheme", values="mean")
        self.std = last.pivot_table(index=KEYS, columns="scheme", values="std")
        self.stopped = pm.pivot_table(index=["scheme", "iteration"], values="stopped") \
            if "stopped" in pm.columns else None

    def has(self, *schemes) -> bool:
        """Whether every one of ``schemes`` was run."""
        return all(s in self.mean.columns for s in schemes)

    def avg(self, scheme: str, what: str = "mean") -> float:
        """The average over MDPs of a scheme's final ``mean`` (or within-MDP ``std``)."""
        return float(getattr(self, what)[scheme].mean())

    def lower(self, a: str, b: str, what: str = "mean") -> float:
        """p-value of 'a is below b' (one-sided, paired by MDP)."""
        table = getattr(self, what)
        diff = (table[a] - table[b]).to_numpy()
        if np.all(diff == 0):
            return 1.0
        return float(wilcoxon(diff, alternative="less").pvalue)

    def close(self, a: str, b: str) -> float:
        """|mean a - mean b| relative to their average."""
        x, y = self.avg(a), self.avg(b)
        return abs(x - y) / max((x + y) / 2.0, 1e-12)


def _missing(key, paper, criterion, *schemes) -> Check:
    return Check(key, paper, criterion, f"needs {', '.join(schemes)}", None)


def o1_api_worst_and_most_variable(f: Final) -> Check:
    """O1: "API is much more variable than the others and tends to be the worst"."""
    paper = "API is much more variable than the others and tends to be the worst on average"
    crit = (f"API's final mean is the highest; its within-MDP std is significantly larger "
            f"than every other scheme's (p < {LEVEL:g})")
    if not f.has("API"):
        return _missing("O1", paper, crit, "API")
    others = [s for s in f.mean.columns if s != "API"]
    worst = f.mean.mean().idxmax()
    p = max(f.lower(s, "API", "std") for s in others)
    measured = (f"highest mean: {worst} ({f.avg(worst):.2f}; API {f.avg('API'):.2f}); API std "
                f"{f.avg('API', 'std'):.2f} vs {max(f.avg(s, 'std') for s in others):.2f} "
                f"(next), worst p = {p:.2g}")
    return Check("O1", paper, crit, measured, worst == "API" and p < LEVEL)


def o2_cpi_plus_like_cpi_alpha_but_fast(f: Final) -> Check:
    """O2: CPI+ ~ CPI(alpha), CPI(alpha) less variable, CPI+ stopping in < 10 (< 20) steps."""
    paper = ("CPI+ ~ CPI(0.1) on average, CPI(0.1) slightly less variable; CPI+ stops in "
             "< 10 iterations most of the time, always < 20")
    crit = (f"final means within {CLOSE:.0%}; CPI(0.1)'s within-MDP std lower; CPI+ stopped "
            f"in >= 50% of runs by k = 10 and in 100% by k = 20")
    if not f.has("CPI+", "CPI(0.1)"):
        return _missing("O2", paper, crit, "CPI+", "CPI(0.1)")
    gap = f.close("CPI+", "CPI(0.1)")
    by10, by20 = (_stopped(f, "CPI+", k) for k in (10, 20))
    less = f.avg("CPI(0.1)", "std") < f.avg("CPI+", "std")
    measured = (f"means {f.avg('CPI+'):.2f} vs {f.avg('CPI(0.1)'):.2f} ({gap:.0%} apart); "
                f"std {f.avg('CPI+', 'std'):.2f} vs {f.avg('CPI(0.1)', 'std'):.2f}; stopped "
                f"{by10:.0%} by k=10, {by20:.0%} by k=20")
    return Check("O2", paper, crit, measured, gap <= CLOSE and less and by10 >= 0.5
                 and by20 >= 1.0)


def _stopped(f: Final, scheme: str, k: int) -> float:
    if f.stopped is None or (scheme, k) not in f.stopped.index:
        return float("nan")
    return float(f.stopped.loc[(scheme, k), "stopped"])


def o3_api_alpha_close_to_cpi_alpha(f: Final) -> Check:
    """O3: "API(alpha) is empirically close to CPI(alpha), while slightly worse"."""
    paper = "API(0.1) is close to CPI(0.1), slightly worse on average"
    crit = f"final means within {CLOSE:.0%}, API(0.1)'s the higher"
    if not f.has("API(0.1)", "CPI(0.1)"):
        return _missing("O3", paper, crit, "API(0.1)", "CPI(0.1)")
    gap = f.close("API(0.1)", "CPI(0.1)")
    worse = f.avg("API(0.1)") > f.avg("CPI(0.1)")
    measured = f"means {f.avg('API(0.1)'):.2f} vs {f.avg('CPI(0.1)'):.2f} ({gap:.0%} apart)"
    return Check("O3", paper, crit, measured, gap <= CLOSE and worse)


def o4_psdp_best_and_least_variable(f: Final) -> Check:
    """O4: CPI+, CPI(alpha), PSDP similar; PSDP significantly less variable, the best."""
    paper = ("CPI+, CPI(0.1), PSDP similar on average; PSDP significantly less variable and "
             "the best overall")
    crit = (f"the three means within {CLOSE:.0%} of each other; PSDP's within-MDP std "
            f"significantly below CPI+'s and CPI(0.1)'s (p < {LEVEL:g}); PSDP's mean the lowest")
    if not f.has("CPI+", "CPI(0.1)", "PSDP"):
        return _missing("O4", paper, crit, "CPI+", "CPI(0.1)", "PSDP")
    trio = ("CPI+", "CPI(0.1)", "PSDP")
    spread = max(f.close(a, b) for a in trio for b in trio)
    p = max(f.lower("PSDP", s, "std") for s in ("CPI+", "CPI(0.1)"))
    best = f.mean.mean().idxmin()
    measured = (f"means {', '.join(f'{s} {f.avg(s):.2f}' for s in trio)} ({spread:.0%} "
                f"apart at most); PSDP std {f.avg('PSDP', 'std'):.2f} (p = {p:.2g}); lowest "
                f"mean: {best}")
    return Check("O4", paper, crit, measured, spread <= CLOSE and p < LEVEL and best == "PSDP")


def o5_nspi_bridges_api_and_psdp(f: Final) -> Check:
    """O5: NSPI(m) bridges API and PSDP; NSPI(30) beats API(alpha), CPI+, CPI(alpha)."""
    paper = ("NSPI(m) moves from API to PSDP as m grows; NSPI(30) better than API(0.1), CPI+, "
             "CPI(0.1) and close to PSDP")
    crit = (f"means non-increasing API >= NSPI(5) >= NSPI(10) >= NSPI(30) and closer to PSDP "
            f"as m grows; NSPI(30) significantly below API(0.1), CPI+, CPI(0.1) "
            f"(p < {LEVEL:g}); NSPI(30) within {CLOSE:.0%} of PSDP")
    needed = ("API", *NSPIS, "PSDP", "API(0.1)", "CPI+", "CPI(0.1)")
    if not f.has(*needed):
        return _missing("O5", paper, crit, *needed)
    chain = [f.avg(s) for s in ("API", *NSPIS)]
    to_psdp = [abs(x - f.avg("PSDP")) for x in chain]
    monotone = all(a >= b for a, b in zip(chain, chain[1:], strict=False))
    closer = all(a >= b for a, b in zip(to_psdp, to_psdp[1:], strict=False))
    p = max(f.lower("NSPI(30)", s) for s in ("API(0.1)", "CPI+", "CPI(0.1)"))
    gap = f.close("NSPI(30)", "PSDP")
    measured = (f"API, NSPI(5, 10, 30): {', '.join(f'{x:.2f}' for x in chain)}; PSDP "
                f"{f.avg('PSDP'):.2f} ({gap:.0%} from NSPI(30)); vs API(0.1)/CPI+/CPI(0.1) "
                f"worst p = {p:.2g}")
    return Check("O5", paper, crit, measured, monotone and closer and p < LEVEL
                 and gap <= CLOSE)


def o6_stable_in_size_vanishing_with_branching(f: Final) -> Check:
    """O6: stable with n_S and n_A; the differences vanish as the branching factor grows."""
    paper = ("relative observations stable with n_S and n_A; differences vanish as b grows")
    crit = ("the schemes' ranking by final mean within each n_S and each n_A agrees with the "
            "overall one (Kendall tau >= 0.6); the range of the schemes' means shrinks as b grows")
    overall = f.mean.mean()
    taus, ranges = [], []
    for col in ("n_states", "n_actions"):
        for _, part in f.mean.groupby(level=col):
            taus.append(kendalltau(overall, part.mean()).statistic)
    for _, part in f.mean.groupby(level="branching"):
        ranges.append(float(part.mean().max() - part.mean().min()))
    shrinking = all(a > b for a, b in zip(ranges, ranges[1:], strict=False))
    measured = (f"Kendall tau {min(taus):.2f} (lowest) .. {max(taus):.2f}; range of means by "
                f"b: {', '.join(f'{r:.2f}' for r in ranges)}")
    return Check("O6", paper, crit, measured, min(taus) >= 0.6 and shrinking and len(ranges) > 1)


def conclusion_all_better_than_api(f: Final) -> Check:
    """The conclusion: "CPI(alpha), CPI+, PSDP and NSPI always significantly better than API"."""
    paper = "CPI(0.1), CPI+, PSDP and NSPI(m) always significantly better than API"
    crit = (f"each significantly below API (p < {LEVEL:g}) overall and within every value of "
            f"n_S, n_A and b")
    schemes = [s for s in ("CPI(0.1)", "CPI+", "PSDP", *NSPIS) if s in f.mean.columns]
    if not f.has("API") or not schemes:
        return _missing("C", paper, crit, "API", "CPI(0.1)", "CPI+", "PSDP", "NSPI(m)")
    failed, tried = [], 0
    for col in (None, "n_states", "n_actions", "branching"):
        parts = [(None, f.mean)] if col is None else list(f.mean.groupby(level=col))
        for value, part in parts:
            for s in schemes:
                tried += 1
                diff = (part[s] - part["API"]).to_numpy()
                p = 1.0 if np.all(diff == 0) else wilcoxon(diff, alternative="less").pvalue
                if p >= LEVEL:
                    failed.append(s if col is None else f"{s} at {col}={value}")
    measured = (f"{tried - len(failed)}/{tried} comparisons significant"
                + (f"; not: {', '.join(failed[:4])}" + (" ..." if len(failed) > 4 else "")
                   if failed else ""))
    return Check("C", paper, crit, measured, not failed)


CHECKS = (o1_api_worst_and_most_variable, o2_cpi_plus_like_cpi_alpha_but_fast,
          o3_api_alpha_close_to_cpi_alpha, o4_psdp_best_and_least_variable,
          o5_nspi_bridges_api_and_psdp, o6_stable_in_size_vanishing_with_branching,
          conclusion_all_better_than_api)


def observations(pm: pd.DataFrame) -> pd.DataFrame:
    """Every check of :data:`CHECKS` on the per-MDP statistics ``pm``: one row each.

    Columns: ``observation``, ``paper``, ``criterion``, ``measured``, ``holds`` (True,
    False, or None when the schemes it needs were not run).
    """
    f = Final(pm)
    rows = [check(f) for check in CHECKS]
    return pd.DataFrame({"observation": [r.key for r in rows], "paper": [r.paper for r in rows],
                         "criterion": [r.criterion for r in rows],
                         "measured": [r.measured for r in rows],
                         "holds": [r.holds for r in rows]})


def markdown_table(obs: pd.DataFrame) -> str:
    """The observation table as Markdown (for summary.md and the command line)."""
    def verdict(holds) -> str:
        if holds is None or (isinstance(holds, float) and np.isnan(holds)):
            return "n/a"  # also a None read back from observations.csv (NaN)
        return "**holds**" if bool(holds) else "does not hold"

    lines = ["| | paper | criterion | measured | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {r.observation} | {r.paper} | {r.criterion} | {r.measured} | "
              f"{verdict(r.holds)} |" for r in obs.itertuples()]
    return "\n".join(lines)
