"""Statistics that carry the verdicts of the powered bigger family (docs/bigger.md).

The unit of replication is a shard: one MDP of a grid-world size (its seed draws the
obstacles), or one set of run seeds on the mountain car (one model; the unit's seeds draw the
operator's noise and samples). Each unit runs every scheme once, and schemes are compared
unit by unit. On the grid world that pairing is real: two schemes face the same MDP, and the
per-unit difference takes its difficulty out. On the car it is not: each scheme draws its
noise and samples from seeds of its own (:meth:`nsrl.experiments.presets.Sweep.run_rngs`), so
two schemes share no random number and the pairing by unit index is arbitrary; the paired
tests are then tests of independent runs, valid but with half the degrees of freedom of
Welch's. For every (variant, size):

* **intervals** (:func:`interval`): each scheme's final mean loss over units with a 95%
  Student-t interval, mean +- t_{0.975, n-1} s / sqrt(n) (s with ddof = 1); a bootstrap
  percentile interval (10 000 resamples from a fixed ``numpy`` Generator) is the other
  method. With one unit there is no interval (NaN); a deterministic variant (the mountain car
  with the exact operator) repeats one value over its units, and its interval has width 0;
* **comparisons** (:func:`paired_comparisons`): every pair of schemes, the mean of the
  per-unit differences with its t-interval, the two-sided paired t-test and the exact
  Wilcoxon signed-rank test, and Holm's step-down correction over the pairs of the cell (the
  family of comparisons is one (variant, size)), at level :data:`ALPHA`. Significance is the
  paired t-test's after Holm: with 5 units the two-sided Wilcoxon cannot go below
  2 / 2^5 = 0.0625, so it can never be significant there, and with 10 units not after Holm
  over 36 pairs (its least p-value, 2 / 2^10, is above 0.05 / 36); its p-value is reported
  beside. A per-unit difference within :data:`TIE_ATOL` is a tie (0: the solvers'
  round-off, not a difference of policies). Per-unit differences that are all equal are
  exact (a deterministic variant): p = 0 when they are non-zero, 1 when zero. An answer that
  draws on every variant at once also needs Holm's correction over every comparison of the
  family (:func:`family_holm`), which is stricter: both are reported;
* **flatness** (:func:`flatness`): the exact operator's curves must have converged before any
  final loss is read: over the last :data:`FLAT_TAIL` of the iterations each curve moves by
  less than :data:`FLAT_TOLERANCE` of pi_0's loss on its unit (max - min over those
  iterations), every scheme and unit;
* **observations** (:func:`domain_observations`): section 5's O1-O6 and the conclusion's C
  judged by :func:`nsrl.experiments.observations.observations` (the paper preset's criteria,
  the same code) on each (domain, operator), both sizes pooled as the paper pools its n_S.
  One run per unit makes the within-unit standard deviation 0 by construction, so the
  variability clauses use the paper preset's ``across`` reading (the spread of the per-unit
  means, :data:`CRITERIA`), one of its robustness thresholds. C compares each scheme with API
  overall and within every size by a one-sided test at 1%; a sub-family with too few units
  for that test to reach the level (5 units: the exact Wilcoxon cannot go below 1/32) is not
  judged, unless the scheme's mean there is not below API's (no test could find it better:
  it fails). :func:`c_tests` lists those comparisons one by one. :func:`carry_over` sets the
  verdicts beside the Garnet ones;
* **margins** (:func:`margins`): each clause of O1-O6 that compares a statistic with a
  threshold (the 10% of "close", a sign, a fraction, a Kendall tau of 0.6), the distance of
  the statistic to it and the statistic's standard error, from a bootstrap of the units
  within each size; a verdict whose deciding clauses lie within one standard error of their
  thresholds is on the edge (:func:`edge`). O6 is also read on the direct Kendall tau
  between the two sizes' rankings (the preset's compares each size with the pooled ranking,
  which is mostly the larger size's units).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats as st

from nsrl.experiments.observations import (
    NSPIS,
    Criteria,
    Final,
    comparisons,
    observations,
    paired_p,
)

ALPHA = 0.05
LEVEL = 0.95
BOOTSTRAP = 10_000
FLAT_TAIL = 0.10
FLAT_TOLERANCE = 0.01
MIN_ITERATIONS = 50
CRITERIA = Criteria(variability="across")
"""The paper preset's criteria, but the variability read across units (one run per unit)."""
TIE_ATOL = 1e-6
"""A per-unit difference of final losses at most this is a tie (counted as 0). The exact
backend certifies each loss to ``1e-10 R_max / (1 - gamma)`` (1e-8 on the bigger domains);
below 1e-6 two schemes that reach the same policies differ by their solvers' round-off
(API and NSPI(m) on the car: 2e-14), which a paired test on deterministic units would
otherwise call significant."""


