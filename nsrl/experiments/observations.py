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

These are the defaults of :class:`Criteria`; :func:`robustness` judges every observation again
under the other defensible thresholds (close = 5% or 20%, the across-MDP variability, a sign
test, standard deviations with ddof = 1) from the same per-MDP table, no rerun needed.

On a domain without a model the table holds a Monte-Carlo score (:mod:`nsrl.experiments.quality`)
whose better side may be the higher one: "worst", "better" and "below API" then follow the
score's direction, and the criteria say so. The observations judged by "close" (O2-O5:
final means within 10% of their average) need a loss, which is >= 0 and 0 at the optimum, so
that a ratio to it means something; a score has no such zero (a return may be negative), so
they are not judged (:data:`NEEDS_LOSS`), and the table says why.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.stats import binomtest, kendalltau, wilcoxon

from nsrl.experiments.quality import LOSS, Quality

CLOSE = 0.10
LEVEL = 0.01
KEYS = ["n_states", "n_actions", "branching", "mdp"]
NSPIS = ("NSPI(5)", "NSPI(10)", "NSPI(30)")


TESTS = ("wilcoxon", "sign")
VARIABILITY = ("within", "across")


@dataclass(frozen=True)
class Criteria:
    """The thresholds that turn the paper's words into verdicts (the module doc).

    Attributes:
        close: "close" is final means within this fraction of their average.
        level: the level of the one-sided paired tests.
        test: ``"wilcoxon"`` (signed-rank) or ``"sign"`` (binomial on the signs).
        variability: ``"within"``, the within-MDP std E[Std[L | M]], compared MDP by MDP; or
            ``"across"``, the spread of the per-MDP means Std[E[L | M]], compared MDP by MDP
            through each MDP's absolute deviation from the scheme's average.
        ddof: delta degrees of freedom of every standard deviation (0: population).
        skip_branching: values of b whose sub-family the conclusion's check C leaves out
            (O6 says the differences vanish as b grows, so C at b = 10 contradicts it).
    """

    close: float = CLOSE
    level: float = LEVEL
    test: str = "wilcoxon"
    variability: str = "within"
    ddof: int = 0
    skip_branching: tuple = ()

    def __post_init__(self):
        if self.test not in TESTS or self.variability not in VARIABILITY or \
                self.ddof not in (0, 1) or not 0 < self.close < 1 or not 0 < self.level < 1:
            raise ValueError(f"Criteria: test should be one of {TESTS}, variability one of "
                             f"{VARIABILITY}, ddof 0 or 1, close and level in (0, 1); got "
                             f"{self!r}.")


def paired_p(diff: np.ndarray, test: str = "wilcoxon") -> float:
    """p-value of 'the differences are below 0' (one-sided, paired), by ``test``.

    All differences zero: 1. The sign test counts the negative differences among the non-zero
    ones against Binomial(n, 1/2).

    Examples:
        >>> paired_p(np.array([-1.0, -2.0, -3.0, 0.5]), "sign")
        0.3125
    """
    return _paired_p(np.ascontiguousarray(diff, dtype=np.float64).tobytes(), test)


@functools.lru_cache(maxsize=4096)
def _paired_p(raw: bytes, test: str) -> float:
    """:func:`paired_p` of the differences stored in ``raw``, each tested once.

    Readings that share a scheme's runs compare the same differences again.
    """
    diff = np.frombuffer(raw, dtype=np.float64)
    if np.all(diff == 0):
        return 1.0
    if test == "sign":
        nonzero = diff[diff != 0]
        return float(binomtest(int((nonzero < 0).sum()), nonzero.size, 0.5,
                               alternative="greater").pvalue)
    return float(wilcoxon(diff, alternative="less").pvalue)


@dataclass
class Check:
    """One observation judged on a results table."""

    key: str
    paper: str
    criterion: str
    measured: str
    holds: bool | None  # None: the schemes it needs were not run


