"""The ``quick`` protocol: a telling subset of the paper's, in well under two minutes.

Deterministic to very stochastic dynamics (b in {1, 2, 10}), few and many actions, every
scheme of the paper, 8 MDPs x 10 runs, on two cores.
"""

from nsrl.experiments.sweep import Sweep

SWEEP = Sweep(name="quick", n_states=(50,), n_actions=(2, 10), branching=(1, 2, 10), n_mdps=8,
              n_runs=10)
