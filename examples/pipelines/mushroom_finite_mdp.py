"""mushroom-rl on an nsrl model: its FiniteMDP env and its policy iteration, from the export;
then its LSPI against nsrl's on one batch of transitions.

pip install torch==2.13.0; pip install --no-deps mushroom-rl   (it pins an older numpy and
torch; the parts used here run with nsrl's)
"""

import time

import numpy as np
from mushroom_rl.algorithms.value import LSPI
from mushroom_rl.core import MDPInfo
from mushroom_rl.environments import FiniteMDP
from mushroom_rl.policy import EpsGreedy
from mushroom_rl.solvers.dynamic_programming import policy_iteration
from mushroom_rl.utils.spaces import Box, Discrete

import nsrl
from nsrl.envs import FiniteMDPVectorEnv, to_mushroom
from nsrl.greedy import LSTDQ, TransitionStore

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

# LSPI on one batch: the same 20 000 transitions (uniform actions, restarts w.p. 1 - gamma)
# for both. nsrl: API + LSTD-Q solving from a store that no call adds to (budget=0), 20
# iterations from pi_0 = action 0, one-hot features. mushroom-rl: its LSPI over one-hot
# state vectors (its weights start at 0, so its pi_0 is action 0 too), iterated until the
# weights move by less than 1e-2; no transition is absorbing (the task is continuing).
S, A, N = mdp.n_states, mdp.n_actions, 20_000
vec = FiniteMDPVectorEnv(mdp, num_envs=1)
data = LSTDQ(vec, budget=1, reuse=False).sampler.transitions(N, np.random.default_rng(0))
store = TransitionStore(N)
store.add(data)
start = time.perf_counter()
h = nsrl.run(nsrl.API(), LSTDQ(vec, budget=0, features="onehot", store=store), 20,
             rng=np.random.default_rng(0))
t_nsrl = time.perf_counter() - start
eye = np.eye(S)
dataset = [(eye[s], np.array([a]), r, eye[t], False, False)  # mushroom-rl 1.10: tuples
           for s, a, r, t in zip(data.states, data.actions, data.rewards, data.next_states,
                                 strict=True)]
info = MDPInfo(Box(0.0, 1.0, (S,)), Discrete(A), mdp.gamma, np.inf)
lspi = LSPI(info, EpsGreedy(0.0), approximator_params=dict(input_shape=(S,),
                                                          output_shape=(A,), n_actions=A))
start = time.perf_counter()
lspi.fit(dataset)
t_mushroom = time.perf_counter() - start
q_mushroom = lspi.approximator.predict(eye)  # (S, A)
pi_nsrl = h.output.actions
same = int(np.sum(q_mushroom.argmax(axis=1) == pi_nsrl))
# nsrl's LSTD-Q adds a ridge of 1e-3 transitions; mushroom-rl's has none
print(f"LSPI on {N} transitions: mushroom-rl {t_mushroom:.2f} s, nsrl (20 iterations) "
      f"{t_nsrl:.3f} s; same greedy action in {same} of {S} states, "
      f"max |Q_mushroom - Q_nsrl| = {np.abs(q_mushroom - h.output.q).max():.2f}, exact loss "
      f"{nsrl.loss(mdp, nsrl.Deterministic(q_mushroom.argmax(axis=1))):.4f} and "
      f"{h.losses[-1]:.4f}")
assert same == S
