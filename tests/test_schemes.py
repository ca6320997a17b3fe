import numpy as np
import pytest

import nsrl
from nsrl.schemes import PAPER_SCHEMES
from nsrl.schemes.api import fold_in


@pytest.fixture(scope="module")
def garnet():
    return nsrl.garnet(40, 4, 2, seed=11)


def _run(name, op, k=20, seed=0, **kw):
    return nsrl.run(nsrl.make_scheme(name), op, k, rng=np.random.default_rng(seed), **kw)


def test_nspi_1_is_api(garnet):
    op = nsrl.ProjectedGreedy(garnet)
    api = _run("api", op, 30, keep_outputs=True)
    nspi = _run("nspi(1)", op, 30, keep_outputs=True)
    np.testing.assert_array_equal(api.losses, nspi.losses)
    for pi, loop in zip(api.outputs, nspi.outputs, strict=True):
        np.testing.assert_array_equal(pi.actions, loop.policies[0].actions)


def test_exact_api_is_policy_iteration(garnet):
    h = _run("api", nsrl.ExactGreedy(garnet), 30, keep_outputs=True)
    assert np.all(np.diff(h.losses) <= 1e-10)  # non-increasing
    first_zero = int(np.argmax(h.losses < 1e-9))
    assert h.losses[first_zero] < 1e-9 and first_zero < 29
    # the same sequence as textbook policy iteration from pi_0 = action 0
    actions = np.zeros(garnet.n_states, dtype=int)
    for pi in h.outputs[: first_zero + 1]:
        actions = nsrl.greedy_actions(garnet, nsrl.evaluate(garnet, nsrl.Deterministic(actions)))
        np.testing.assert_array_equal(pi.actions, actions)
    np.testing.assert_allclose(
        nsrl.evaluate(garnet, h.output), nsrl.optimal_value(garnet), atol=1e-8
    )


def test_exact_psdp_loss_bound_and_convergence(garnet):
    h = _run("psdp", nsrl.ExactGreedy(garnet), 200)
    g, r_max = garnet.gamma, garnet.r_max
    k = np.arange(1, 201)
    # (sigma_k)^inf starts with the optimal k-horizon policy; rewards are >= 0, so
    # v* - v_loop <= gamma^k (V_max + R_max), as v_{sigma_k ...} >= v_{sigma_k} - gamma^k V_max.
    assert np.all(h.losses <= g**k * (r_max / (1 - g) + r_max) + 1e-9)
    assert h.losses[-1] < 0.15 * h.losses[0] and h.memory.tolist() == k.tolist()


def test_exact_cpi_improves_nu_value_until_it_stops(garnet):
    scheme = nsrl.CPI(epsilon=1e-4)
    op = nsrl.ExactGreedy(garnet)
    scheme.start(nsrl.Constant(0))
    values = [op.value(scheme.output)]
    for _ in range(300):
        step = scheme.step(op, np.random.default_rng(0))
        if step.stopped:
            break
        values.append(op.value(scheme.output))
        assert 0 < step.alpha <= 1
    assert np.all(np.diff(values) > 0)
    assert len(values) > 10


def test_cpi_plus_steps_are_powers_of_two_of_cpi_step(garnet):
    op = nsrl.ProjectedGreedy(garnet)
    scheme = nsrl.CPIPlus()
    scheme.start(nsrl.Constant(0))
    rng = np.random.default_rng(3)
    for _ in range(5):
        pi = scheme.pi
        step = scheme.step(op, rng)
        if step.stopped:
            break
        base = scheme.step_of(step.greedy, op)
        ratio = np.log2(step.alpha / base)
        assert step.alpha == 1.0 or abs(ratio - round(ratio)) < 1e-9
        # the chosen candidate is the best nu-value among the line-search candidates
        best = op.value(scheme.pi)
        for i in range(12):
            a = min(1.0, base * 2**i)
            assert op.value(fold_in(pi, step.greedy.policy, a)) <= best + 1e-12


def test_memory_per_scheme(garnet):
    op = nsrl.ProjectedGreedy(garnet)
    assert _run("api", op, 5).memory.tolist() == [1] * 5
    assert _run("api(0.1)", op, 5).memory.tolist() == [2, 3, 4, 5, 6]
    assert _run("cpi(0.1)", op, 5).memory.tolist() == [2, 3, 4, 5, 6]
    assert _run("nspi(10)", op, 5).memory.tolist() == [10] * 5
    assert _run("psdp", op, 5).memory.tolist() == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("name", PAPER_SCHEMES + ("cpi",))
def test_same_seeds_same_numbers(garnet, name):
    op = nsrl.ProjectedGreedy(garnet)
    a, b = _run(name, op, 8, seed=5), _run(name, op, 8, seed=5)
    np.testing.assert_array_equal(a.losses, b.losses)
    np.testing.assert_array_equal(a.steps, b.steps)
    assert np.all(np.isfinite(a.losses)) and np.all(a.losses >= -1e-9)


def test_exact_operator_has_zero_greedy_error(garnet):
    for name in ("api", "cpi(0.1)", "psdp", "nspi(3)"):
        h = _run(name, nsrl.ExactGreedy(garnet), 5, measure_errors=True)
        np.testing.assert_allclose(h.errors, 0.0, atol=1e-9)
    h = _run("api", nsrl.ProjectedGreedy(garnet), 5, measure_errors=True)
    assert np.all(h.errors >= 0) and h.errors.max() > 0


@pytest.mark.parametrize(
    "bad",
    ["apx", "api(", "nspi", "nspi(0)", "nspi(2.5)", "psdp(3)", "api(0)", "cpi(1.5)", "cpi+(0.1)"],
)
def test_bad_scheme_names(bad):
    with pytest.raises(ValueError, match="scheme"):
        nsrl.make_scheme(bad)


@pytest.mark.parametrize(("name", "options", "says"), [
    ("api", {"bogus": 3}, "unknown option.*'bogus'.*takes no option"),
    ("cpi", {"line_search": "best"}, "unknown option.*'line_search'.*takes epsilon"),
    ("api(0.1)", {"alpha": 0.2}, "gives alpha in its name"),
    ("cpi+", {"epsilon": -1}, "option 'epsilon' should be a finite float > 0"),
])
def test_unknown_or_bad_options_are_refused(name, options, says):
    with pytest.raises(ValueError, match=says):
        nsrl.make_scheme(name, **options)


def test_run_refuses_bad_arguments(garnet):
    with pytest.raises(TypeError, match="greedy operator"):
        nsrl.run(nsrl.API(), object(), 3, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_iterations"):
        nsrl.run(nsrl.API(), nsrl.ExactGreedy(garnet), 0, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="Generator"):
        nsrl.run(nsrl.API(), nsrl.ExactGreedy(garnet), 3, rng=0)
    with pytest.raises(ValueError, match="features"):
        nsrl.ProjectedGreedy(nsrl.FiniteMDP(garnet.P, garnet.R, 0.9))
