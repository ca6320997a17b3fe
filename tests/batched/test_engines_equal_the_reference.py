"""The batched engines equal the reference loop (nsrl.run's two engines), generated from the
scheme registry.

Every registered scheme name (with each kind of argument it takes) is run end to end through
every solver branch an engine can take: the branch is chosen by passing a
:class:`~nsrl.batched.linalg.solvers.Solvers` with other thresholds, so that small MDPs stay
fast. A separate check makes sure each branch is really taken.
"""

import inspect

import numpy as np
import pytest
from fixtures import registered_names

import nsrl
from nsrl.batched import engine_for, has_engine
from nsrl.batched.linalg.solvers import Solvers
from nsrl.schemes import API, SCHEMES, make_scheme

# Solver branch -> (Garnet (n_S, n_A, b), Solvers that send these MDPs down that branch).
BRANCHES = {
    "functional-graph": ((14, 3, 1), Solvers()),
    "direct-lu": ((14, 3, 2), Solvers()),
    "woodbury": ((16, 3, 2), Solvers(woodbury_min_states=1)),
    "gmres": ((16, 3, 3), Solvers(gmres_min_branching=3, gmres_min_states=1)),
    "krylov-loop": ((16, 3, 2), Solvers(psdp_dense_max=1)),
    "mixed-precision": ((16, 3, 2), Solvers(mixed_min_states=1)),
}


@pytest.fixture(scope="module", params=list(BRANCHES), ids=list(BRANCHES))
def branch(request):
    shape, solvers = BRANCHES[request.param]
    return nsrl.garnet(*shape, seed=11), solvers


@pytest.mark.parametrize("name", registered_names())
def test_batched_engine_equals_the_reference(branch, name):
    """Same seeds, same draws, same decisions: losses to 1e-8, steps to 1e-12, memory exactly."""
    mdp, solvers = branch
    n_runs, k = 3, 12
    ref = [nsrl.run(make_scheme(name), nsrl.ProjectedGreedy(mdp), k, engine="reference",
                    rng=np.random.default_rng(100 + i)) for i in range(n_runs)]
    out = nsrl.run(name, nsrl.ProjectedGreedy(mdp), k, engine="batched", solvers=solvers,
                   rng=[np.random.default_rng(100 + i) for i in range(n_runs)])
    assert out.engine == "batched" and ref[0].engine == "reference"
    np.testing.assert_allclose(out.losses, [h.losses for h in ref], rtol=0, atol=1e-8)
    np.testing.assert_array_equal(out.memory, [h.memory for h in ref])
    np.testing.assert_allclose(out.steps, [h.steps for h in ref], atol=1e-12)


def test_every_registered_scheme_has_a_batched_engine():
    from nsrl.batched.registry import engine_entry

    missing = [e.pattern for e in SCHEMES.values() if engine_entry(e.cls) is None]
    assert not missing, f"registered schemes without a batched engine: {missing}"


def test_a_subclass_does_not_run_its_parents_engine():
    """Lookup by exact type: a variant of API gets an error, never API's losses."""

    class APIVariant(API):
        name = "APIVariant"

    assert has_engine(API()) and not has_engine(APIVariant())
    with pytest.raises(TypeError, match="no batched engine for APIVariant: run it with nsrl.run"):
        engine_for(APIVariant())
    mdp = nsrl.garnet(10, 2, 1, seed=0)
    with pytest.raises(TypeError, match="APIVariant"):
        nsrl.run(APIVariant(), nsrl.ProjectedGreedy(mdp), 3, rng=[np.random.default_rng(0)],
                 engine="batched")
    auto = nsrl.run(APIVariant(), nsrl.ProjectedGreedy(mdp), 3, rng=[np.random.default_rng(0)])
    assert auto.engine == "reference"