class Final:
    """The final-iteration per-MDP values of every scheme, as columns aligned by MDP.

    ``std`` is the within-MDP std (with ``criteria.ddof``); ``spread`` the per-MDP measure of
    variability that the checks compare (``criteria.variability``).
    """

    def __init__(self, pm: pd.DataFrame, criteria: Criteria = Criteria(),
                 quality: Quality = LOSS):
        self.c, self.q = criteria, quality
        self.sign = -1.0 if quality.higher else 1.0  # sign * mean: lower is better
        last = pm[pm["iteration"] == pm["iteration"].max()]
        self.pm = last
        self.mean = last.pivot_table(index=KEYS, columns="scheme", values="mean")
        self.std = last.pivot_table(index=KEYS, columns="scheme", values="std")
        if criteria.ddof == 1 and "runs" in last.columns:
            runs = last.pivot_table(index=KEYS, columns="scheme", values="runs")
            self.std = self.std * np.sqrt(runs / (runs - 1))
        # one run per MDP and scheme: no within-MDP spread (a std of 0, or NaN with ddof 1)
        self.one_run = "runs" in last.columns and bool((last["runs"] <= 1).all())
        self.spread = self.std if criteria.variability == "within" else \
            (self.mean - self.mean.mean()).abs()
        self.stopped = pm.pivot_table(index=["scheme", "iteration"], values="stopped") \
            if "stopped" in pm.columns else None

    def has(self, *schemes) -> bool:
        """Whether every one of ``schemes`` was run."""
        return all(s in self.mean.columns for s in schemes)

    def avg(self, scheme: str, what: str = "mean") -> float:
        """A scheme's final ``mean`` (or within-MDP ``std``) averaged over MDPs.

        ``what="spread"``: its variability (the mean within-MDP std, or the std across MDPs of
        its means).
        """
        if what == "spread" and self.c.variability == "across":
            return float(self.mean[scheme].std(ddof=self.c.ddof))
        return float(getattr(self, "std" if what == "spread" else what)[scheme].mean())

    def worst(self) -> str:
        """The scheme of the worst final mean: the highest loss (a score's lowest, if higher)."""
        return str((self.sign * self.mean.mean()).idxmax())

    def lower(self, a: str, b: str, what: str = "mean") -> float:
        """p-value of 'a is below b' (one-sided, paired by MDP, by the criteria's test)."""
        table = getattr(self, what)
        return paired_p((table[a] - table[b]).to_numpy(), self.c.test)

    def close(self, a: str, b: str) -> float:
        """|mean a - mean b| relative to their average."""
        x, y = self.avg(a), self.avg(b)
        return abs(x - y) / max((x + y) / 2.0, 1e-12)


def _var(f: Final) -> str:
    return "within-MDP std" if f.c.variability == "within" else "std across MDPs"


def _missing(key, paper, criterion, *schemes) -> Check:
    return Check(key, paper, criterion, f"needs {', '.join(schemes)}", None)


def o1_api_worst_and_most_variable(f: Final) -> Check:
    """O1: "API is much more variable than the others and tends to be the worst"."""
    paper = "API is much more variable than the others and tends to be the worst on average"
    worst = "highest" if f.q.exact else \
        f"{'lowest' if f.q.higher else 'highest'} ({f.q.name}: {f.q.better})"
    crit = (f"API's final mean is the {worst}; its {_var(f)} is significantly larger "
            f"than every other scheme's (p < {f.c.level:g})")
    if not f.has("API"):
        return _missing("O1", paper, crit, "API")
    others = [s for s in f.mean.columns if s != "API"]
    if not others:  # API alone: nothing to be worse or more variable than
        return _missing("O1", paper, crit, "API", "another scheme")
    if f.one_run and f.c.variability == "within":
        return Check("O1", paper, crit, "not judged: one run per MDP and scheme, so no "
                     "within-MDP spread to compare (the across-MDP variability of the "
                     "robustness table judges it)", None)
    worst = f.worst()
    p = max(f.lower(s, "API", "spread") for s in others)
    measured = (f"{'highest' if f.sign > 0 else 'lowest'} mean: {worst} ({f.avg(worst):.2f}; "
                f"API {f.avg('API'):.2f}); API std "
                f"{f.avg('API', 'spread'):.2f} vs {max(f.avg(s, 'spread') for s in others):.2f} "
                f"(next), worst p = {p:.2g}")
    return Check("O1", paper, crit, measured, worst == "API" and p < f.c.level)


