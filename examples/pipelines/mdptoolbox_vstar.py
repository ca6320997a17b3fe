"""nsrl's exact v* against an external solver, mdptoolbox-hiive's policy iteration.

pip install mdptoolbox-hiive   (imported as hiive.mdptoolbox)
"""

import gymnasium as gym
import numpy as np
from hiive.mdptoolbox.mdp import PolicyIteration

import nsrl

models = {
    "Garnet(100, 4, 5)": nsrl.garnet(100, 4, 5, seed=0),
    "Garnet(300, 10, 3)": nsrl.garnet(300, 10, 3, gamma=0.95, seed=1),
    "FrozenLake-v1": nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.99),
    "Taxi-v4": nsrl.FiniteMDP.from_gymnasium(gym.make("Taxi-v4"), gamma=0.99),
}
for name, mdp in models.items():
    # mdptoolbox takes P as (A, S, S) and R as (S, A) (sparse=True: a list of per-action
    # scipy.sparse matrices, for large models); eval_type=0 solves each policy exactly.
    P, R = nsrl.envs.to_mdptoolbox(mdp)
    solver = PolicyIteration(P, R, mdp.gamma, eval_type=0)
    solver.run()
    v_star = nsrl.optimal_value(mdp)
    gap = np.max(np.abs(np.asarray(solver.V) - v_star))
    # Its policy, evaluated by nsrl, is optimal too.
    v_pi = nsrl.evaluate(mdp, nsrl.Deterministic(np.asarray(solver.policy)))
    gap_pi = np.max(np.abs(v_pi - v_star))
    print(f"{name:<19} |v*_toolbox - v*_nsrl| = {gap:.1e}, "
          f"|v_pi_toolbox - v*_nsrl| = {gap_pi:.1e}, max v* = {v_star.max():.2f}")
    assert gap < 1e-9 and gap_pi < 1e-9