@pytest.mark.parametrize("branch_name, scheme, probe", [
    ("functional-graph", "api", "nsrl.batched.linalg.solvers.functional_values"),
    ("woodbury", "api", "nsrl.batched.api.PolicyInverse"),
    ("gmres", "api", "nsrl.batched.linalg.gmres.loop_fixed_points"),
    ("gmres", "api(0.1)", "nsrl.batched.linalg.gmres.table_values"),
    ("krylov-loop", "psdp", "nsrl.batched.linalg.gmres.loop_values"),
    ("direct-lu", "psdp", "nsrl.batched.linalg.solvers.solve_loop"),
    ("mixed-precision", "cpi(0.1)", "scipy.linalg.lapack.sgetrs"),
])
def test_each_branch_is_taken(monkeypatch, branch_name, scheme, probe):
    """The thresholds above really send the MDP down the named branch."""
    import importlib

    module_name, _, attr = probe.rpartition(".")
    try:
        owner = importlib.import_module(module_name)
    except ImportError:  # a class attribute: module.Class.method
        module_name, _, cls = module_name.rpartition(".")
        owner = getattr(importlib.import_module(module_name), cls)
    original, calls = getattr(owner, attr), []

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, attr, spy)
    shape, solvers = BRANCHES[branch_name]
    nsrl.run(scheme, "projected", 4, rng=[np.random.default_rng(0)], engine="batched",
             mdp=nsrl.garnet(*shape, seed=11), solvers=solvers)
    assert calls, f"{scheme} on branch {branch_name} never called {probe}"


# Every reading of what the paper leaves unsaid (docs/decisions.md), one at a time: operator
# options apply to every scheme, the CPI options to the schemes that take them.
OPERATOR_READINGS = [{"noise_model": m} for m in ("absolute", "span")] + [
    {"constant_feature": True}, {"value_estimate": "estimated"}, {"noise": 0.0}] + [
    {"feature_law": law} for law in ("centred", "gaussian", "binary")] + [
    {"feature_law": "centred", "constant_feature": True, "noise_model": "absolute"}]
CPI_READINGS = [{"advantage": "exact"}, {"epsilon": 0.05}] + [
    {"line_search": r} for r in ("largest-improving", "doubling")] + [
    {"line_search": "largest-improving", "advantage": "exact"}]


def takes(cls, option: str) -> bool:
    return option in inspect.signature(cls).parameters


def check_equal(mdp, scheme_factory, operator_options, n_runs=3, k=12):
    ref = [nsrl.run(scheme_factory(), nsrl.ProjectedGreedy(mdp, **operator_options), k,
                    engine="reference", rng=np.random.default_rng(100 + i))
           for i in range(n_runs)]
    out = nsrl.run(scheme_factory(), nsrl.OperatorSpec("projected", **operator_options), k,
                   rng=[np.random.default_rng(100 + i) for i in range(n_runs)], mdp=mdp,
                   engine="batched")
    np.testing.assert_allclose(out.losses, [h.losses for h in ref], rtol=0, atol=1e-8)
    np.testing.assert_array_equal(out.memory, [h.memory for h in ref])
    np.testing.assert_allclose(out.steps, [h.steps for h in ref], atol=1e-12)


@pytest.mark.parametrize("options", OPERATOR_READINGS, ids=lambda o: repr(o))
@pytest.mark.parametrize("name", registered_names())
def test_operator_readings_are_equal_in_both_engines(name, options):
    check_equal(nsrl.garnet(14, 3, 2, seed=5), lambda: make_scheme(name), options)


@pytest.mark.parametrize("options", CPI_READINGS, ids=lambda o: repr(o))
@pytest.mark.parametrize("value", ["exact", "estimated"])
@pytest.mark.parametrize("name", [e.base for e in SCHEMES.values() if takes(e.cls, "advantage")])
@pytest.mark.parametrize("shape", [(14, 3, 1), (16, 3, 2)], ids=["b1", "b2"])
def test_cpi_readings_are_equal_in_both_engines(shape, name, value, options):
    cls = make_scheme(name).__class__
    if "line_search" in options and not takes(cls, "line_search"):
        pytest.skip(f"{name} has no line search")
    check_equal(nsrl.garnet(*shape, seed=9), lambda: cls(**options), {"value_estimate": value})


@pytest.mark.parametrize("name", registered_names())
def test_the_calibrated_reading_is_equal_in_both_engines(name):
    """The sensitivity study's ``calibrated`` reading: p = 0.85 n_S features (a Garnet drawn
    with them, as the sweep field feature_fraction does) and its operator options; both
    engines project on that MDP's Phi."""
    from nsrl.experiments.sensitivity.sweep import CALIBRATED
    from nsrl.experiments.sweep import Sweep

    options = {k: v for k, v in CALIBRATED.items() if k != "feature_fraction"}
    p = Sweep(feature_fraction=CALIBRATED["feature_fraction"]).features_of(14)
    mdp = nsrl.garnet(14, 3, 2, p, seed=5)
    assert mdp.n_features == 12
    check_equal(mdp, lambda: make_scheme(name), options)