def o2_cpi_plus_like_cpi_alpha_but_fast(f: Final) -> Check:
    """O2: CPI+ ~ CPI(alpha), CPI(alpha) less variable, CPI+ stopping in < 10 (< 20) steps."""
    paper = ("CPI+ ~ CPI(0.1) on average, CPI(0.1) slightly less variable; CPI+ stops in "
             "< 10 iterations most of the time, always < 20")
    crit = (f"final means within {f.c.close:.0%}; CPI(0.1)'s {_var(f)} lower; CPI+ "
            f"stopped in >= 50% of runs by k = 10 and in 100% by k = 20")
    if not f.has("CPI+", "CPI(0.1)"):
        return _missing("O2", paper, crit, "CPI+", "CPI(0.1)")
    gap = f.close("CPI+", "CPI(0.1)")
    by10, by20 = (_stopped(f, "CPI+", k) for k in (10, 20))
    less = f.avg("CPI(0.1)", "spread") < f.avg("CPI+", "spread")
    measured = (f"means {f.avg('CPI+'):.2f} vs {f.avg('CPI(0.1)'):.2f} ({gap:.0%} apart); "
                f"std {f.avg('CPI+', 'spread'):.2f} vs {f.avg('CPI(0.1)', 'spread'):.2f}; stopped "
                f"{by10:.0%} by k=10, {by20:.0%} by k=20")
    return Check("O2", paper, crit, measured, gap <= f.c.close and less and by10 >= 0.5
                 and by20 >= 1.0)


def _stopped(f: Final, scheme: str, k: int) -> float:
    if f.stopped is None or (scheme, k) not in f.stopped.index:
        return float("nan")
    # pandas-stubs types a cell as any scalar pandas holds (dates too)
    return float(f.stopped.loc[(scheme, k), "stopped"])  # type: ignore[arg-type]


def o3_api_alpha_close_to_cpi_alpha(f: Final) -> Check:
    """O3: "API(alpha) is empirically close to CPI(alpha), while slightly worse"."""
    paper = "API(0.1) is close to CPI(0.1), slightly worse on average"
    crit = f"final means within {f.c.close:.0%}, API(0.1)'s the higher"
    if not f.has("API(0.1)", "CPI(0.1)"):
        return _missing("O3", paper, crit, "API(0.1)", "CPI(0.1)")
    gap = f.close("API(0.1)", "CPI(0.1)")
    worse = f.avg("API(0.1)") > f.avg("CPI(0.1)")
    measured = f"means {f.avg('API(0.1)'):.2f} vs {f.avg('CPI(0.1)'):.2f} ({gap:.0%} apart)"
    return Check("O3", paper, crit, measured, gap <= f.c.close and worse)


def o4_psdp_best_and_least_variable(f: Final) -> Check:
    """O4: CPI+, CPI(alpha), PSDP similar; PSDP significantly less variable, the best."""
    paper = ("CPI+, CPI(0.1), PSDP similar on average; PSDP significantly less variable and "
             "the best overall")
    crit = (f"the three means within {f.c.close:.0%} of each other; PSDP's {_var(f)} "
            f"significantly below CPI+'s and CPI(0.1)'s (p < {f.c.level:g}); PSDP's mean the "
            f"lowest")
    if not f.has("CPI+", "CPI(0.1)", "PSDP"):
        return _missing("O4", paper, crit, "CPI+", "CPI(0.1)", "PSDP")
    trio = ("CPI+", "CPI(0.1)", "PSDP")
    spread = max(f.close(a, b) for a in trio for b in trio)
    p = max(f.lower("PSDP", s, "spread") for s in ("CPI+", "CPI(0.1)"))
    best = f.mean.mean().idxmin()
    measured = (f"means {', '.join(f'{s} {f.avg(s):.2f}' for s in trio)} ({spread:.0%} "
                f"apart at most); PSDP std {f.avg('PSDP', 'spread'):.2f} (p = {p:.2g}); lowest "
                f"mean: {best}")
    return Check("O4", paper, crit, measured,
                 spread <= f.c.close and p < f.c.level and best == "PSDP")


