"""jaxdp's value and policy iteration on an nsrl model, from the export; v* against nsrl's.

pip install jaxdp jax jaxlib   (a venv of its own, CPU jax; no torch). jaxdp asserts with chex,
which cannot check values under jit: disable its asserts; enable float64 before any array.
"""

import time

import chex
import jax
import jax.numpy as jnp
import jaxdp
import numpy as np

import nsrl
from nsrl.envs import to_jaxdp

jax.config.update("jax_enable_x64", True)  # before any array: float64 throughout

mdp = nsrl.garnet(50, 4, 2, seed=0)
# transition[a, s', s] (columns sum to 1), reward[a, s, s'] = R[s, a], initial, terminal
model = jaxdp.MDP(**{k: jnp.asarray(v) for k, v in to_jaxdp(mdp).items()})
model.validate()  # jaxdp's own checks (shapes, column-stochastic), outside jit
chex.disable_asserts()  # its planners' chex value asserts cannot run under jit
v_star = nsrl.optimal_value(mdp)


def solve(planner, state, stop):
    """Run a jaxdp planner's jitted update until ``stop(old, new)``; iterations and seconds."""
    update, k, start = jax.jit(planner.update), 0, time.perf_counter()
    while True:
        new, k = update(model, state), k + 1
        if stop(state, new):
            jax.block_until_ready(new)
            return new, k, time.perf_counter() - start
        state = new


pi = jaxdp.PolicyIteration(gamma=mdp.gamma)
uniform = jnp.full((mdp.n_actions, mdp.n_states), 1 / mdp.n_actions)  # policy[a, s]
pi_state, pi_k, pi_s = solve(pi, pi.init(model, uniform),
                             lambda old, new: bool(jnp.all(old.policy == new.policy)))
vi = jaxdp.ValueIteration(gamma=mdp.gamma)
vi_state, vi_k, vi_s = solve(vi, vi.init(model), lambda old, new: float(
    jnp.max(jnp.abs(new.v_val - old.v_val))) < 1e-10 * (1 - mdp.gamma) / (2 * mdp.gamma))
for name, v, k, seconds in [("policy iteration", pi_state.v_val, pi_k, pi_s),
                            ("value iteration", vi_state.v_val, vi_k, vi_s)]:
    print(f"jaxdp {name:<16} on Garnet(50, 4, 2): {k:>4} updates, {seconds:.2f} s (with "
          f"compilation): |v - v*_nsrl| = {np.max(np.abs(np.asarray(v) - v_star)):.1e}")
actions = np.asarray(pi_state.policy).argmax(axis=0)  # its greedy policy, one-hot per column
loss = nsrl.loss(mdp, nsrl.Deterministic(actions))
print(f"exact loss of its policy-iteration policy (nsrl's evaluation): {loss:.1e}; "
      f"max v* = {v_star.max():.2f}, gamma = {mdp.gamma}")
assert np.max(np.abs(np.asarray(pi_state.v_val) - v_star)) < 1e-9 and loss < 1e-9
assert np.max(np.abs(np.asarray(vi_state.v_val) - v_star)) < 1e-9
