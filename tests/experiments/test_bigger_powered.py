"""The powered bigger family: its statistics on constructed frames, and a tiny run end to end."""

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from nsrl.cli import main
from nsrl.experiments import registry
from nsrl.experiments.bigger import inference, powered
from nsrl.experiments.observations import observations
from study.numbers import powered as pw

ROOT = Path(__file__).resolve().parents[2]


def _pm(values: dict[str, list[float]], n_states=(100,), iteration=5) -> pd.DataFrame:
    """Per-MDP statistics at one final iteration: scheme -> one loss per unit (one run)."""
    rows = []
    for scheme, losses in values.items():
        for i, loss in enumerate(losses):
            n = n_states[i % len(n_states)]
            rows.append({"n_states": n, "n_actions": 4, "branching": 4, "mdp": i,
                         "scheme": scheme, "iteration": iteration, "mean": loss, "std": 0.0,
                         "runs": 1})
    return pd.DataFrame(rows)


def test_the_t_interval_is_the_textbook_one_and_covers_95_percent():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    mean, low, high = inference.interval(x)
    half = st.t.ppf(0.975, 3) * x.std(ddof=1) / 2
    assert (mean, low, high) == pytest.approx((3.5, 3.5 - half, 3.5 + half), rel=1e-12)
    rng = np.random.default_rng(31)
    hits = [low <= 1.0 <= high for _, low, high in
            (inference.interval(rng.normal(1.0, 2.0, size=8)) for _ in range(4000))]
    # exact 95% for normal data; 4000 draws: SE 0.0034, the band is +- 3 SE
    assert 0.94 <= np.mean(hits) <= 0.96


def test_the_bootstrap_interval_is_reproducible_and_covers_about_95_percent():
    x = np.random.default_rng(1).exponential(size=40)
    a = inference.interval(x, method="bootstrap", rng=np.random.default_rng(7))
    b = inference.interval(x, method="bootstrap", rng=np.random.default_rng(7))
    assert a == b and a[1] < a[0] < a[2]
    rng = np.random.default_rng(32)
    hits = [low <= 1.0 <= high for _, low, high in
            (inference.interval(rng.exponential(size=40), method="bootstrap", rng=rng)
             for _ in range(300))]
    assert 0.88 <= np.mean(hits) <= 0.99  # percentile bootstrap, skewed data, n = 40


def test_degenerate_intervals_and_bad_input():
    assert np.isnan(inference.interval([3.0])[1:]).all()
    assert inference.interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)  # deterministic variant
    with pytest.raises(ValueError, match="finite"):
        inference.interval([1.0, np.nan])
    with pytest.raises(ValueError, match="rng"):
        inference.interval([1.0, 2.0], method="bootstrap")
    with pytest.raises(ValueError, match="method"):
        inference.interval([1.0, 2.0], method="normal")


def test_holm_is_the_step_down_rule():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert inference.holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert inference.holm([0.5, 0.9]).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="p-values"):
        inference.holm([0.1, 1.2])


def test_a_scheme_better_on_every_unit_is_significant_after_holm_and_equal_ones_are_not():
    rng = np.random.default_rng(3)
    base = rng.normal(20.0, 5.0, size=10)  # the units differ a lot; the pairs do not
    pm = _pm({"A": base - 2.0 + rng.normal(0, 0.1, 10), "B": base.copy(), "C": base.copy(),
              "D": base + rng.normal(0, 1.0, 10)})
    table = inference.paired_comparisons(inference.unit_table(pm)).set_index(["a", "b"])
    assert len(table) == 6
    assert table.loc[("A", "B"), "significant"] and table.loc[("A", "B"), "better"] == "A"
    assert table.loc[("A", "B"), "diff"] == pytest.approx(-2.0, abs=0.1)
    assert table.loc[("A", "B"), "p_wilcoxon"] == pytest.approx(2 / 2**10)  # exact, all < 0
    assert not table.loc[("B", "C"), "significant"] and table.loc[("B", "C"), "p_t"] == 1.0
    assert not table.loc[("B", "D"), "significant"]  # noise around zero
    assert (table["p_holm"] >= table["p_t"]).all()
    # unpaired, the same 2.0 shift is lost in the units' spread
    assert st.ttest_ind(base - 2.0, base).pvalue > 0.05


