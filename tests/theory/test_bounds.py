"""Table 1 bounds (Scherrer 2014), evaluated with the errors runs actually made."""

import numpy as np
import pytest

import nsrl
from nsrl import concentrability, initial_gaps, kakade_langford_bound, run_bounds, table1_bounds

SCHEMES = ["api", "api(0.1)", "cpi", "cpi(0.1)", "cpi+", "psdp", "nspi(5)"]
GARNETS = [(20, 2, 1, 0), (20, 3, 2, 1), (25, 2, 10, 2)]
SWEEP = [(g, gamma, 30 if gamma == 0.9 else 20) for g in GARNETS for gamma in (0.9, 0.99)]


def runs():
    """Each (Garnet, gamma, scheme) run with the paper's noisy projected greedy operator, as
    ((S, A, b, seed), gamma, K, mdp, scheme name, history, Table 1 rows); also read by
    benchmarks/bounds_measured.py."""
    for garnet, gamma, K in SWEEP:
        mdp = nsrl.garnet(*garnet[:3], gamma=gamma, seed=garnet[3])
        conc = concentrability(mdp, m=(1, 5), min_terms=K + 6)
        for name in SCHEMES:
            scheme = nsrl.make_scheme(name)
            h = nsrl.run(scheme, nsrl.ProjectedGreedy(mdp, noise=0.1), K, measure_errors=True,
                         keep_outputs=True, rng=np.random.default_rng(garnet[3]))
            yield garnet, gamma, K, mdp, name, h, run_bounds(scheme, h, mdp, conc=conc)


@pytest.fixture(scope="module")
def sweep():
    """Every run of :func:`runs` as (mdp, scheme name, history, Table 1 rows)."""
    return [(mdp, name, h, rows) for _, _, _, mdp, name, h, rows in runs()]


def test_measured_loss_never_exceeds_any_bound(sweep):
    for mdp, name, h, rows in sweep:
        for row, bound in rows.items():
            assert np.all(h.losses <= bound + 1e-9), (mdp, name, row, h.losses - bound)


def test_sweep_is_not_vacuous(sweep):
    # On the mixing Garnet (b = 10) these bounds say more than the trivial
    # mu (v* - v_pi) <= (r_max - r_min) / (1 - gamma): the check above can fail.
    informative = {0.9: ("psdp", "nspi(5)", "cpi"), 0.99: ("psdp", "cpi")}
    checked = 0
    for mdp, name, h, rows in sweep:
        if mdp.n_states == 25 and name in informative[mdp.gamma]:
            span = (mdp.R.max() - mdp.R.min()) / (1 - mdp.gamma)
            assert rows["best"][-1] < span / 1.5
            assert np.all(h.errors[h.steps != 0] > 0)  # the noisy operator did err
            checked += 1
    assert checked == 5


def test_rows_of_table1(sweep):
    names = {name: sorted(rows) for _, name, _, rows in sweep[: len(SCHEMES)]}
    assert names["api"] == ["C(1,0)", "C(2,1,0)", "best"]
    assert names["psdp"] == ["C(1)_pi*", "C_pi*", "best"]
    assert len(names["nspi(5)"]) == 5 and len(names["cpi+"]) == 3


@pytest.mark.parametrize("name", ["api", "nspi(3)", "psdp", "cpi(0.1)"])
def test_exact_greedy_bound_is_the_initial_term(name):
    # No error: the bound reduces to the inductions' starting term, and it still holds.
    mdp = nsrl.garnet(15, 3, 2, gamma=0.8, seed=4)
    scheme = nsrl.make_scheme(name)
    h = nsrl.run(scheme, nsrl.ExactGreedy(mdp), 15, measure_errors=True,
                 rng=np.random.default_rng(0))
    assert np.all(h.errors == 0)
    rows = run_bounds(scheme, h, mdp)
    gaps, k, g = initial_gaps(mdp), np.arange(1, 16), mdp.gamma
    if name == "psdp":
        expected = g**k * (gaps["D_empty"] + gaps["D_loop"])
    elif name == "cpi(0.1)":
        expected = (1 - 0.1 * (1 - g)) ** k * gaps["D0"]
    else:
        expected = g**k * gaps["D0"]
    np.testing.assert_allclose(rows["best"], expected)
    assert np.all(h.losses <= rows["best"] + 1e-12)


def _direct(conc, eps, m, k):
    """The proof's sums written out term by term (no convolution, no block trick)."""
    g, c, cs = conc.gamma, conc.c_at, conc.c_pi_star_at
    h = [sum(g ** (i + j * m) * c(i + j * m) for j in range(400)) for i in range(k)]
    row1 = sum(h[i] * eps[k - 1 - i] for i in range(k))
    row3 = sum((g**i * cs(i) + h[i] - g**i * c(i)) * eps[k - 1 - i] for i in range(k))
    blocks = sum(eps[max(e - m, 0) : e].max() for e in range(k, 0, -m))
    return row1, blocks, row3


