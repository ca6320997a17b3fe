"""Section 5's protocol with greedy steps learned from samples (docs/sampled.md).

All 27 instances, 2 MDPs x 2 runs, 10 n_S n_A transitions per greedy call: about half an hour
on 2 cores. Rollouts on Phi (as costly as on one-hot: the classifier's fit dominates) are left
out to keep it there; add them with a TOML sweep (``operator = {name = "rollout-csc",
options = {features = "phi"}}``).
"""

from nsrl.experiments.sweep import Sweep

SWEEP = Sweep(name="sampled", n_mdps=2, n_runs=2, samples_per_pair=10)
VARIANTS = {
    "projected": {},
    "lstdq-onehot": {"operator": {"name": "lstdq", "options": {"features": "onehot"}}},
    "lstdq-phi": {"operator": {"name": "lstdq", "options": {"features": "phi"}}},
    # the logistic fit its committed results were computed with (the default is now softmax)
    "rollout-onehot": {"operator": {"name": "rollout-csc",
                                    "options": {"features": "onehot", "classifier": "logistic"}}},
}
