"""Statistics that carry the verdicts of the powered bigger family (docs/bigger.md).

The unit of replication is a shard: one MDP of a grid-world size (its seed draws the
obstacles), or one set of run seeds on the mountain car (one model; the unit's seeds draw the
operator's noise and samples). Each unit runs every scheme once, so schemes are compared
**paired on shared units**. For every (variant, size):

* **intervals** (:func:`interval`): each scheme's final mean loss over units with a 95%
  Student-t interval, mean +- t_{0.975, n-1} s / sqrt(n) (s with ddof = 1); a bootstrap
  percentile interval (10 000 resamples from a fixed ``numpy`` Generator) is the other
  method. With one unit there is no interval (NaN); a deterministic variant (the mountain car
  with the exact operator) repeats one value over its units, and its interval has width 0;
* **paired comparisons** (:func:`paired_comparisons`): every pair of schemes, the mean of the
  per-unit differences with its t-interval, the two-sided paired t-test and the exact
  Wilcoxon signed-rank test, and Holm's step-down correction over the pairs of the cell (the
  family of comparisons is one (variant, size)), at level :data:`ALPHA`. Significance is the
  paired t-test's after Holm: with 5 units the two-sided Wilcoxon cannot go below
  2 / 2^5 = 0.0625, so it can never be significant there, and with 10 units not after Holm
  over 36 pairs (its least p-value, 2 / 2^10, is above 0.05 / 36); its p-value is reported
  beside. A per-unit difference within :data:`TIE_ATOL` is a tie (0: the solvers'
  round-off, not a difference of policies). Per-unit differences that are all equal are
  exact (a deterministic variant): p = 0 when they are non-zero, 1 when zero;
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
  it fails). :func:`carry_over` sets them beside the Garnet verdicts.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats as st

from nsrl.experiments.observations import Criteria, Final, comparisons, observations

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
    """Every pair of schemes per size, paired on shared units, Holm-corrected per size.

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
        of the tail), ``moved`` (max - min of the loss over the window), ``pi0``, ``relative``
        (moved / pi0) and ``flat`` (relative < tolerance and iterations >= min_iterations).
    """
    K = int(pm["iteration"].max())
    first = K - max(1, int(np.ceil(tail * K)))  # the tail's moves start from this iteration
    window = pm[pm["iteration"] >= max(first, 1)]
    g = window.groupby(["n_states", "mdp", "scheme"])["mean"]
    out = (g.max() - g.min()).rename("moved").reset_index()
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
    """The lowest Kendall tau between the overall ranking and each size's (O6's statistic)."""
    last = pm[pm["iteration"] == pm["iteration"].max()]
    mean = last.pivot_table(index=["n_states", "mdp"], columns="scheme", values="mean")
    overall = mean.mean()
    taus = [st.kendalltau(overall, part.mean()).statistic
            for _, part in mean.groupby(level="n_states")]
    return float(min(taus)) if taus else float("nan")


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