def test_equal_per_unit_differences_are_exact():
    pm = _pm({"A": [1.0, 1.0], "B": [3.0, 3.0], "C": [1.0, 1.0]})
    table = inference.paired_comparisons(inference.unit_table(pm)).set_index(["a", "b"])
    assert table.loc[("A", "B"), "p_t"] == 0.0 and table.loc[("A", "B"), "significant"]
    assert table.loc[("A", "C"), "p_t"] == 1.0 and not table.loc[("A", "C"), "significant"]


def test_flatness_reads_the_last_tenth_against_pi0():
    K = 50
    rows = []
    for scheme, curve in (("flat", 10 + 0.0 * np.arange(K)), ("slow", 10 - 0.02 * np.arange(K))):
        for k in range(1, K + 1):
            rows.append({"n_states": 100, "mdp": 0, "scheme": scheme, "iteration": k,
                         "mean": curve[k - 1]})
    pm = pd.DataFrame(rows)
    pi0 = pd.Series([20.0], index=pd.MultiIndex.from_tuples([(100, 0)],
                                                            names=["n_states", "mdp"]))
    out = inference.flatness(pm, pi0).set_index("scheme")
    assert out.loc["flat", "flat"] and out.loc["flat", "window"] == 45
    # iterations 45..50 move 5 x 0.02 = 0.1: 0.5% of pi_0's 20 (flat), 2% of 5 (not)
    assert out.loc["slow", "moved"] == pytest.approx(0.1) and out.loc["slow", "flat"]
    assert out.loc["slow", "change"] == pytest.approx(-0.1)  # still falling
    assert out.loc["flat", "change"] == 0.0
    steep = inference.flatness(pm, pi0 / 4).set_index("scheme")
    assert steep.loc["flat", "flat"] and not steep.loc["slow", "flat"]
    assert steep.loc["slow", "relative"] == pytest.approx(0.02)
    short = pm[pm["iteration"] <= 40]
    assert not inference.flatness(short, pi0)["flat"].any()  # fewer than 50 iterations
    with pytest.raises(ValueError, match="pi_0"):
        inference.flatness(pm, pi0.iloc[:0])


def test_c_leaves_out_the_comparisons_its_test_cannot_decide_and_fails_the_worse_ones():
    # 10 units at 100 states, 5 at 400: every scheme below API on every unit. The one-sided
    # Wilcoxon at 1% cannot decide on 5 units (least p 1/32), so the paper preset's check
    # fails C there whatever the data; the family leaves those comparisons out
    rng = np.random.default_rng(9)
    base = rng.normal(20.0, 1.0, size=15)
    sizes = [100] * 10 + [400] * 5
    values = {"API": base + 5, "CPI(0.1)": base, "CPI+": base + 1, "PSDP": base - 1}
    rows = []
    for scheme, losses in values.items():
        rows += [{"n_states": sizes[i], "n_actions": 4, "branching": 4, "mdp": i, "scheme": scheme,
                  "iteration": 5, "mean": x, "std": 0.0, "runs": 1} for i, x in enumerate(losses)]
    pm = pd.DataFrame(rows)
    paper = observations(pm, inference.CRITERIA).set_index("observation").loc["C"]
    assert not paper["holds"] and "at n_states=400" in paper["measured"]
    c = inference.domain_observations(pm).set_index("observation").loc["C"]
    assert c["holds"] is True
    assert "12/12 judged" in c["measured"] and "n_states=400, 5 units" in c["measured"]
    # a scheme above API where the test cannot decide still fails: no test could find it better
    worse = pm.copy()
    worse.loc[(worse["scheme"] == "CPI+") & (worse["n_states"] == 400), "mean"] += 10
    c = inference.domain_observations(worse).set_index("observation").loc["C"]
    assert c["holds"] is False and "CPI+ at n_states=400" in c["measured"]
    # nothing decidable (2 units in all, as the car's exact operator): C is not judged
    two = pm[pm["mdp"].isin([0, 1])]
    assert inference.domain_observations(two).set_index("observation").loc["C", "holds"] is None
    assert inference.least_p("wilcoxon", 7) < 0.01 < inference.least_p("wilcoxon", 6)


