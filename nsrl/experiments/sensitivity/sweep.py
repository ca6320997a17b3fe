"""The readings of what the paper leaves unsaid, one variant each, on a reduced protocol.

All 27 instances, 5 MDPs x 4 runs: the noise model, a constant feature, CPI's advantage
source and epsilon, CPI+'s line-search rule and scores (docs/decisions.md), alone and in the
combinations that docs/fidelity.md discusses.
"""

from nsrl.experiments.presets import Sweep

SWEEP = Sweep(name="sensitivity", n_mdps=5, n_runs=4)
VARIANTS = {
    "default": {},
    "no-noise": {"noise": 0.0},
    "absolute-noise": {"noise_model": "absolute"},
    "span-noise": {"noise_model": "span"},
    "constant-feature": {"constant_feature": True},
    "exact-advantage": {"cpi_advantage": "exact"},
    "epsilon-0.01": {"cpi_epsilon": 0.01},
    # The projected operator's greedy error from pi_0 under d_(pi_0,nu), in CPI's normalised
    # units (1 - gamma) rho (T v - T_pi' v): median 0.005, mean 0.036 (docs/fidelity.md).
    "epsilon-0.03": {"cpi_epsilon": 0.03},
    "epsilon-0.1": {"cpi_epsilon": 0.1},
    "largest-improving": {"line_search": "largest-improving"},
    "doubling": {"line_search": "doubling"},
    "estimated-scores": {"line_search_scores": "estimated"},
    "exact-advantage+doubling": {"cpi_advantage": "exact", "line_search": "doubling"},
    "exact-advantage+estimated-scores": {"cpi_advantage": "exact",
                                         "line_search_scores": "estimated"},
    "constant-feature+exact-advantage": {"constant_feature": True, "cpi_advantage": "exact"},
}
