"""bettermdptools' planners read env.unwrapped.P, Gymnasium's toy_text table, as they are.

pip install --no-deps bettermdptools   (it pins numpy < 2 and gymnasium < 1.4; its planners
run with nsrl's)
"""

import gymnasium as gym
import numpy as np
from bettermdptools.algorithms.planner import Planner

import nsrl  # noqa: F401  (registers Garnet-v0)

env = gym.make("Garnet-v0", n_states=50, n_actions=4, branching=2, gamma=0.9, seed=0)
mdp = env.unwrapped.mdp
P = env.unwrapped.P  # P[s][a] = [(prob, next_state, reward, terminated), ...]
V, _, pi = Planner(P).value_iteration(gamma=mdp.gamma, n_iters=10_000, theta=1e-12,
                                      dtype=np.float64)
v_star = nsrl.optimal_value(mdp)
actions = np.array([pi[s] for s in range(mdp.n_states)])  # pi: a dict state -> action
gap = np.max(np.abs(V - v_star))
loss = nsrl.loss(mdp, nsrl.Deterministic(actions))
print(f"bettermdptools value iteration on Garnet(50, 4, 2): |V - v*_nsrl| = {gap:.1e}, "
      f"exact loss of its greedy policy {loss:.1e}")
assert gap < 1e-9 and loss < 1e-9