def test_the_observations_are_the_paper_preset_s_with_o6_judged_on_its_n_s_clause():
    rng = np.random.default_rng(5)
    base = rng.normal(20.0, 1.0, size=20)
    values = {"API": base + 5 + rng.normal(0, 3, 20), "CPI(0.1)": base, "CPI+": base + 0.5,
              "PSDP": base - 1}
    pm = _pm(values, n_states=(100, 400))
    obs = inference.domain_observations(pm).set_index("observation")
    paper = observations(pm, inference.CRITERIA).set_index("observation")
    for key in ("O1", "O2", "O3", "O4", "O5", "C"):
        assert obs.loc[key, "measured"] == paper.loc[key, "measured"]
    # one b: O6 on its n_S clause, in the paper preset's checks as in the domain's
    assert obs.loc["O6", "holds"] and "one value of b" in obs.loc["O6", "measured"]
    assert paper.loc["O6", "holds"] and "one value of b" in paper.loc["O6", "measured"]
    # one size as well (a family run at 10^4 only so far): each size's ranking is the
    # overall one, so a tau of 1 would pass O6 vacuously; it is not judged
    one = inference.domain_observations(_pm(values)).set_index("observation")
    names = ["API", "API(0.1)", "CPI", "CPI(0.1)", "CPI+", "NSPI(5)", "PSDP", "NSPI(10)",
             "NSPI(30)"]  # the family's: every verdict then a bool
    every = _pm({s: base + i for i, s in enumerate(names)})
    assert inference.domain_observations(every).set_index("observation").loc["O6", "holds"] \
        is None
    assert one.loc["O6", "holds"] is None and "nothing to compare" in one.loc["O6", "measured"]
    table = inference.carry_over(
        pd.DataFrame({"observation": ["O1", "O3"], "holds": [True, True], "measured": "x"}),
        {"grid": obs.reset_index()})
    assert table.set_index("observation").loc["O1", "carries over"] == \
        ("1/1" if obs.loc["O1", "holds"] else "0/1")
    assert "grid: " in table.loc[0, "evidence"]


def test_the_registered_family_has_the_brief_s_design():
    fam = registry.EXPERIMENTS["bigger-powered"].sweeps()
    assert len(fam) == 16
    for name, sweep in fam.items():
        dom, op, size = name.split("-")
        assert sweep.n_runs == 1 and sweep.n_iterations >= 50 and len(sweep.schemes) == 9
        units = {"1e4": 10, "1e5": 5}[size]
        assert sweep.n_mdps == (2 if (dom, op) == ("car", "exact") else units)
        assert sweep.n_states == ({"1e4": 10_000, "1e5": 100_000}[size],)
    assert {s.operator.name for s in fam.values()} == {"exact", "projected", "lstdq", "rollout-csc"}