def o5_nspi_bridges_api_and_psdp(f: Final) -> Check:
    """O5: NSPI(m) bridges API and PSDP; NSPI(30) beats API(alpha), CPI+, CPI(alpha)."""
    paper = ("NSPI(m) moves from API to PSDP as m grows; NSPI(30) better than API(0.1), CPI+, "
             "CPI(0.1) and close to PSDP")
    crit = (f"means non-increasing API >= NSPI(5) >= NSPI(10) >= NSPI(30) and closer to PSDP "
            f"as m grows; NSPI(30) significantly below API(0.1), CPI+, CPI(0.1) "
            f"(p < {f.c.level:g}); NSPI(30) within {f.c.close:.0%} of PSDP")
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
    return Check("O5", paper, crit, measured, monotone and closer and p < f.c.level
                 and gap <= f.c.close)


def o6_stable_in_size_vanishing_with_branching(f: Final) -> Check:
    """O6: stable with n_S and n_A; the differences vanish as the branching factor grows."""
    paper = ("relative observations stable with n_S and n_A; differences vanish as b grows")
    crit = ("the schemes' ranking by final mean within each n_S and each n_A agrees with the "
            "overall one (Kendall tau >= 0.6); the range of the schemes' means shrinks as b grows")
    if len(f.mean.columns) < 2:  # a ranking of one scheme: no Kendall tau, no range
        return _missing("O6", paper, crit, "two schemes or more")
    levels = {k: f.mean.index.get_level_values(k).nunique()
              for k in ("n_states", "n_actions", "branching")}
    if max(levels.values()) < 2:  # each part's ranking is the overall one
        return Check("O6", paper, crit, "not judged: one value of n_S, n_A and b, nothing "
                     "to compare", None)
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
    if levels["branching"] < 2:  # the n_S and n_A clause alone
        return Check("O6", paper, crit, measured + " (one value of b: its clause not judged)",
                     bool(min(taus) >= 0.6))
    return Check("O6", paper, crit, measured, bool(min(taus) >= 0.6 and shrinking))


class Comparison(NamedTuple):
    """One comparison of the conclusion's check: ``scheme`` against API on a sub-family.

    ``family`` is None (all MDPs), ``"n_states"``, ``"n_actions"`` or ``"branching"``, and
    ``value`` the sub-family's value of it (None overall).
    """

    scheme: str
    family: str | None
    value: object
    p: float
    significant: bool


def comparisons(f: Final) -> list[Comparison]:
    """Every comparison of :func:`conclusion_all_better_than_api`, in its order.

    Each scheme of CPI(0.1), CPI+, PSDP and NSPI(m) that was run against API, overall and
    within every value of n_S, n_A and b (but the values of b in ``criteria.skip_branching``,
    and the axes the domain has not, whose column is 0).
    """
    schemes = [s for s in ("CPI(0.1)", "CPI+", "PSDP", *NSPIS) if s in f.mean.columns]
    out = []
    for col in (None, "n_states", "n_actions", "branching"):
        if col is not None and not f.mean.index.get_level_values(col).any():
            continue  # an axis the domain has not (its column is 0): the overall comparison
        parts = [(None, f.mean)] if col is None else list(f.mean.groupby(level=col))
        for value, part in parts:
            if col == "branching" and value in f.c.skip_branching:
                continue
            for s in schemes:
                p = paired_p((f.sign * (part[s] - part["API"])).to_numpy(), f.c.test)
                out.append(Comparison(s, col, value, p, p < f.c.level))
    return out


def conclusion_all_better_than_api(f: Final) -> Check:
    """The conclusion: "CPI(alpha), CPI+, PSDP and NSPI always significantly better than API"."""
    paper = "CPI(0.1), CPI+, PSDP and NSPI(m) always significantly better than API"
    side = "above" if f.q.higher else "below"
    crit = (f"each significantly {side} API (p < {f.c.level:g}) overall and within every value "
            f"of n_S, n_A and b" + ("" if f.q.exact else f" ({f.q.name}: {f.q.better})"))
    schemes = [s for s in ("CPI(0.1)", "CPI+", "PSDP", *NSPIS) if s in f.mean.columns]
    if not f.has("API") or not schemes:
        return _missing("C", paper, crit, "API", "CPI(0.1)", "CPI+", "PSDP", "NSPI(m)")
    tried = comparisons(f)
    failed = [c.scheme if c.family is None else f"{c.scheme} at {c.family}={c.value}"
              for c in tried if not c.significant]
    measured = (f"{len(tried) - len(failed)}/{len(tried)} comparisons significant"
                + (f"; not: {', '.join(failed[:4])}" + (" ..." if len(failed) > 4 else "")
                   if failed else ""))
    return Check("C", paper, crit, measured, not failed)


