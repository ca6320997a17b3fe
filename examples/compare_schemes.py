"""Run the paper's eight schemes on one Garnet and print their exact losses and memory.

    python examples/compare_schemes.py
"""

import numpy as np

import nsrl
from nsrl.schemes import PAPER_SCHEMES

mdp = nsrl.garnet(100, 5, 2, seed=0)
print(f"{mdp!r}: loss of pi_0 = {nsrl.loss(mdp, nsrl.Constant(0)):.3f}")
print(f"{'scheme':10s} {'loss k=10':>10s} {'loss k=100':>10s} {'memory':>7s}")
for name in PAPER_SCHEMES:  # five runs at once: nsrl.run picks the batched engines
    h = nsrl.run(name, "projected", 100, mdp=mdp,
                 rng=[np.random.default_rng(run_seed) for run_seed in range(5)])
    mean = h.losses.mean(axis=0)
    print(f"{name:10s} {mean[9]:10.3f} {mean[-1]:10.3f} {h.memory[0, -1]:7d}")
