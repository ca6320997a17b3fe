"""mushroom-rl on an nsrl model: its FiniteMDP env and its policy iteration, from the export.

pip install torch==2.13.0; pip install --no-deps mushroom-rl   (it pins an older numpy and
torch; the parts used here run with nsrl's)
"""

import time

import numpy as np
from mushroom_rl.environments import FiniteMDP
from mushroom_rl.solvers.dynamic_programming import policy_iteration

import nsrl
from nsrl.envs import to_mushroom

mdp = nsrl.garnet(50, 4, 2, seed=0)
p, r = to_mushroom(mdp)  # (S, A, S) each, r[s, a, s'] = R[s, a]
env = FiniteMDP(p, r, mu=mdp.start, gamma=mdp.gamma)  # mushroom's own env over the model
np.random.seed(0)  # noqa: NPY002 - mushroom-rl's envs draw from numpy's global RNG
state = env.reset()  # mushroom-rl returns the state alone
next_state, reward, absorbing, _ = env.step(np.array([1]))
s, s1 = int(state[0]), int(next_state[0])
assert mdp.P[s, 1, s1] > 0 and reward == mdp.R[s, 1] and not absorbing

start = time.perf_counter()
v_mushroom, pi_mushroom = policy_iteration(p, r, mdp.gamma)
seconds = time.perf_counter() - start
v_star = nsrl.optimal_value(mdp)
gap = np.max(np.abs(v_mushroom - v_star))
# Its policy iteration stops once no action beats the current one beyond np.isclose
# (relative 1e-5): its policy is optimal up to that tolerance, which nsrl's exact loss shows.
loss = nsrl.loss(mdp, nsrl.Deterministic(pi_mushroom))
differ = int(np.sum(pi_mushroom != nsrl.greedy_actions(mdp, v_star)))
print(f"mushroom-rl policy iteration on Garnet(50, 4, 2), {seconds:.2f} s: "
      f"|v* - v*_nsrl| = {gap:.1e} (max v* {v_star.max():.1f}); its policy differs from "
      f"nsrl's greedy one in {differ} of 50 states, exact loss {loss:.1e}")
print(f"one step of its env: {s} -(1)-> {s1}, reward {reward:.4f} = R[{s}, 1]")
assert gap < 1e-4 * v_star.max() and loss < 1e-4 * v_star.max()