def test_the_tiny_family_runs_resumes_and_is_analysed_end_to_end(tmp_path, monkeypatch):
    out = tmp_path / "p"
    cmd = ["reproduce", "--preset", "bigger-powered-tiny", "--out", str(out), "--backend",
           "sequential", "--no-plot"]
    assert main(cmd + ["--limit", "1"]) == 0  # interrupted: one shard per variant
    assert not (out / "bigger-powered-tiny.md").exists()
    first = (out / "grid-lstdq-25" / "shards" / "s025_a04_b04_m000.parquet").read_bytes()
    assert main(cmd + ["--resume"]) == 0
    # the shard computed before the interruption was kept, not recomputed
    assert (out / "grid-lstdq-25" / "shards" / "s025_a04_b04_m000.parquet").read_bytes() == first
    sessions = [json.loads(x) for x in (out / "grid-lstdq-25" / "sessions.jsonl").read_text()
                .splitlines()]
    assert sum(e["event"] == "start" for e in sessions) == 2
    iv = pd.read_csv(out / "bigger-powered-tiny_intervals.csv")
    assert len(iv) == 16 * 9 and (iv["low"] <= iv["mean"]).all()
    assert set(iv["units"]) == {2}
    car = iv[iv["variant"] == "car-exact-25"]
    assert (car["low"] == car["high"]).all()  # the car's exact variant is deterministic
    cmp_ = pd.read_csv(out / "bigger-powered-tiny_comparisons.csv")
    assert len(cmp_) == 16 * 36
    # Holm over the family's 576 beside Holm over each variant's 36
    assert (cmp_["p_holm_family"] >= cmp_["p_holm"]).all()
    assert not (cmp_["significant_family"] & ~cmp_["significant"]).any()
    units = pd.read_csv(out / "bigger-powered-tiny_units.csv")
    assert len(units) == 16 * 2 * 9
    c = pd.read_csv(out / "bigger-powered-tiny_c.csv")
    assert set(c["size"].astype(str)) == {"all", "25", "36"} and not c["testable"].any()
    margins = pd.read_csv(out / "bigger-powered-tiny_margins.csv")
    assert set(margins["observation"]) == {"O1", "O2", "O3", "O4", "O5", "O6",
                                           inference.DIRECT}
    assert len(margins.groupby(["domain", "operator"])) == 8
    flat = pd.read_csv(out / "bigger-powered-tiny_flatness.csv")
    assert not flat["flat"].any()  # 4 iterations < 50: the check says so
    obs = pd.read_csv(out / "bigger-powered-tiny_observations.csv")
    assert len(obs) == 8 * 7
    assert "Not met" in (out / "bigger-powered-tiny.md").read_text()
    # the docs' renderers read the same files
    (out / "docs" / "paper").mkdir(parents=True)
    shutil.copy(ROOT / pw.GARNETS, out / pw.GARNETS)
    text = pw.intervals_table(out, "", "bigger-powered-tiny", "car", "25")
    assert len(text.splitlines()) == 2 + 9 and "| API | " in text and " [" in text
    carry = pw.carry_over_table(out, "", "bigger-powered-tiny", "lstdq")
    assert carry.splitlines()[0].startswith(  # each domain names the sizes it pools
        "| observation | Garnets | grid world (25, 36) | mountain car (25, 36)")
    assert len(carry.splitlines()) == 2 + 7
    # a later analysis reads pi_0's losses back instead of recomputing them ...
    from nsrl.experiments import execution
    from nsrl.experiments.bigger import analysis
    pi0 = out / "bigger-powered-tiny_pi0.csv"
    before = pi0.read_bytes()

    def refused(*args, **kwargs):
        raise AssertionError("pi_0's loss recomputed although its table was complete")
    with monkeypatch.context() as m:
        m.setattr(analysis, "exact_loss", refused)
        execution.write_analysis(out, powered.TINY)
    assert pi0.read_bytes() == before
    # ... and an incomplete table is recomputed into a regular file, the same values
    pd.read_csv(pi0).iloc[:-1].to_csv(pi0, index=False)
    execution.write_analysis(out, powered.TINY)
    assert not pi0.is_symlink()
    assert pd.read_csv(pi0).equals(pd.read_csv(io.BytesIO(before)))


def test_family_refuses_empty_units():
    with pytest.raises(ValueError, match="units"):
        powered.family("x", {}, 50)


def test_round_off_differences_are_ties_not_significant():
    # Deterministic units (the car with the exact operator): two schemes that reach the same
    # policies differ by their solvers' round-off; that is no difference.
    pm = _pm({"A": [1.0, 1.0], "B": [1.0 + 2e-14, 1.0 + 2e-14], "C": [1.0 + 3e-7, 1.0 - 1e-7],
              "D": [1.0 + 2e-6, 1.0 + 2e-6]})
    table = inference.paired_comparisons(inference.unit_table(pm)).set_index(["a", "b"])
    for pair in [("A", "B"), ("A", "C"), ("B", "C")]:
        assert table.loc[pair, "p_t"] == 1.0 and not table.loc[pair, "significant"], pair
        assert table.loc[pair, "diff"] == 0.0
    assert table.loc[("A", "D"), "significant"] and table.loc[("A", "D"), "better"] == "A"