CHECKS = (o1_api_worst_and_most_variable, o2_cpi_plus_like_cpi_alpha_but_fast,
          o3_api_alpha_close_to_cpi_alpha, o4_psdp_best_and_least_variable,
          o5_nspi_bridges_api_and_psdp, o6_stable_in_size_vanishing_with_branching,
          conclusion_all_better_than_api)


# The checks judged by "close" (a ratio to the final means): they need a loss (module doc).
NEEDS_LOSS = ("O2", "O3", "O4", "O5")


def observations(pm: pd.DataFrame, criteria: Criteria = Criteria(),
                 quality: Quality = LOSS) -> pd.DataFrame:
    """Every check of :data:`CHECKS` on the per-MDP statistics ``pm``: one row each.

    ``criteria`` are the thresholds (default: the module doc's); ``quality`` what ``pm``'s
    means are of (default the exact loss; a score's direction sets what "worst" and "better"
    mean, and the checks of :data:`NEEDS_LOSS` are not judged on it).

    Columns: ``observation``, ``paper``, ``criterion``, ``measured``, ``holds`` (True,
    False, or None when the schemes it needs were not run, or it needs a loss).
    """
    f = Final(pm, criteria, quality)
    rows = [check(f) for check in CHECKS]
    if not quality.exact:
        rows = [_needs_loss(r, quality) if r.key in NEEDS_LOSS else r for r in rows]
    return pd.DataFrame({"observation": [r.key for r in rows], "paper": [r.paper for r in rows],
                         "criterion": [r.criterion for r in rows],
                         "measured": [r.measured for r in rows],
                         "holds": [r.holds for r in rows]})


def _needs_loss(check: Check, quality: Quality) -> Check:
    """``check`` not judged on a score: why, in its ``measured`` column."""
    why = (f"not judged: 'close' compares final means to their average, which needs a loss "
           f"(>= 0, 0 at the optimum); a Monte-Carlo score ({quality.name}) has no such zero")
    return Check(check.key, check.paper, check.criterion, why, None)


# The other defensible thresholds, each one change from the default.
THRESHOLDS = {
    "close 5%": Criteria(close=0.05),
    "close 20%": Criteria(close=0.20),
    "across-MDP variability": Criteria(variability="across"),
    "sign test": Criteria(test="sign"),
    "ddof 1": Criteria(ddof=1),
    "C without b = 10": Criteria(skip_branching=(10,)),
}


def robustness(pm: pd.DataFrame, thresholds: dict | None = None) -> pd.DataFrame:
    """Each observation's verdict under the default criteria and under each of ``thresholds``.

    Args:
        pm: the per-MDP statistics (as :func:`observations`).
        thresholds: name -> :class:`Criteria` (default :data:`THRESHOLDS`).

    Returns:
        One row per observation; columns ``default`` and one per threshold (True, False or
        None), and ``robust``: whether every threshold gives the default's verdict.
    """
    thresholds = THRESHOLDS if thresholds is None else thresholds
    columns = {"default": observations(pm).set_index("observation")["holds"]}
    for name, criteria in thresholds.items():
        columns[name] = observations(pm, criteria).set_index("observation")["holds"]
    table = pd.DataFrame(columns)
    table["robust"] = [all(v == row["default"] for v in row.drop("default"))
                       for _, row in table.iterrows()]
    return table


def flips(table: pd.DataFrame) -> str:
    """The verdicts that a threshold changes, in words ('none' when every one is robust).

    Examples:
        >>> t = pd.DataFrame({"default": [True], "close 5%": [False], "robust": [False]},
        ...                  index=pd.Index(["O3"], name="observation"))
        >>> flips(t)
        'O3 fails at close 5%'
    """
    words = []
    for obs, row in table.iterrows():
        changed = [k for k, v in row.drop(["default", "robust"]).items() if v != row["default"]]
        if changed:
            words.append(f"{obs} {'fails' if row['default'] else 'holds'} at "
                         f"{', '.join(map(str, changed))}")
    return "; ".join(words) or "none"


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
