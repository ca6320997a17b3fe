"""Section 5's observations as checks: they hold on tables built to satisfy them, and each
fails when the table contradicts it."""

import numpy as np
import pandas as pd
import pytest

from nsrl.experiments.observations import markdown_table, observations

# Final mean loss and within-MDP std of each scheme in a table where every observation of
# the paper holds (PSDP best and least variable, NSPI(m) from API towards PSDP, ...).
PAPER_LIKE = {
    "API": (30.0, 6.0), "API(0.1)": (21.0, 1.5), "CPI+": (20.0, 1.6), "CPI(0.1)": (20.4, 1.2),
    "NSPI(5)": (24.0, 3.0), "NSPI(10)": (21.5, 2.0), "NSPI(30)": (19.4, 1.0),
    "PSDP": (18.8, 0.5),
}


def table(levels=PAPER_LIKE, stopped=(0.8, 1.0), n_mdps=6, seed=0):
    """A per-MDP table (nsrl.experiments.stats.per_mdp's columns) with the given levels; the
    differences between schemes shrink with the branching factor, as the paper says."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in (50, 100, 200):
        for a in (2, 5, 10):
            for b, shrink in ((1, 1.0), (2, 0.6), (10, 0.2)):
                for mdp in range(n_mdps):
                    base = rng.uniform(10, 14)
                    for scheme, (mean, std) in levels.items():
                        value = base + shrink * mean + rng.normal(0, 0.05)
                        for k, frac in ((10, stopped[0]), (20, stopped[1]), (100, 1.0)):
                            rows.append((s, a, b, mdp, scheme, k, value, std * rng.uniform(0.9,
                                         1.1), 5, frac if scheme == "CPI+" else 0.0))
    return pd.DataFrame(rows, columns=["n_states", "n_actions", "branching", "mdp", "scheme",
                                       "iteration", "mean", "std", "runs", "stopped"])


def verdicts(pm):
    return dict(zip(*observations(pm)[["observation", "holds"]].T.values, strict=True))


def test_every_observation_holds_on_a_table_built_to_satisfy_them():
    assert verdicts(table()) == {k: True for k in ("O1", "O2", "O3", "O4", "O5", "O6", "C")}


@pytest.mark.parametrize("change, broken", [
    ({"API": (17.0, 6.0)}, {"O1", "O4", "O5", "C"}),  # API the best: PSDP not, nothing beats it
    ({"PSDP": (18.8, 3.0)}, {"O4"}),  # PSDP as variable as the others
    ({"NSPI(10)": (25.0, 2.0)}, {"O5"}),  # NSPI(m) not monotone in m
    ({"API(0.1)": (28.0, 1.5)}, {"O3"}),  # API(0.1) far from CPI(0.1)
])
def test_an_observation_fails_when_the_table_contradicts_it(change, broken):
    got = verdicts(table({**PAPER_LIKE, **change}))
    assert {k for k, v in got.items() if not v} == broken


def test_cpi_plus_must_stop_early_for_o2():
    assert verdicts(table(stopped=(0.3, 0.7)))["O2"] is False


def test_missing_schemes_are_reported_not_judged():
    pm = table({k: v for k, v in PAPER_LIKE.items() if k in ("API", "PSDP")})
    got = verdicts(pm)
    assert got["O2"] is None and got["O5"] is None and got["O1"] is True
    assert "n/a" in markdown_table(observations(pm))


def test_api_alone_is_reported_not_judged():
    """A sweep of API alone: O1 needs another scheme (it was a ValueError of max())."""
    got = verdicts(table({"API": PAPER_LIKE["API"]}))
    assert set(got.values()) == {None}


def test_a_sign_test_beside_the_wilcoxon_test():
    from nsrl.experiments.observations import paired_p
    # 4 of 5 differences negative: Binomial(5, 1/2) P(X >= 4) = 6/32
    assert paired_p(np.array([-1.0, -2.0, -3.0, -4.0, 0.5]), "sign") == pytest.approx(6 / 32)
    assert paired_p(np.zeros(4), "sign") == paired_p(np.zeros(4)) == 1.0


def test_robustness_names_the_verdicts_a_threshold_changes():
    from nsrl.experiments.observations import Criteria, flips, robustness
    # API(0.1) ~7% above CPI(0.1) (the levels shrink with b, over a common base): close at
    # 10%, not at 5%
    pm = table({**PAPER_LIKE, "API(0.1)": (23.4, 1.5)})
    rob = robustness(pm)
    assert rob.loc["O3", "default"] and not rob.loc["O3", "close 5%"]
    assert not rob.loc["O3", "robust"] and "O3 fails at close 5%" in flips(rob)
    # equal runs per MDP: ddof = 1 scales every within-MDP std alike, no verdict moves
    assert (rob["ddof 1"] == rob["default"]).all()
    with pytest.raises(ValueError, match="test should be one of"):
        Criteria(test="t-test")


def test_c_can_leave_out_the_sub_family_where_o6_says_differences_vanish():
    from nsrl.experiments.observations import Criteria
    # at b = 10 NSPI(5) is no better than API: C fails there only
    pm = table().copy()
    at10 = (pm["branching"] == 10) & (pm["scheme"] == "NSPI(5)")
    api = pm[(pm["branching"] == 10) & (pm["scheme"] == "API")]["mean"].to_numpy()
    pm.loc[at10, "mean"] = api + 0.01
    assert verdicts(pm)["C"] is False
    held = observations(pm, Criteria(skip_branching=(10,)))
    assert held.set_index("observation").loc["C", "holds"]


def test_one_run_per_mdp_leaves_o1_not_judged_within_mdps_but_judged_across():
    """One run per MDP has no within-MDP spread: O1 said False on stds of 0 before."""
    pm = table().assign(std=0.0, runs=1)
    row = observations(pm).set_index("observation").loc["O1"]
    assert row["holds"] is None and "one run per MDP" in row["measured"]
    from nsrl.experiments.observations import Criteria
    across = observations(pm, Criteria(variability="across")).set_index("observation")
    assert across.loc["O1", "holds"] is not None  # the spread of the MDPs' means


def test_o6_with_one_value_of_b_is_judged_on_n_s_and_n_a_and_not_at_all_with_one_of_each():
    pm = table()
    one_b = pm[pm["branching"] == 2]
    row = observations(one_b).set_index("observation").loc["O6"]
    assert row["holds"] and "one value of b" in row["measured"]
    shuffled = one_b.copy()  # a ranking that changes with n_S: the n_S clause fails
    flip = shuffled["n_states"] == 200
    shuffled.loc[flip, "mean"] = -shuffled.loc[flip, "mean"]
    assert verdicts(shuffled)["O6"] is False
    single = one_b[(one_b["n_states"] == 50) & (one_b["n_actions"] == 2)]
    row = observations(single).set_index("observation").loc["O6"]
    assert row["holds"] is None and "nothing to compare" in row["measured"]
