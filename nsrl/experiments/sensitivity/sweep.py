"""The readings of what the paper leaves unsaid, one variant each, on a reduced protocol.

All 27 instances, 5 MDPs x 4 runs: the noise model, a constant feature, the law of Phi's
entries, CPI's advantage source and epsilon, CPI+'s line-search rule and scores
(docs/decisions.md), alone and in the combinations that docs/fidelity.md discusses, and the
calibrated reading (:mod:`nsrl.experiments.sensitivity.calibration`).

A reading that changes only CPI+'s options runs CPI+ alone (``CPI_PLUS``) and takes the other
schemes from the reading it differs from (:data:`SHARES`): every (scheme, run) has its own
seed, so an option of CPI+ cannot move another scheme's numbers (tested), and recomputing
them would only cost time.
"""

from typing import Any

from nsrl.experiments.sweep import Sweep

SWEEP = Sweep(name="sensitivity", n_mdps=5, n_runs=4)
CPI_PLUS = {"schemes": ("cpi+",)}
# The projected operator's greedy error from pi_0 under d_(pi_0,nu), in CPI's normalised
# units (1 - gamma) rho (T v - T_pi' v), on the study's MDPs: median 0.0044, mean 0.026
# (benchmarks/study_operator_error.py, docs/sensitivity/operator_error.csv; a first reading,
# not kept, gave 0.005 and 0.036); epsilon = 1e-3 (the default) is far below it.
EPSILONS = (0.01, 0.03, 0.1)
# The calibration search (benchmarks/study_calibration.py, docs/sensitivity/
# calibration_search.csv): at the paper's p = n_S / 10 no setting meets the calibration
# criterion; this one misses it least (the greedy step keeps 25% of the exact step's gain, 50%
# wanted; the spread is inside its range). It departs from the paper's U[0, 1] features.
CLOSEST_AT_PAPER_P = {"feature_law": "binary", "constant_feature": True, "noise_model": "span"}
# The search over p too (calibration_search_p.csv, 8 held-out MDPs of 4 instances): with the
# paper's U[0, 1] features and iota = 0.1 the smallest p that calibrates is 0.6 n_S, with a
# constant feature and span noise (CONSTANT_SPAN_P06); on the study's MDPs it misses both
# ranges narrowly. Measured again on all 27 instances (calibration_confirm.csv, 54 held-out
# MDPs), the smallest p at which a setting with the paper's law and iota is calibrated with a
# margin of 0.05 inside each range (step kept in [0.55, 0.85], spread <= 0.15) is 0.85 n_S,
# with the same constant feature and span noise: CALIBRATED. Both depart from the paper's
# p = n_S / 10, at which no setting calibrates.
CONSTANT_SPAN = {"constant_feature": True, "noise_model": "span"}
CONSTANT_SPAN_P06 = {"feature_fraction": 0.6, **CONSTANT_SPAN}
CALIBRATED = {"feature_fraction": 0.85, **CONSTANT_SPAN}


def reading(settings: dict[str, Any]) -> dict[str, Any]:
    """A reading written as settings (the projected operator's options, p) as a sweep change.

    Examples:
        >>> reading({"feature_fraction": 0.6, "noise_model": "span"})
        {'feature_fraction': 0.6, 'operator_options': {'noise_model': 'span'}}
    """
    operator = {k: v for k, v in settings.items() if k != "feature_fraction"}
    return {**{k: v for k, v in settings.items() if k == "feature_fraction"},
            **({"operator_options": operator} if operator else {})}


VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no-noise": {"operator_options": {"noise": 0.0}},
    "absolute-noise": {"operator_options": {"noise_model": "absolute"}},
    "span-noise": {"operator_options": {"noise_model": "span"}},
    "constant-feature": {"operator_options": {"constant_feature": True}},
    "closest-at-paper-p": reading(CLOSEST_AT_PAPER_P),
    "constant-span-p0.6": reading(CONSTANT_SPAN_P06),
    "calibrated": reading(CALIBRATED),
    "exact-advantage": {"scheme_options": {"advantage": "exact"}, **CPI_PLUS},
    **{f"epsilon-{e:g}": {"scheme_options": {"epsilon": e}, **CPI_PLUS} for e in EPSILONS},
    "largest-improving": {"scheme_options": {"line_search": "largest-improving"}, **CPI_PLUS},
    "doubling": {"scheme_options": {"line_search": "doubling"}, **CPI_PLUS},
    "estimated-scores": {"operator_options": {"value_estimate": "estimated"}, **CPI_PLUS},
    "exact-advantage+doubling": {"scheme_options": {"advantage": "exact",
                                                    "line_search": "doubling"}, **CPI_PLUS},
    "exact-advantage+estimated-scores": {"scheme_options": {"advantage": "exact"},
                                         "operator_options": {"value_estimate": "estimated"},
                                         **CPI_PLUS},
    "constant-feature+exact-advantage": {"operator_options": {"constant_feature": True},
                                         "scheme_options": {"advantage": "exact"}, **CPI_PLUS},
}
# reading -> the reading whose other schemes it shares (it differs in CPI+'s options only).
SHARES = {name: "constant-feature" if name.startswith("constant-feature+") else "default"
          for name, change in VARIANTS.items() if change.get("schemes") == ("cpi+",)}