def test_the_answer_tables_read_paired_differences_both_ways_and_mark_the_family():
    cmp = pd.DataFrame({"a": ["API", "API", "CPI(0.1)"], "b": ["CPI", "CPI(0.1)", "CPI"],
                        "diff": [-3.0, 2.0, -5.0], "low": [-4.0, 1.5, -6.0],
                        "high": [-2.0, 2.5, -4.0], "significant": [True, True, False],
                        "significant_family": [True, False, False],
                        "better": ["API", "CPI(0.1)", None]})
    # "**": significant over the family as well, "*": over the variant's pairs only
    assert pw.paired(cmp, "CPI", "API") == "3.00 [2.00, 4.00]**"  # the row is (API, CPI)
    assert pw.paired(cmp, "API", "CPI(0.1)") == "2.00 [1.50, 2.50]*"
    assert pw.paired(cmp, "CPI(0.1)", "CPI") == "-5.00 [-6.00, -4.00]"
    with pytest.raises(ValueError, match="no single comparison of PSDP and API"):
        pw.paired(cmp, "PSDP", "API")
    iv = pd.DataFrame({"scheme": ["API", "CPI", "CPI(0.1)"], "mean": [4.0, 7.0, 2.0]})
    assert pw.answer_cell("O1", iv, cmp) == "2 of 3; minus CPI: -3.00 [-4.00, -2.00]**"
    with pytest.raises(ValueError, match="no answer table for 'C'"):
        pw.answer_cell("C", iv, cmp)  # C has a table of its own, on C's test


def test_family_holm_is_holm_over_every_comparison_of_the_family():
    # two made-up variants of three comparisons each
    c = pd.DataFrame({"variant": ["v1"] * 3 + ["v2"] * 3,
                      "p_t": [0.001, 0.012, 0.3, 0.004, 0.02, np.nan]})
    c["p_holm"] = np.concatenate([inference.holm(c["p_t"].fillna(1.0)[:3]),
                                  inference.holm(c["p_t"].fillna(1.0)[3:])])
    c["significant"] = c["p_holm"] < 0.05
    out = inference.family_holm(c)
    # by hand: sorted 0.001, 0.004, 0.012, 0.02, 0.3, 1 (NaN: no test) times 6..1, running max
    expected = {0: 0.006, 3: 0.02, 1: 0.048, 4: 0.06, 2: 0.6, 5: 1.0}
    assert out["p_holm_family"].tolist() == pytest.approx([expected[i] for i in range(6)])
    assert out["significant_family"].tolist() == [True, True, False, True, False, False]
    assert c["significant"].tolist() == [True, True, False, True, True, False]
    # Holm over more tests never adjusts a p-value down: family => per variant
    assert not (out["significant_family"] & ~out["significant"]).any()
    assert (out["p_holm_family"] >= out["p_holm"]).all()
    assert "p_holm_family" not in c.columns  # the input is left alone


def test_kendall_tau_counts_round_off_as_a_tie_and_reads_both_size_rankings():
    rng = np.random.default_rng(12)
    for _ in range(200):  # no two values within the tolerance: scipy's tau-b
        x, y = rng.normal(size=7), rng.normal(size=7)
        assert inference.kendall_b(x, y) == pytest.approx(st.kendalltau(x, y).statistic)
    x, y = rng.integers(0, 3, 9).astype(float), rng.integers(0, 3, 9).astype(float)
    assert inference.kendall_b(x, y) == pytest.approx(st.kendalltau(x, y).statistic)
    # three schemes at one policy, 1e-12 apart in two orders: no disagreement at all
    a = np.array([1.0, 2.0, 5.0, 5.0 + 1e-12, 5.0 + 2e-12])
    b = np.array([1.0, 2.0, 5.0 + 2e-12, 5.0 + 1e-12, 5.0])
    assert inference.kendall_b(a, b) == 1.0 and st.kendalltau(a, b).statistic < 0.6
    # 10^4's order A < B < C < D, 10^5's B < C < D < A: a direct tau of 0. The pooled ranking
    # (10 units against 5) is B < C < A < D, a tau of 1/3 with 10^4's and 2/3 with 10^5's:
    # the preset's reading, the lower of the two, is above the direct one
    lo = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 4.0}
    hi = {"A": 9.0, "B": 2.5, "C": 2.6, "D": 4.0}
    rows = {s: [lo[s]] * 10 + [hi[s]] * 5 for s in lo}
    mean = _pm(rows, n_states=[10] * 10 + [20] * 5).pivot_table(
        index=["n_states", "mdp"], columns="scheme", values="mean")
    pooled, direct = inference.size_taus(mean)
    assert direct == pytest.approx(
        st.kendalltau(list(lo.values()), list(hi.values())).statistic)
    assert direct == pytest.approx(0.0)
    assert pooled == pytest.approx(min(st.kendalltau(mean.mean(), part.mean()).statistic
                                       for _, part in mean.groupby(level="n_states")))
    assert pooled == pytest.approx(1 / 3)


