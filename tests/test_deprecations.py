"""Every deprecated spelling reachable from Python warns at the user's line, not nsrl's.

A DeprecationWarning whose ``filename`` is inside nsrl tells a user nothing about which of
their lines to change; each case below is reached through a different number of nsrl's own
frames (a constructor, the registry, a sweep's validation, a property, a module attribute).
"""

from __future__ import annotations

import warnings

import pytest

import nsrl

MDP = nsrl.garnet(6, 2, 2, seed=0)


def _projected_value():
    from nsrl.greedy import ProjectedGreedy

    return ProjectedGreedy(MDP, value="exact")


def _registry_samples():
    from nsrl.greedy.registry import make_operator

    return make_operator("lstdq", MDP, samples=100)


def _sweep(**flat):
    from nsrl.experiments.sweep import Sweep

    return lambda: Sweep(**flat)


def _v_star_bound():
    from nsrl.exact.evaluation import ExactBackend

    return ExactBackend(MDP).v_star_bound


def _scheme_names():
    import nsrl.schemes

    return nsrl.schemes.SCHEME_NAMES


CASES = {
    "ProjectedGreedy(value=)": (_projected_value, "value_estimate"),
    "make_operator(samples=)": (_registry_samples, "budget"),
    "Sweep(line_search_scores=)": (_sweep(line_search_scores="exact"), "value_estimate"),
    "Sweep(samples_per_call=)": (_sweep(operator="lstdq", samples_per_call=100), "budget"),
    "Sweep(representation=)": (_sweep(operator="lstdq", representation="onehot"), "features"),
    "Sweep(noise=) (flat key)": (_sweep(noise=0.2), "flat form"),
    "ExactBackend.v_star_bound": (_v_star_bound, "optimal_value"),
    "nsrl.schemes.SCHEME_NAMES": (_scheme_names, "scheme_names()"),
}


@pytest.mark.parametrize("case", CASES)
def test_a_deprecation_names_the_callers_line(case):
    call, new = CASES[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert deprecations, f"{case}: no DeprecationWarning"
    assert any(new in str(w.message) for w in deprecations), [str(w.message) for w in caught]
    for w in deprecations:
        assert w.filename == __file__, f"{case}: {w.message} points at {w.filename}:{w.lineno}"
