"""Concentrability coefficients (Scherrer 2014, Definition 1; Figure 2 and its appendix)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nsrl
from nsrl import FiniteMDP, concentrability


def chain(n, gamma, nu, n_actions=1):
    """0 -> 1 -> ... -> n-1 (absorbing), every action alike; mu = delta_0 in the tests."""
    P = np.zeros((n, n_actions, n))
    P[np.arange(n - 1), :, np.arange(1, n)] = 1.0
    P[n - 1, :, n - 1] = 1.0
    return FiniteMDP(P, np.zeros(n), gamma, start=nu)


def delta(i, n):
    x = np.zeros(n)
    x[i] = 1.0
    return x


def fork(gamma, nu):
    """State 0: action 0 -> state 1 (reward 1, absorbing), action 1 -> state 2 (absorbing)."""
    P = np.zeros((3, 2, 3))
    P[0, 0, 1] = P[0, 1, 2] = 1.0
    P[1, :, 1] = P[2, :, 2] = 1.0
    return FiniteMDP(P, np.array([0.0, 1.0, 0.0]), gamma, start=nu)


def random_mdp(seed, n_states, n_actions, gamma, zero_nu=False):
    rng = np.random.default_rng(seed)
    P = rng.random((n_states, n_actions, n_states)) * (rng.random((n_states, n_actions, n_states))
                                                      < 0.5)
    P[np.arange(n_states), :, rng.integers(n_states, size=n_states)] += 0.1
    P /= P.sum(axis=2, keepdims=True)
    nu = rng.random(n_states) + 0.05
    if zero_nu:
        nu[rng.integers(n_states)] = 0.0
    mu = rng.random(n_states) * (rng.random(n_states) < 0.7)
    mu[0] += 0.1
    return FiniteMDP(P, rng.random(n_states), gamma, start=nu / nu.sum()), mu / mu.sum()


def brute_force_c(mdp, mu, length):
    """max over all sequences of deterministic policies of (mu P_1 ... P_i)(s) / nu(s)."""
    S, A = mdp.n_states, mdp.n_actions
    matrices = [mdp.P[np.arange(S), np.array(a)] for a in itertools.product(range(A), repeat=S)]
    nu, out = mdp.start, []
    for i in range(length):
        best = np.zeros(S)
        for seq in itertools.product(matrices, repeat=i):
            x = mu.copy()
            for M in seq:
                x = x @ M
            best = np.maximum(best, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(best > 0, best / nu, 0.0)
        out.append(ratios.max())
    return np.array(out)


# --- hand-computed coefficients ----------------------------------------------------------


def test_chain_hand_computed():
    # nu = (1/2, 1/4, 1/4), mu = delta_0: c = 2, 4, 4, ...; gamma = 1/2.
    conc = concentrability(chain(3, 0.5, [0.5, 0.25, 0.25]), delta(0, 3), m=(2,), tol=1e-9)
    assert conc.c[:4] == pytest.approx([2, 4, 4, 4])
    assert conc.C1(0) == pytest.approx(3.0, abs=1e-8)  # (1-g)(2 + 4 g/(1-g))
    assert conc.C2(1, 0) == pytest.approx(3.5, abs=1e-8)  # (1-g)^2 (2 + 4 (1/(1-g)^2 - 1))
    assert conc.C2(2, 0) == pytest.approx(3.25, abs=1e-8)  # (1-g)(1-g^2)(2 + 4 * 5/3)
    assert conc.C1(1) == pytest.approx(4.0, abs=1e-8)
    assert conc.C1_pi_star() == pytest.approx(3.0, abs=1e-8)  # one action: pi* is the chain
    assert conc.C_pi_star == pytest.approx(1.0)  # d_{pi*,mu} = (1/2, 1/4, 1/4) = nu


def test_fork_hand_computed():
    # nu = (1/2, 1/3, 1/6): the worst sequence goes to state 2 (c = 6), pi* to state 1 (3).
    conc = concentrability(fork(0.5, [0.5, 1 / 3, 1 / 6]), delta(0, 3), tol=1e-9)
    assert conc.pi_star.tolist()[0] == 0
    assert conc.c[:3] == pytest.approx([2, 6, 6])
    assert conc.c_pi_star[:3] == pytest.approx([2, 3, 3])
    assert conc.C1(0) == pytest.approx(4.0, abs=1e-8)
    assert conc.C1_pi_star() == pytest.approx(2.5, abs=1e-8)
    assert conc.C_pi_star == pytest.approx(1.5)  # d = (1/2, 1/2, 0)


@pytest.mark.parametrize("seed", range(4))
def test_dp_equals_brute_force(seed):
    mdp, mu = random_mdp(seed, 3, 2, 0.8, zero_nu=seed == 3)
    conc = concentrability(mdp, mu, tol=1e-3)
    expected = brute_force_c(mdp, mu, 4)
    got = conc.c_at(np.arange(4))
    if seed == 3:  # a state with nu = 0: brute force gives the finite part, DP says inf
        assert np.isinf(got).any() or np.allclose(got, expected)
        got = np.where(np.isinf(got), expected, got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# --- infinity and truncation --------------------------------------------------------------


def test_periodic_infinity_is_exact():
    P = np.zeros((2, 1, 2))
    P[0, 0, 1] = P[1, 0, 0] = 1.0
    mdp = FiniteMDP(P, np.zeros(2), 0.9, start=[1.0, 0.0])
    conc = concentrability(mdp, [1.0, 0.0], min_terms=40)
    assert np.isinf(conc.c_at(np.arange(1, 40, 2))).all()
    assert conc.c_at(np.arange(0, 40, 2)).tolist() == [1.0] * 20
    assert conc.C1(0) == conc.C1(7) == conc.C2(2, 0) == np.inf
    assert conc.C_pi_star == np.inf


def test_tail_bound_holds_beyond_the_truncation():
    mdp = nsrl.garnet(15, 3, 2, gamma=0.9, seed=3)
    short = concentrability(mdp, tol=1e-1)
    long = concentrability(mdp, tol=1e-10)
    assert long.n_terms > short.n_terms
    np.testing.assert_allclose(long.c[: short.n_terms], short.c)
    assert long.c[short.n_terms :].max() <= short.c_tail + 1e-12
    assert short.c_tail <= 1 / mdp.start.min() + 1e-12  # never worse than the crude bound
    for C in ("C1", "C1_pi_star"):
        assert getattr(long, C)() <= getattr(short, C)() < getattr(long, C)() + 1e-1
    assert long.C2(3, 3) <= short.C2(3, 3) + 1e-12


def test_bad_input_is_rejected():
    mdp = nsrl.garnet(5, 2, 2, seed=0)
    with pytest.raises(ValueError, match="mu"):
        concentrability(mdp, mu=np.ones(4) / 4)
    with pytest.raises(ValueError, match="pi_star"):
        concentrability(mdp, pi_star=[0, 1])
    with pytest.raises(ValueError, match="m should"):
        concentrability(mdp, m=(0,))
    with pytest.raises(TypeError, match="FiniteMDP"):
        concentrability("mdp")


# --- Figure 2: order relations and the examples that separate them ------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_states=st.integers(2, 6),
    n_actions=st.integers(1, 3),
    gamma=st.floats(0.3, 0.95),
    m=st.integers(2, 6),
    zero_nu=st.booleans(),
)
def test_figure2_order_relations(seed, n_states, n_actions, gamma, m, zero_nu):
    mdp, mu = random_mdp(seed, n_states, n_actions, gamma, zero_nu)
    conc = concentrability(mdp, mu, m=(m,), tol=1e-7)
    g, gm, eps = gamma, gamma**m, 1e-6
    C10, C1m, C210 = conc.C1(0), conc.C1(m), conc.C2(1, 0)
    C2m0, C2mm = conc.C2(m, 0), conc.C2(m, m)
    finite = np.isfinite(conc.c)
    assert np.all(conc.c[finite] >= 1 - 1e-12) and np.all(conc.c_pi_star <= conc.c)
    assert conc.C_pi_star <= conc.C1_pi_star() + eps  # C_pi* -> C(1)_pi*
    assert conc.C1_pi_star() <= C10 + eps  # C(1)_pi* -> C(1,0)
    assert C1m <= C2mm / (1 - gm) + eps  # C(1,m) -> C(2,m,m)
    assert C10 <= C2m0 / (1 - gm) + eps  # C(1,0) -> C(2,m,0)
    assert C1m <= C10 / gm + eps and C2mm <= C2m0 / gm + eps  # dashed arrows, m finite
    assert C2m0 <= (1 - gm) / (1 - g) * C210 + eps  # C(2,1,0) -> C(2,m,0)
    # The converse (C(2,m,0) finite => C(2,1,0) finite). The appendix's chain of
    # inequalities slips a factor; 1 + floor(i/m) >= (i+1)/m gives this exact form:
    assert C210 <= m * (1 - g) / (1 - gm) * C2m0 + eps


def test_pi_star_finite_all_policies_infinite():
    # C(1)_pi* < inf = C(1,0): pi* stays where nu has mass, another policy leaves it.
    conc = concentrability(fork(0.9, [0.5, 0.5, 0.0]), delta(0, 3), m=(1,))
    assert conc.C_pi_star == pytest.approx(1.8)  # d_{pi*,mu} = (0.1, 0.9, 0)
    assert conc.C1_pi_star() == pytest.approx(2.0, abs=1e-4)
    assert conc.C1(0) == conc.C2(1, 0) == np.inf


@pytest.mark.parametrize("m", [1, 3])
def test_shifted_finite_unshifted_infinite(m):
    # c(0) = inf, c(i >= 1) = 1: C(1,m) and C(2,m,m) finite, C(1,0) and C(2,m,0) infinite.
    conc = concentrability(chain(2, 0.8, [0.0, 1.0]), delta(0, 2), m=(m,), tol=1e-8)
    assert conc.C1(m) == pytest.approx(1.0, abs=1e-7)
    assert conc.C2(m, m) == pytest.approx(1.0, abs=1e-7)
    assert conc.C1(0) == conc.C2(m, 0) == np.inf


@pytest.mark.parametrize("n", [5, 20, 60])
def test_c_pi_star_bounded_while_c1_pi_star_grows(n):
    # The appendix's MDP on N, truncated at n states: nu = d_{pi*,mu} gives C_pi* = 1 and
    # gamma^i c_pi*(i) = 1/(1-gamma) on the chain, so C(1)_pi* = n exactly.
    gamma = 0.8
    nu = (1 - gamma) * gamma ** np.arange(n)
    nu[-1] = gamma ** (n - 1)
    conc = concentrability(chain(n, gamma, nu), delta(0, n), tol=1e-7)
    assert conc.C_pi_star == pytest.approx(1.0)
    assert conc.C1_pi_star() == pytest.approx(n, abs=1e-6)


def test_c1_bounded_while_c2_grows():
    # c(i) = Theta(1 / (i^2 gamma^i)) (appendix): C(1,0) converges, C(2,1,0) grows like log n.
    gamma, values = 0.5, []
    for n in (10, 40, 160):
        i = np.arange(n)
        nu = (i + 1.0) ** 2 * gamma**i
        nu /= nu.sum()
        conc = concentrability(chain(n, gamma, nu), delta(0, n), tol=1e-8)
        c = 1 / nu[np.minimum(np.arange(4000), n - 1)]  # c(i) = 1 / nu(min(i, n-1))
        w = gamma ** np.arange(4000.0)
        assert conc.C1(0) == pytest.approx((1 - gamma) * np.sum(w * c), rel=1e-7)
        assert conc.C2(1, 0) == pytest.approx(
            (1 - gamma) ** 2 * np.sum((np.arange(4000) + 1) * w * c), rel=1e-7
        )
        values.append((conc.C1(0), conc.C2(1, 0)))
    (a0, b0), _, (a2, b2) = values
    assert a2 < 1.2 * a0  # bounded: (1-g) Z pi^2/6 in the limit
    assert b2 > 1.8 * b0  # (1-g)^2 Z H_n: grows without bound


def test_nu_equal_to_d_pi_star_makes_c_pi_star_one():
    # "for any MDP and mu there is a nu with C_pi* finite": nu = d_{pi*,mu}.
    mdp = nsrl.garnet(12, 3, 2, gamma=0.9, seed=1)
    pi_star = nsrl.Deterministic(nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp)))
    mu = np.full(12, 1 / 12)
    d = nsrl.occupancy(mdp, pi_star, nu=mu)
    conc = concentrability(mdp, mu, nu=d, pi_star=pi_star)
    assert conc.C_pi_star == pytest.approx(1.0)