def interval(values, level: float = LEVEL, method: str = "t",
             rng: np.random.Generator | None = None) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` with its ``level`` interval.

    Args:
        values: one number per unit (finite).
        level: the coverage asked, in (0, 1).
        method: ``"t"`` (Student-t, s with ddof 1) or ``"bootstrap"`` (percentile interval of
            :data:`BOOTSTRAP` resampled means).
        rng: the bootstrap's Generator (required for it: results are reproducible).

    Returns:
        NaN bounds for a single value; bounds equal to the mean when every value is equal.

    Examples:
        >>> [round(x, 3) for x in interval([1.0, 2.0, 3.0])]
        [2.0, -0.484, 4.484]
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"interval: expected one or more finite values, got {x.tolist()!r}.")
    if not 0 < level < 1:
        raise ValueError(f"interval: level should be in (0, 1), got {level!r}.")
    if method not in ("t", "bootstrap"):
        raise ValueError(f"interval: method should be 't' or 'bootstrap', got {method!r}.")
    mean = float(x.mean())
    if x.size == 1:
        return mean, float("nan"), float("nan")
    if np.all(x == x[0]):
        return mean, mean, mean
    if method == "t":
        half = float(st.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
        return mean, mean - half, mean + half
    if rng is None:
        raise ValueError("interval: the bootstrap needs rng, a numpy Generator "
                         "(e.g. np.random.default_rng(0)), so that it is reproducible.")
    means = x[rng.integers(x.size, size=(BOOTSTRAP, x.size))].mean(axis=1)
    low, high = np.quantile(means, [0.5 - level / 2, 0.5 + level / 2])
    return mean, float(low), float(high)


def holm(p) -> np.ndarray:
    """Holm's step-down adjusted p-values (monotone, capped at 1), in the input's order.

    Examples:
        >>> holm([0.01, 0.04, 0.03]).tolist()
        [0.03, 0.06, 0.06]
    """
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"holm: expected p-values in [0, 1], got {p.tolist()!r}.")
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _paired_tests(d: np.ndarray) -> tuple[float, float]:
    """(paired t p, Wilcoxon p), two-sided, of per-unit differences ``d``."""
    if np.all(d == d[0]):  # exact differences (a deterministic variant) or all zero
        p = 1.0 if d[0] == 0 else 0.0
        return p, p
    if d.size < 2:
        return float("nan"), float("nan")
    t = float(st.ttest_1samp(d, 0.0).pvalue)
    w = float(st.wilcoxon(d, zero_method="wilcox").pvalue) if np.any(d != 0) else 1.0
    return t, w


def unit_table(pm: pd.DataFrame) -> pd.DataFrame:
    """Final loss per unit (index: n_states, mdp) and scheme (columns), from per-MDP stats."""
    last = pm[pm["iteration"] == pm["iteration"].max()]
    return last.pivot_table(index=["n_states", "mdp"], columns="scheme", values="mean")


def final_intervals(units: pd.DataFrame, method: str = "t",
                    rng: np.random.Generator | None = None) -> pd.DataFrame:
    """Per size and scheme: units, mean final loss and its 95% interval (``low``, ``high``)."""
    rows = []
    for n, part in units.groupby(level="n_states"):
        for scheme in part.columns:
            values = part[scheme].dropna().to_numpy()
            mean, low, high = interval(values, method=method, rng=rng)
            rows.append({"n_states": n, "scheme": scheme, "units": values.size, "mean": mean,
                         "low": low, "high": high})
    return pd.DataFrame(rows)


def paired_comparisons(units: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Every pair of schemes per size, unit by unit, Holm-corrected per size.

    Per-unit differences within :data:`TIE_ATOL` count as 0. Columns: ``n_states, a, b,
    units, diff`` (mean of a - b), ``low, high`` (its 95% t-interval), ``p_t, p_wilcoxon``
    (two-sided), ``p_holm`` (the t-test's, adjusted over the size's pairs), ``significant``
    (p_holm < alpha), ``better`` (the lower scheme when significant, else "").
    """
    rows = []
    for n, part in units.groupby(level="n_states"):
        block = []
        for a, b in itertools.combinations(part.columns, 2):
            both = part[[a, b]].dropna()
            d = (both[a] - both[b]).to_numpy()
            if d.size == 0:
                continue
            d = np.where(np.abs(d) <= TIE_ATOL, 0.0, d)
            mean, low, high = interval(d)
            p_t, p_w = _paired_tests(d)
            block.append({"n_states": n, "a": a, "b": b, "units": d.size, "diff": mean,
                          "low": low, "high": high, "p_t": p_t, "p_wilcoxon": p_w})
        if not block:
            continue
        frame = pd.DataFrame(block)
        p = frame["p_t"].fillna(1.0).to_numpy()
        frame["p_holm"] = holm(p)
        frame["significant"] = frame["p_holm"] < alpha
        frame["better"] = np.where(frame["significant"],
                                   np.where(frame["diff"] < 0, frame["a"], frame["b"]), "")
        rows.append(frame)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def family_holm(comparisons: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """``comparisons`` with Holm's correction over all of its rows, beside the per-cell one.

    An answer drawn from every variant at once is one family of tests: the per-cell
    correction of :func:`paired_comparisons` (36 pairs) leaves its chance of a false finding
    near 5% per cell, not for the answer. Adds ``p_holm_family`` (the paired t-test's p
    adjusted over every row) and ``significant_family`` (below ``alpha``). Holm over a larger
    family never adjusts a p-value down, so a pair significant over the family is significant
    in its cell too.

    Examples:
        >>> c = pd.DataFrame({"p_t": [0.001, 0.02, 0.04, float("nan")]})
        >>> family_holm(c)["p_holm_family"].round(3).tolist()
        [0.004, 0.06, 0.08, 1.0]
    """
    out = comparisons.copy()
    out["p_holm_family"] = holm(out["p_t"].fillna(1.0).to_numpy())
    out["significant_family"] = out["p_holm_family"] < alpha
    return out


def flatness(pm: pd.DataFrame, pi0: pd.Series, tail: float = FLAT_TAIL,
             tolerance: float = FLAT_TOLERANCE, min_iterations: int = MIN_ITERATIONS
             ) -> pd.DataFrame:
    """Whether each curve is flat: the last ``tail`` of iterations move it < tolerance x pi_0's.

    Args:
        pm: per-MDP statistics of one variant (columns n_states, mdp, scheme, iteration,
            mean).
        pi0: pi_0's loss per unit, indexed by (n_states, mdp).
        tail: the fraction of the iterations at the end that is read.
        tolerance: the largest move allowed, as a fraction of pi_0's loss.
        min_iterations: fewer iterations than this are never flat.

    Returns:
        One row per (n_states, mdp, scheme): ``iterations``, ``window`` (the first iteration
        of the tail), ``moved`` (max - min of the loss over the window), ``change`` (the
        loss at the last iteration minus at the window's first: < 0, still falling),
        ``pi0``, ``relative`` (moved / pi0) and ``flat`` (relative < tolerance and
        iterations >= min_iterations).
    """
    K = int(pm["iteration"].max())
    first = K - max(1, int(np.ceil(tail * K)))  # the tail's moves start from this iteration
    window = pm[pm["iteration"] >= max(first, 1)]
    g = window.groupby(["n_states", "mdp", "scheme"])["mean"]
    out = (g.max() - g.min()).rename("moved").reset_index()
    ends = window.sort_values("iteration").groupby(["n_states", "mdp", "scheme"])["mean"]
    out["change"] = (ends.last() - ends.first()).to_numpy()  # same group order as g's
    scale = pi0.reindex(pd.MultiIndex.from_frame(out[["n_states", "mdp"]])).to_numpy()
    if np.any(np.isnan(scale)) or np.any(scale <= 0):
        raise ValueError("flatness: pi_0's loss is missing or not positive on some unit.")
    out.insert(3, "iterations", K)
    out.insert(4, "window", max(first, 1))
    out["pi0"] = scale
    out["relative"] = out["moved"] / scale
    out["flat"] = (out["relative"] < tolerance) & (K >= min_iterations)
    return out


def domain_observations(pm: pd.DataFrame, criteria: Criteria = CRITERIA) -> pd.DataFrame:
    """O1-O6 and C on one (domain, operator): the paper preset's checks, both sizes pooled.

    O6's branching clause needs two values of b; a structured domain has one (its family's),
    so O6 is judged on its n_S clause alone and ``measured`` says so; with one n_S too (a
    family run at one size so far) there is nothing to compare and O6 is not judged (None).
    """
    obs = observations(pm, criteria)
    _judge_c_where_testable(obs, Final(pm, criteria))
    if pm["branching"].nunique() < 2:
        row = obs.index[obs["observation"] == "O6"][0]
        obs.loc[row, "criterion"] = ("the schemes' ranking by final mean within each n_S agrees "
                                     "with the overall one (Kendall tau >= 0.6); one b: its "
                                     "clause is not judged")
        if pm["n_states"].nunique() < 2:  # each size's ranking is the overall one
            obs.loc[row, "measured"] = "one n_S and one value of b: nothing to compare"
            obs["holds"] = obs["holds"].astype(object)  # a bool column cannot hold None
            obs.loc[row, "holds"] = None
            return obs
        tau = _min_tau(pm)
        obs.loc[row, "measured"] = f"Kendall tau {tau:.2f} (lowest); one value of b"
        obs.loc[row, "holds"] = bool(tau >= 0.6) if np.isfinite(tau) else None
    return obs


def least_p(test: str, units: int) -> float:
    """The least one-sided p-value ``test`` can give on ``units`` paired differences.

    Examples:
        >>> least_p("wilcoxon", 5), least_p("sign", 7)
        (0.03125, 0.0078125)
    """
    return 0.5 ** units  # every difference of one sign (the exact tests: 1 / 2^n)


def _judge_c_where_testable(obs: pd.DataFrame, f: Final) -> None:
    """Judge C on the comparisons its test can decide (see the module docstring), in place.

    The paper preset's check counts a comparison on 5 units as failed though its test cannot
    reach 1% there; such a comparison is left out, but one where the scheme's mean is not
    below API's still fails. With every comparison left out C is not judged (None).
    """
    tried = comparisons(f)
    failed, unjudged = [], []
    for c in tried:
        part = f.mean if c.family is None else f.mean.xs(c.value, level=c.family)
        name = c.scheme if c.family is None else f"{c.scheme} at {c.family}={c.value}"
        testable = least_p(f.c.test, len(part)) < f.c.level
        if testable and not c.significant or \
                not testable and (part[c.scheme] - part["API"]).mean() >= 0:
            failed.append(name)
        elif not testable:
            unjudged.append((c.family or "all units", c.value, len(part)))
    if not unjudged:
        return  # every comparison decidable: the paper preset's verdict stands
    row = obs.index[obs["observation"] == "C"][0]
    judged = len(tried) - len(unjudged)
    where = sorted({(fam if v is None else f"{fam}={v}", n) for fam, v, n in unjudged})
    obs.loc[row, "measured"] = (
        f"{judged - len(failed)}/{judged} judged comparisons significant"
        + (f"; not: {', '.join(failed[:4])}" + (" ..." if len(failed) > 4 else "")
           if failed else "")
        + f"; {len(unjudged)} not judged (the scheme below API on average, but the "
          f"{f.c.test} test cannot reach {f.c.level:g} on "
        + ", ".join(f"{w}, {n} units" for w, n in where) + ")")
    obs["holds"] = obs["holds"].astype(object)
    obs.loc[row, "holds"] = None if judged == 0 else not failed


def _min_tau(pm: pd.DataFrame) -> float:
    """The lowest Kendall tau between the overall ranking and each size's (O6's statistic).

    Ties within :data:`TIE_ATOL` (:func:`kendall_b`): the paper preset's check ranks the
    raw means, and where several schemes end at one policy their round-off would order them.
    """
    last = pm[pm["iteration"] == pm["iteration"].max()]
    mean = last.pivot_table(index=["n_states", "mdp"], columns="scheme", values="mean")
    return size_taus(mean)[0]


C_SCHEMES = ("CPI(0.1)", "CPI+", "PSDP", *NSPIS)
"""The schemes the conclusion C says are better than API."""


def c_tests(pm: pd.DataFrame, criteria: Criteria = CRITERIA) -> pd.DataFrame:
    """C's comparisons one by one, as :func:`domain_observations` judges them.

    Each of :data:`C_SCHEMES` run against API, over all units (``size`` "all") and within
    each size: ``units``, ``diff`` (the scheme's mean final loss minus API's), ``p`` (the
    criteria's one-sided paired test of "below API"), ``testable`` (whether that test can
    reach the level on so many units, :func:`least_p`) and ``result``: "below API"
    (significant), "not significant", "not testable" (the scheme below API on average, no
    test could tell) or "not below API" (not testable, and above API on average: it fails
    C). C holds when every comparison is "below API" or "not testable", one at least
    being judged.
    """
    f = Final(pm, criteria)
    schemes = [s for s in C_SCHEMES if s in f.mean.columns]
    parts = [("all", f.mean), *((str(n), part) for n, part in f.mean.groupby(level="n_states"))]
    rows = []
    for size, part in parts:
        testable = least_p(criteria.test, len(part)) < criteria.level
        for scheme in schemes:
            d = (part[scheme] - part["API"]).to_numpy()
            p = paired_p(d, criteria.test)
            if testable:
                result = "below API" if p < criteria.level else "not significant"
            else:
                result = "not testable" if d.mean() < 0 else "not below API"
            rows.append({"size": size, "scheme": scheme, "units": len(part),
                         "diff": float(d.mean()), "p": p, "testable": testable,
                         "result": result})
    return pd.DataFrame(rows)


def size_taus(mean: pd.DataFrame) -> tuple[float, float]:
    """O6's two readings of a unit x scheme table of final losses (index n_states, mdp).

    Returns:
        (the preset's: the lowest Kendall tau between each size's ranking of the schemes and
        the ranking over all units; the direct one: the lowest Kendall tau between two
        sizes' rankings), each by :func:`kendall_b` (ties within :data:`TIE_ATOL`). With
        both sizes of the powered family the pooled ranking is two thirds the 10^4 units, so
        the first reads 10^4 against a ranking mostly its own.
    """
    overall = mean.mean().to_numpy()
    by_size = [part.mean().to_numpy() for _, part in mean.groupby(level="n_states")]
    pooled = min((kendall_b(overall, m) for m in by_size), default=float("nan"))
    direct = min((kendall_b(a, b) for a, b in itertools.combinations(by_size, 2)),
                 default=float("nan"))
    return pooled, direct


MARGIN_RESAMPLES = 1000
MARGIN_SEED = 2014
TAU = 0.6  # O6's threshold in the paper preset's check
DIRECT = "O6 (direct)"
"""The observation key of O6 read on the direct Kendall tau between the sizes' rankings."""

# Each thresholded clause of O1-O6 (the paper preset's checks): how its statistic is held
# against its limit, and its kind: "loss" (a difference of final losses: within TIE_ATOL
# it is a tie, whatever the spread), "fraction" (|a - b| over their average, "close"),
# "share" (of runs), "tau" (Kendall's) or "p" (a test's p-value). None: the criteria's own.
CLAUSES: dict[tuple[str, str], tuple[str, float | None, str]] = {
    ("O1", "API's mean minus the highest other"): (">", 0.0, "loss"),
    ("O1", "API significantly the most variable"): ("<", None, "p"),
    ("O2", "CPI+ and CPI(0.1) apart"): ("<=", None, "fraction"),
    ("O2", "CPI+'s std minus CPI(0.1)'s"): (">", 0.0, "loss"),
    ("O2", "CPI+ stopped by k = 10"): (">=", 0.5, "share"),
    ("O2", "CPI+ stopped by k = 20"): (">=", 1.0, "share"),
    ("O3", "API(0.1) and CPI(0.1) apart"): ("<=", None, "fraction"),
    ("O3", "API(0.1) minus CPI(0.1)"): (">", 0.0, "loss"),
    ("O4", "CPI+, CPI(0.1), PSDP apart"): ("<=", None, "fraction"),
    ("O4", "PSDP significantly the least variable"): ("<", None, "p"),
    ("O4", "the lowest other mean minus PSDP's"): (">", 0.0, "loss"),
    ("O5", "least step of API >= NSPI(5) >= NSPI(10) >= NSPI(30)"): (">=", 0.0, "loss"),
    ("O5", "least step towards PSDP as m grows"): (">=", 0.0, "loss"),
    ("O5", "NSPI(30) significantly below API(0.1), CPI+, CPI(0.1)"): ("<", None, "p"),
    ("O5", "NSPI(30) and PSDP apart"): ("<=", None, "fraction"),
    ("O6", "Kendall tau, each size against all units"): (">=", TAU, "tau"),
    (DIRECT, "Kendall tau, 10^4 against 10^5"): (">=", TAU, "tau"),
}


def kendall_b(x, y, atol: float = TIE_ATOL) -> float:
    """Kendall's tau-b of two rankings, values within ``atol`` of each other tied.

    Scipy's tau-b when no two values are within ``atol`` (and without its overhead, for the
    bootstrap); NaN when either vector is constant. The tolerance is :data:`TIE_ATOL`'s:
    schemes that end at the same policy differ by their solvers' round-off (five schemes at
    pi_0's loss on the car with rollouts + CSC, 1e-12 apart), which is no ranking.

    Examples:
        >>> round(kendall_b([1, 2, 3, 3], [1, 3, 2, 4]), 4)
        0.5477
        >>> kendall_b([1.0, 2.0, 2.0 + 1e-12], [1.0, 3.0, 2.0]), kendall_b([1, 2, 3], [1, 3, 2])
        (0.8164965809277261, 0.3333333333333333)
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    i, j = np.triu_indices(x.size, 1)
    dx = np.where(np.abs(x[i] - x[j]) <= atol, 0.0, np.sign(x[i] - x[j]))
    dy = np.where(np.abs(y[i] - y[j]) <= atol, 0.0, np.sign(y[i] - y[j]))
    denominator = np.sqrt(np.count_nonzero(dx) * np.count_nonzero(dy))
    return float((dx * dy).sum() / denominator) if denominator > 0 else float("nan")


def _statistics(m: np.ndarray, stop: np.ndarray, sizes: np.ndarray, names: list[str],
                criteria: Criteria) -> dict[tuple[str, str], float]:
    """The statistic of each clause of :data:`CLAUSES` but the tests.

    ``m``: final losses, units x schemes (columns ``names``); ``stop``: CPI+'s stopped
    fraction per unit at iterations 10 and 20 (NaN where not run); ``sizes``: each unit's
    n_S. The arithmetic of :mod:`nsrl.experiments.observations`' checks, on arrays.
    """
    col = {s: i for i, s in enumerate(names)}
    avg = m.mean(axis=0)
    spread = m.std(axis=0, ddof=criteria.ddof)

    def a(s: str) -> float:
        return float(avg[col[s]])

    def apart(x: str, y: str) -> float:
        return abs(a(x) - a(y)) / max((a(x) + a(y)) / 2.0, 1e-12)

    def stopped(j: int) -> float:
        return float(np.nanmean(stop[:, j])) if np.any(np.isfinite(stop[:, j])) \
            else float("nan")

    out: dict[tuple[str, str], float] = {}
    has = set(names).issuperset
    if has(["API"]):
        out[("O1", "API's mean minus the highest other")] = a("API") - max(
            a(s) for s in names if s != "API")
    if has(["CPI+", "CPI(0.1)"]):
        out[("O2", "CPI+ and CPI(0.1) apart")] = apart("CPI+", "CPI(0.1)")
        out[("O2", "CPI+'s std minus CPI(0.1)'s")] = float(spread[col["CPI+"]]
                                                          - spread[col["CPI(0.1)"]])
        out[("O2", "CPI+ stopped by k = 10")] = stopped(0)
        out[("O2", "CPI+ stopped by k = 20")] = stopped(1)
    if has(["API(0.1)", "CPI(0.1)"]):
        out[("O3", "API(0.1) and CPI(0.1) apart")] = apart("API(0.1)", "CPI(0.1)")
        out[("O3", "API(0.1) minus CPI(0.1)")] = a("API(0.1)") - a("CPI(0.1)")
    trio = ("CPI+", "CPI(0.1)", "PSDP")
    if has(trio):
        out[("O4", "CPI+, CPI(0.1), PSDP apart")] = max(apart(x, y) for x in trio for y in trio)
        out[("O4", "the lowest other mean minus PSDP's")] = min(
            a(s) for s in names if s != "PSDP") - a("PSDP")
    chain = ("API", *NSPIS)
    if has([*chain, "PSDP", "API(0.1)", "CPI+", "CPI(0.1)"]):
        values = [a(s) for s in chain]
        to_psdp = [abs(x - a("PSDP")) for x in values]
        out[("O5", "least step of API >= NSPI(5) >= NSPI(10) >= NSPI(30)")] = min(
            x - y for x, y in itertools.pairwise(values))
        out[("O5", "least step towards PSDP as m grows")] = min(
            x - y for x, y in itertools.pairwise(to_psdp))
        out[("O5", "NSPI(30) and PSDP apart")] = apart("NSPI(30)", "PSDP")
    levels = np.unique(sizes)
    if levels.size > 1:
        by_size = [m[sizes == n].mean(axis=0) for n in levels]
        out[("O6", "Kendall tau, each size against all units")] = min(
            kendall_b(avg, b) for b in by_size)
        out[(DIRECT, "Kendall tau, 10^4 against 10^5")] = min(
            kendall_b(b, c) for b, c in itertools.combinations(by_size, 2))
    return out


def _tests(pm: pd.DataFrame, criteria: Criteria) -> dict[tuple[str, str], float]:
    """The p-values of the significance clauses of O1, O4 and O5 (the checks' own)."""
    f = Final(pm, criteria)
    out = {}
    if f.has("API"):
        out[("O1", "API significantly the most variable")] = max(
            f.lower(s, "API", "spread") for s in f.mean.columns if s != "API")
    if f.has("CPI+", "CPI(0.1)", "PSDP"):
        out[("O4", "PSDP significantly the least variable")] = max(
            f.lower("PSDP", s, "spread") for s in ("CPI+", "CPI(0.1)"))
    if f.has("API", *NSPIS, "PSDP", "API(0.1)", "CPI+", "CPI(0.1)"):
        out[("O5", "NSPI(30) significantly below API(0.1), CPI+, CPI(0.1)")] = max(
            f.lower("NSPI(30)", s) for s in ("API(0.1)", "CPI+", "CPI(0.1)"))
    return out


def margins(pm: pd.DataFrame, criteria: Criteria = CRITERIA,
            resamples: int = MARGIN_RESAMPLES, seed: int = MARGIN_SEED) -> pd.DataFrame:
    """How far each thresholded clause of O1-O6 is from its threshold, in standard errors.

    The clauses are the paper preset's (:mod:`nsrl.experiments.observations`, listed in
    :data:`CLAUSES`), both sizes pooled as :func:`domain_observations` judges them, and O6
    read on the direct tau too (observation :data:`DIRECT`; "10^4 against 10^5" names the
    family's two sizes, the lowest tau over pairs of sizes otherwise). A clause that is a
    significance test (O1's and O4's "significantly less variable", O5's "significantly
    better") has its p-value against the level and no standard error: the p-value already
    weighs the units' spread, and such a clause is never on the edge. Every verdict the
    clauses give is checked against :func:`domain_observations`' (a ValueError names a
    difference).

    Args:
        pm: per-MDP statistics of one (domain, operator), every size.
        criteria: the thresholds (:data:`CRITERIA`).
        resamples: bootstrap resamples of the units, each size's drawn from its own.
        seed: the bootstrap Generator's seed (the table is reproducible).

    Returns:
        One row per clause: ``observation``, ``clause``, ``kind`` (:data:`CLAUSES`),
        ``statistic``, ``relation`` and ``limit`` (the clause holds when ``statistic
        relation limit``), ``distance`` (how far inside the limit: > 0 holds, or >= 0 where
        the relation is not strict), ``se`` (the statistic's bootstrap standard error; 0 on
        deterministic units, NaN for a test), ``holds`` and ``within`` (| distance | below
        the larger of ``se`` and, for a difference of losses, :data:`TIE_ATOL`: a standard
        error of the units, or the solvers' round-off, could move it across).
    """
    last = pm[pm["iteration"] == pm["iteration"].max()]
    mean = last.pivot_table(index=["n_states", "mdp"], columns="scheme", values="mean")
    names = list(mean.columns)
    m = mean.to_numpy(dtype=np.float64)
    sizes = mean.index.get_level_values("n_states").to_numpy()
    stop = np.full((len(mean), 2), np.nan)
    if "stopped" in pm.columns and "CPI+" in names:
        cpi = pm[pm["scheme"] == "CPI+"].pivot_table(index=["n_states", "mdp"],
                                                     columns="iteration", values="stopped")
        for j, k in enumerate((10, 20)):
            if k in cpi.columns:
                stop[:, j] = cpi[k].reindex(mean.index).to_numpy()
    point = _statistics(m, stop, sizes, names, criteria)
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(sizes == n) for n in np.unique(sizes)]
    draws = {key: np.empty(resamples) for key in point}
    for b in range(resamples):
        idx = np.concatenate([g[rng.integers(g.size, size=g.size)] for g in groups])
        for key, value in _statistics(m[idx], stop[idx], sizes[idx], names, criteria).items():
            draws[key][b] = value
    se = {key: float(np.std(d[np.isfinite(d)], ddof=1)) if np.isfinite(d).sum() > 1
          else float("nan") for key, d in draws.items()}
    point.update(_tests(pm, criteria))
    rows = []
    for (obs, clause), (relation, limit, kind) in CLAUSES.items():
        if (obs, clause) not in point:
            continue
        bound = {"p": criteria.level, "fraction": criteria.close}.get(kind, limit)
        if bound is None:
            raise ValueError(f"margins: the clause {clause!r} of {obs} has no limit")
        x = point[(obs, clause)]
        distance = x - bound if relation in (">", ">=") else bound - x
        spread = se.get((obs, clause), float("nan"))
        band = max(spread if np.isfinite(spread) else 0.0, TIE_ATOL if kind == "loss" else 0.0)
        rows.append({"observation": obs, "clause": clause, "kind": kind, "statistic": x,
                     "relation": relation, "limit": bound, "distance": distance, "se": spread,
                     # NaN (a clause that could not be computed) holds nowhere
                     "holds": bool(distance > 0 if relation in (">", "<") else distance >= 0),
                     "within": bool(abs(distance) < band)})
    table = pd.DataFrame(rows)
    _check_against_verdicts(table, pm, criteria)
    return table


def _check_against_verdicts(table: pd.DataFrame, pm: pd.DataFrame, criteria: Criteria) -> None:
    """Every clause holding must be the verdict of :func:`domain_observations`, O1 to O6."""
    said = domain_observations(pm, criteria).set_index("observation")["holds"]
    for obs, part in table.groupby("observation"):
        if obs not in said.index or said[obs] is None or \
                (isinstance(said[obs], float) and np.isnan(said[obs])):
            continue
        if bool(part["holds"].all()) != bool(said[obs]):
            raise ValueError(f"margins: the clauses of {obs} give "
                             f"{verdict(bool(part['holds'].all()))}, its check "
                             f"{verdict(said[obs])}: a clause is missing or computed otherwise")


def edge(clauses: pd.DataFrame, holds) -> tuple[bool, pd.Series | None]:
    """Whether a verdict is on the edge, and the clause that decides how firm it is.

    A verdict that holds is as firm as its weakest clause (the least distance in standard
    errors); one that fails, as its firmest failing clause: it flips only if every failing
    clause does. A clause is on the edge when ``within`` its band (one standard error, or a
    tie: :func:`margins`); a test's clause, or one with no spread (se 0, deterministic
    units) and no tie, is firm. The clause returned for a verdict that fails firmly is a
    measured one (a distance in standard errors) when one fails firmly, else the test. Not
    judged (``holds`` None), or no clause: (False, None).

    Examples:
        >>> c = pd.DataFrame({"clause": ["gap", "sign"], "distance": [-0.002, 0.6],
        ...                   "se": [0.03, 0.4], "holds": [False, True],
        ...                   "within": [True, False]})
        >>> on_edge, row = edge(c, False)
        >>> on_edge, row["clause"]
        (True, 'gap')
    """
    if holds is None or (isinstance(holds, float) and np.isnan(holds)) or clauses.empty:
        return False, None
    se = clauses["se"].to_numpy(dtype=np.float64)
    within = clauses["within"].to_numpy(dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(clauses["distance"].to_numpy(dtype=np.float64)) / se,
                     np.inf)
    z = np.where(within, 0.0, np.nan_to_num(z, nan=np.inf))  # a tie: no distance at all
    if bool(holds):
        pick = int(np.argmin(z))
        return bool(within[pick]), clauses.iloc[pick]
    failing = ~clauses["holds"].to_numpy(dtype=bool)
    if not failing.any():
        return False, None
    firm = failing & ~within
    if firm.any():
        pool = firm & ~np.isnan(se) if (firm & ~np.isnan(se)).any() else firm
        return False, clauses.iloc[int(np.argmax(np.where(pool, z, -np.inf)))]
    return True, clauses.iloc[int(np.argmax(np.where(failing, z, -np.inf)))]


def verdict(holds) -> str:
    """An observation's ``holds`` as a word: "holds", "does not hold", or "n/a" (not judged).

    Examples:
        >>> verdict(True), verdict(False), verdict(None), verdict(float("nan"))
        ('holds', 'does not hold', 'n/a', 'n/a')
    """
    if holds is None or (isinstance(holds, float) and np.isnan(holds)):
        return "n/a"
    return "holds" if bool(holds) else "does not hold"


def carry_over(garnets: pd.DataFrame, domains: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Which observations carry over: the Garnet verdict beside each domain's, with evidence.

    Args:
        garnets: the paper preset's observation table (:func:`observations` on Garnets).
        domains: column name (e.g. ``"grid world, exact"``) -> :func:`domain_observations`.

    Returns:
        One row per observation: ``Garnets`` and one column per domain holding
        ``"holds"``, ``"does not hold"`` or ``"n/a"``, ``carries over`` (the domains where the
        Garnet verdict is also reached, as a count "k/n"), and ``evidence`` (each domain's
        measured figures).
    """
    base = garnets.set_index("observation")
    rows = []
    for key in base.index:
        row = {"observation": key, "Garnets": verdict(base.loc[key, "holds"])}
        same = judged = 0
        evidence = []
        for name, table in domains.items():
            t = table.set_index("observation")
            said = verdict(t.loc[key, "holds"]) if key in t.index else "n/a"
            row[name] = said
            if said != "n/a":
                judged += 1
                same += said == row["Garnets"]
            if key in t.index:
                evidence.append(f"{name}: {t.loc[key, 'measured']}")
        row["carries over"] = f"{same}/{judged}"
        row["evidence"] = "; ".join(evidence)
        rows.append(row)
    return pd.DataFrame(rows)