def _two_sizes(values: dict[str, list[float]]) -> pd.DataFrame:
    """Per-MDP statistics with 10 units at 100 states then 5 at 400 (the family's shape)."""
    return _pm(values, n_states=[100] * 10 + [400] * 5)


def test_margins_give_each_clause_its_distance_and_standard_error():
    rng = np.random.default_rng(8)
    base = rng.normal(20.0, 1.0, size=15)
    names = ["API", "API(0.1)", "CPI", "CPI(0.1)", "CPI+", "NSPI(5)", "NSPI(10)", "NSPI(30)",
             "PSDP"]
    values = {s: base + i for i, s in enumerate(names)}
    values["API(0.1)"] = values["CPI(0.1)"] * 1.1  # 9.5% apart (relative to their average)
    pm = _two_sizes(values)
    m = inference.margins(pm, resamples=400).set_index(["observation", "clause"])
    o3 = m.loc[("O3", "API(0.1) and CPI(0.1) apart")]
    a, c = values["API(0.1)"].mean(), values["CPI(0.1)"].mean()
    assert o3["statistic"] == pytest.approx(abs(a - c) / ((a + c) / 2))
    assert o3["distance"] == pytest.approx(0.10 - o3["statistic"]) and o3["holds"]
    # the bootstrap's standard error: a few tenths of a point of the gap here
    assert 0 < o3["se"] < 0.01 and o3["within"] == (abs(o3["distance"]) < o3["se"])
    # every verdict the clauses give is the check's (margins raises otherwise)
    obs = inference.domain_observations(pm).set_index("observation")["holds"]
    for key in ("O1", "O2", "O3", "O4", "O5", "O6"):
        assert m.loc[key, "holds"].all() == bool(obs[key]), key
    # the same bootstrap seed, the same table
    again = inference.margins(pm, resamples=400).set_index(["observation", "clause"])
    pd.testing.assert_frame_equal(m, again)
    # O6 on both readings; the direct one is the tau between the sizes' means
    by_size = [part.mean() for _, part in inference.unit_table(pm).groupby(level="n_states")]
    assert m.loc[(inference.DIRECT, "Kendall tau, 10^4 against 10^5"), "statistic"] == \
        pytest.approx(inference.kendall_b(by_size[0].to_numpy(), by_size[1].to_numpy()))


def test_a_verdict_within_a_standard_error_or_a_tie_is_on_the_edge():
    # a failing "close" at 10.02% (the grid world's O3) with a standard error of 6 points
    c = pd.DataFrame({"observation": "O3", "clause": ["apart", "higher"],
                      "kind": ["fraction", "loss"], "statistic": [0.1002, 0.57],
                      "relation": ["<=", ">"], "limit": [0.1, 0.0],
                      "distance": [-0.0002, 0.57], "se": [0.063, 0.44],
                      "holds": [False, True], "within": [True, False]})
    on_edge, row = inference.edge(c, False)
    assert on_edge and row["clause"] == "apart"
    text = pw.verdict_cell(False, c)
    assert text.startswith("does not hold (on the edge): apart 10.02%, against <= 10%")
    assert "margin -0.02 pp, se 6.30 pp" in text
    # the same verdict 12 points short of 10% is firm
    firm = c.assign(statistic=[0.22, 0.57], distance=[-0.12, 0.57], within=[False, False])
    assert pw.verdict_cell(False, firm).startswith("does not hold: apart 22.00%")
    # a verdict that holds is as firm as its weakest clause: here a tie of round-off
    tie = c.assign(statistic=[0.0, 3e-14], distance=[0.1, 3e-14], se=[0.0, 3e-14],
                   holds=[True, True], within=[False, True])
    assert pw.verdict_cell(True, tie) == ("holds (on the edge): higher 3e-14, against > 0: "
                                          "a tie (within the solvers' 1e-06)")
    # a failing test is firm, and the measured clause that fails firmly is the one shown
    test = pd.DataFrame({"observation": "O1", "clause": ["p", "mean"], "kind": ["p", "loss"],
                         "statistic": [0.5, -9.0], "relation": ["<", ">"], "limit": [0.01, 0.0],
                         "distance": [-0.49, -9.0], "se": [np.nan, 1.0],
                         "holds": [False, False], "within": [False, False]})
    on_edge, row = inference.edge(test, False)
    assert not on_edge and row["clause"] == "mean"
    assert inference.edge(test, None) == (False, None)


