"""Section 5 on bigger structured domains with informative features (docs/bigger.md).

Both structured families (nsrl.domains) at about 10^4 and 10^5 states; the seven
schemes; each greedy operator on the domain's features, Phi = a 10 x 10 grid of Gaussian
RBFs of the coordinates (100 features): the exact operator (the reference), the paper's
projected one, LSTD-Q and rollouts + CSC (LogisticRegression), the last two with 10^5
transitions per greedy call, so that 10 iterations use 10^6. Runs on nsrl.run's reference
engine (one evaluation per policy, certified iterative solves); grid worlds: 2 seeded MDPs
per size, the mountain car (no random part): 1.
"""

from nsrl.experiments.sweep import Sweep

SCHEMES = ("api", "api(0.1)", "cpi", "cpi(0.1)", "cpi+", "nspi(5)", "psdp")
# The learners' budget is carried by the base sweep, whose operator (the projected one) does
# not take it: the variants that switch to LSTD-Q or rollouts take it, and every variant's
# fingerprint is the one its committed results were written under.
SWEEP = Sweep(name="bigger", domain={"name": "gridworld", "options": {"feature_map": "rbf"}},
              n_states=(10_000, 100_000), n_mdps=2, n_runs=1, n_iterations=10,
              schemes=SCHEMES, n_features=100, carried={"budget": 100_000},
              engine="reference")
_CAR = {"domain": "mountain-car", "n_mdps": 1}
# Rollouts with the logistic fit of scikit-learn its committed results were computed with
# (the operator's default is now the faster soft-label fit, which gives other policies).
_OPERATORS: dict[str, dict[str, object]] = {
    "exact": {"operator": "exact"}, "projected": {}, "lstdq": {"operator": "lstdq"},
    "rollout": {"operator": {"name": "rollout-csc", "options": {"classifier": "logistic"}}}}
VARIANTS = {f"{domain}-{name}": {**change, **(_CAR if domain == "car" else {})}
            for domain in ("grid", "car") for name, change in _OPERATORS.items()}
