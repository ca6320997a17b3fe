"""nsrl.schemes.rules against independent, one-run-at-a-time statements of the same rules."""

import math

import numpy as np
import pytest

from nsrl.schemes import API, CPI, NSPI, PSDP, APIAlpha, CPIAlpha, CPIPlus, rules


def test_line_search_steps_are_the_doublings_of_alpha_capped_at_one():
    alpha = np.array([0.3, 0.0, 1.0, 1e-3, 0.5, 0.25, 3e-7])
    owner, steps = rules.line_search_steps(alpha)
    for r, a in enumerate(alpha):
        n = max(0, math.ceil(math.log2(1.0 / a))) if 0 < a < 1.0 else 0
        want = [min(1.0, a * 2.0**i) for i in range(n + 1)] if a > 0 else []
        assert steps[owner == r].tolist() == want
    assert np.all(np.diff(owner) >= 0)


def one_run_choice(scores, rule, baseline):
    """The rule for one run's candidate scores (smallest step first), written plainly."""
    if rule == "best":
        return scores.index(max(scores))  # first maximum: the smallest step on ties
    if rule == "largest-improving":
        improving = [i for i, s in enumerate(scores) if s > baseline]
        return improving[-1] if improving else 0
    i = 0  # doubling: go on while the next one is at least as good
    while i + 1 < len(scores) and scores[i + 1] >= scores[i]:
        i += 1
    return i


@pytest.mark.parametrize("rule", rules.LINE_SEARCH_RULES)
def test_choose_steps_matches_the_one_run_rule(rule):
    rng = np.random.default_rng(0)
    alpha = rng.choice([0.0, 1.0, 0.3, 1e-2, 1e-4], size=60)
    owner, steps = rules.line_search_steps(alpha)
    scores = rng.integers(0, 4, size=owner.size).astype(float)  # many ties on purpose
    base = rng.integers(0, 4, size=alpha.size).astype(float)
    chosen = rules.choose_steps(owner, scores, rule, base[owner])
    runs = np.unique(owner)
    assert chosen.size == runs.size
    for r, c in zip(runs, chosen, strict=True):
        mine = np.flatnonzero(owner == r)
        assert owner[c] == r
        assert c - mine[0] == one_run_choice(scores[mine].tolist(), rule, base[r])


def test_cpi_step_is_kakade_langford_and_stops_below_two_thirds_epsilon():
    gamma, r_max, eps = 0.99, 1.0, 1e-3
    adv = np.array([0.0, 0.05, 0.0667, 0.07, 1.0, 1e6, np.nan])  # value units
    got = rules.cpi_step(adv, gamma, r_max, eps)
    for a_hat, step in zip(adv, got, strict=True):
        a = (1 - gamma) * a_hat
        want = min(1.0, (1 - gamma) * (a - eps / 3) / (4 * r_max)) if a >= 2 * eps / 3 else 0.0
        assert step == want
    assert got[-2] == 1.0 and got[-1] == 0.0  # capped at 1; a NaN advantage stops CPI
    assert rules.cpi_step(0.07, gamma, r_max, eps) == got[3]  # scalars give the same number
    # every step taken meets the paper's lower bound (1 - gamma) eps / (12 R)
    assert got[got > 0].min() >= (1 - gamma) * eps / (12 * r_max)


def test_memory_follows_each_schemes_fold():
    mix, window, sequence = APIAlpha(0.1), NSPI(4), PSDP()
    assert rules.memory_after(mix, 3, 0.1) == 4 and rules.memory_after(mix, 3, 1.0) == 1
    np.testing.assert_array_equal(rules.memory_after(mix, np.array([2, 5]), np.array([1.0, 0.5])),
                                  [1, 6])
    assert rules.start_memory(window) == rules.memory_after(window, 4) == 4
    assert rules.start_memory(sequence) == 0 and rules.memory_after(sequence, 7) == 8
    assert rules.start_memory(API()) == rules.memory_after(API(), 1) == 1


def test_the_step_rule_is_read_from_the_scheme():
    read = []

    def advantage():
        read.append(1)
        return 50.0

    assert rules.step_size(CPIAlpha(0.3), advantage, 0.99, 1.0) == 0.3 and not read
    assert rules.step_size(API(), advantage, 0.99, 1.0) == 1.0 and not read
    assert rules.step_size(CPI(), advantage, 0.99, 1.0) == rules.cpi_step(50.0, 0.99, 1.0, 1e-3)
    assert read == [1]


def test_the_mixture_fold_gives_the_new_policy_on_a_full_step():
    old, new = np.array([[0.2, 0.8]]), np.array([[1.0, 0.0]])
    assert rules.mix(old, new, np.array([1.0])).tolist() == new.tolist()
    np.testing.assert_allclose(rules.mix(old, new, 0.5), [[0.6, 0.4]])


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, True, "0.1", float("nan")])
def test_bad_alpha_is_refused(bad):
    for cls in (APIAlpha, CPIAlpha):
        with pytest.raises(ValueError, match="option 'alpha' should be a finite float in"):
            cls(bad)


@pytest.mark.parametrize("bad", [0, -1e-3, float("inf"), float("nan"), True])
def test_bad_epsilon_is_refused(bad):
    with pytest.raises(ValueError, match="option 'epsilon' should be a finite float > 0"):
        CPI(epsilon=bad)


def test_unknown_rule_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="'best', 'largest-improving', 'doubling'"):
        CPIPlus(line_search="golden-section")
    with pytest.raises(ValueError, match="best, largest-improving, doubling"):
        rules.choose_steps([0], [1.0], "golden-section")


def test_cpi_plus_with_alpha_min_steps_from_it_on_both_engines_and_never_stops():
    """alpha_min replaces CPI's step (0 where gamma = 1) as the smallest candidate."""
    import nsrl

    mdp = nsrl.garnet(14, 3, 2, seed=3)
    scheme = nsrl.make_scheme("cpi+", alpha_min=0.25)
    assert scheme.alpha_min == 0.25
    ref = [nsrl.run(nsrl.make_scheme("cpi+", alpha_min=0.25), nsrl.ProjectedGreedy(mdp), 8,
                    engine="reference", rng=np.random.default_rng(i)) for i in range(2)]
    out = nsrl.run(scheme, nsrl.ProjectedGreedy(mdp), 8, engine="batched",
                   rng=[np.random.default_rng(i) for i in range(2)])
    np.testing.assert_allclose(out.losses, [h.losses for h in ref], atol=1e-8)
    np.testing.assert_allclose(out.steps, [h.steps for h in ref], atol=1e-12)
    assert set(np.unique(out.steps)) <= {0.25, 0.5, 1.0} and (out.steps > 0).all()