def test_nspi_rows_match_the_written_out_sums():
    mdp = nsrl.garnet(8, 2, 3, gamma=0.7, seed=5)
    conc = concentrability(mdp, m=(3,), tol=1e-10)
    eps = np.random.default_rng(1).random(12)
    rows = table1_bounds("nspi(3)", eps, conc, {"D0": 0.0})
    g = mdp.gamma
    for k in (1, 4, 12):
        row1, blocks, row3 = _direct(conc, eps, 3, k)
        assert rows["C(2,3,0)"][k - 1] == pytest.approx(row1, rel=1e-9)
        assert rows["C(1,0)/3"][k - 1] == pytest.approx(conc.C1(0) / (1 - g) * blocks)
        assert rows["C(1)_pi*+C(2,3,3)"][k - 1] == pytest.approx(row3, rel=1e-9)
        assert rows["C_pi*+C(1,3)"][k - 1] == pytest.approx(
            conc.C_pi_star / (1 - g) * eps[:k].sum() + g**3 * conc.C1(3) / (1 - g) * blocks
        )
    # Each relaxation in the proof can only loosen the bound.
    assert np.all(rows["C(2,3,0)"] <= rows["C(1,0)/3"] + 1e-9)
    assert np.all(rows["C(1)_pi*+C(2,3,3)"] <= rows["C(2,3,0)"] + 1e-9)


def test_conservative_rows_match_the_theorem():
    mdp = nsrl.garnet(8, 2, 3, gamma=0.7, seed=5)
    conc = concentrability(mdp, tol=1e-10)
    eps, alphas = np.array([0.5, 0.2, 0.1]), np.array([0.3, 0.1, 0.0])
    gaps = {"D0": 2.0}
    g, C = mdp.gamma, conc.C1(0)
    delta = np.cumprod(1 - alphas * (1 - g))
    api = table1_bounds("api(0.3)", eps, conc, gaps, steps=alphas)["C(1,0)"]
    cpi = table1_bounds("cpi", eps, conc, gaps, steps=alphas)["C(1,0)"]
    np.testing.assert_allclose(api, C / (1 - g) * np.cumsum(alphas * eps) + 2 * delta)
    np.testing.assert_allclose(cpi, C / (1 - g) ** 2 * np.cumsum(alphas * eps) + 2 * delta)


def test_kakade_langford_bound_holds_for_random_stochastic_policies():
    mdp = nsrl.garnet(12, 3, 2, gamma=0.85, seed=6)
    conc = concentrability(mdp)
    rng = np.random.default_rng(0)
    for _ in range(20):
        table = rng.dirichlet(np.ones(3) * 0.3, size=12)
        pi = nsrl.Stochastic(table)
        assert nsrl.loss(mdp, pi) <= kakade_langford_bound(mdp, pi, conc) + 1e-9
    pi_star = nsrl.Deterministic(conc.pi_star)
    assert kakade_langford_bound(mdp, pi_star, conc) == pytest.approx(0.0, abs=1e-9)


def test_infinite_constants_give_infinite_bounds_without_warnings():
    base = nsrl.garnet(10, 2, 3, gamma=0.9, seed=7)
    nu = np.full(10, 1 / 9)
    nu[0] = 0.0  # nu misses a state that mu and every policy reach
    mdp = nsrl.FiniteMDP(base.P, base.R, 0.9, features=base.features, start=nu)
    h = nsrl.run(nsrl.API(), nsrl.ProjectedGreedy(mdp), 5, measure_errors=True,
                 rng=np.random.default_rng(0))
    rows = run_bounds("api", h, mdp)
    assert np.all(np.isinf(rows["best"]))


def test_bad_input():
    mdp = nsrl.garnet(6, 2, 2, gamma=0.9, seed=0)
    conc = concentrability(mdp)
    gaps = initial_gaps(mdp)
    with pytest.raises(ValueError, match="measure_errors"):
        table1_bounds("api", [0.1, np.nan], conc, gaps)
    with pytest.raises(ValueError, match="steps"):
        table1_bounds("cpi(0.1)", [0.1, 0.2], conc, gaps)
    with pytest.raises(TypeError, match="scheme"):
        table1_bounds(object(), [0.1], conc, gaps)
    with pytest.raises(ValueError, match="unknown scheme"):
        table1_bounds("foo", [0.1], conc, gaps)


def test_cli_bounds_json(capsys, tmp_path):
    import json

    from nsrl.cli import main

    assert main(["bounds", "--garnet", "12,2,3", "--gamma", "0.8", "--m", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    conc = concentrability(nsrl.garnet(12, 2, 3, gamma=0.8, seed=0), m=(3,))
    assert out["constants"]["C(2,3,3)"] == pytest.approx(conc.C2(3, 3))
    assert out["converged"] and out["c"][0] == 1.0
    path = tmp_path / "m.npz"
    nsrl.garnet(12, 2, 3, gamma=0.8, seed=0).save(path)
    assert main(["bounds", "--mdp", str(path)]) == 0
    assert "C(1)_pi*" in capsys.readouterr().out
    assert main(["bounds", "--garnet", "12,2,3", "--tol", "0"]) == 2
    assert "--tol" in capsys.readouterr().err