def test_c_tests_list_each_comparison_as_the_verdict_judges_it():
    rng = np.random.default_rng(9)
    base = rng.normal(20.0, 1.0, size=15)
    values = {"API": base + 5, "CPI(0.1)": base, "CPI+": base + 1, "PSDP": base - 1}
    values["CPI+"][10:] += 10  # above API on average at 400 states, where no test decides
    c = inference.c_tests(_two_sizes(values)).set_index(["size", "scheme"])
    assert set(c.index.get_level_values("size")) == {"all", "100", "400"}
    assert c.loc[("100", "PSDP"), "result"] == "below API" and c.loc[("100", "PSDP"), "testable"]
    assert c.loc[("400", "PSDP"), "result"] == "not testable"
    assert c.loc[("400", "CPI+"), "result"] == "not below API"
    assert c.loc[("400", "PSDP"), "p"] == pytest.approx(1 / 32)  # the least p on 5 units
    assert inference.domain_observations(_two_sizes(values)).set_index(
        "observation").loc["C", "holds"] is False
    cell = pw.c_cell(c.reset_index()[lambda t: t["size"] == "400"])
    assert cell == "untestable on 5 units: 2 of 3 below API on average; above it: CPI+"
    assert pw.c_cell(c.reset_index()[lambda t: t["size"] == "100"]) == "3 of 3"


def _check_script():
    """benchmarks/check_provenance.py as a module (its sibling import needs benchmarks/)."""
    import importlib.util
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("check_provenance",
                                                      ROOT / "benchmarks" / "check_provenance.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def test_the_provenance_check_tells_round_off_from_another_code():
    check = _check_script()
    rng = np.random.default_rng(4)
    n = 200
    old = {"scheme": np.repeat(["API", "PSDP"], n // 2).astype(object), "run": np.zeros(n),
           "iteration": np.tile(np.arange(1, n // 2 + 1), 2), "memory": np.ones(n, np.int32),
           "step": np.zeros(n), "loss": rng.uniform(1, 50, n)}
    same = check.compare(dict(old), old)
    assert same["bitwise"] and check.verdict(same, 1e-8, 1e-12) == "bitwise"
    # the same code on other kernels: a few ulps on most rows, up to 1e-10 on a few
    host = dict(old, loss=old["loss"] * (1 + 2e-16 * rng.choice([-1, 0, 1], n)))
    host["loss"][:3] += 7e-11
    c = check.compare(host, old)
    assert not c["bitwise"] and c["max"] == pytest.approx(7e-11, rel=0.01)
    assert check.verdict(c, 1e-8, 1e-12) == "round-off"
    # another commit: every row moved by the solver's own error (another v*)
    other = dict(old, loss=old["loss"] + 2.5e-11)
    c = check.compare(other, old)
    assert check.verdict(c, 1e-8, 1e-12) == "differs" and c["apart"] == ["API", "PSDP"]
    assert check.rows_of(old, ["PSDP"])["scheme"].tolist() == ["PSDP"] * (n // 2)
    # the committed check's rows, as the docs read them
    rows = pw.provenance_checks(ROOT)
    assert {"bitwise", "round-off", "differs"} >= set(rows["verdict"]) and len(rows) >= 2
    # the learner variants recomputed and checked on one machine repeat bit for bit
    learners = rows[rows["variant"].str.contains("lstdq|rollout")]
    assert len(learners) and (learners["verdict"] == "bitwise").all()
