"""NSPI(m) with LSTD-Q on FrozenLake-v1, judged by the exact loss of the converted model.

LSTD-Q learns from transitions of the Gymnasium env itself (episodes from its reset, uniform
actions; no reset-to-state, no model); the toy_text model converted to a FiniteMDP
(``FiniteMDP.from_gymnasium``) only serves as the judge: exact values of the periodic
non-stationary policies NSPI outputs, ``loss = v*(s0) - v_pi(s0)`` from the start state.

Run: ``python examples/frozenlake_nspi_lstdq.py`` (about 20 s).
"""

import gymnasium as gym
import numpy as np

import nsrl
from nsrl.greedy import LSTDQ

GAMMA, ITERATIONS, BUDGET = 0.95, 15, 4000


def main():
    lake = gym.make("FrozenLake-v1", is_slippery=True)
    mdp = nsrl.FiniteMDP.from_gymnasium(lake, gamma=GAMMA)
    v_star = mdp.start @ nsrl.optimal_value(mdp)
    print(f"FrozenLake-v1 (slippery) as {mdp!r}; v*(start) = {v_star:.4f}")
    print(f"{BUDGET} transitions per greedy step, {ITERATIONS} iterations, 3 seeds")
    print(f"{'scheme':10s} {'operator':9s} {'loss at k=1':>12s} {'k=5':>8s} {'k=15':>8s}  memory")
    for name in ("api", "nspi(3)", "nspi(5)", "psdp"):
        for operator in ("lstdq", "exact"):
            losses, memory = [], 0
            for seed in range(3):
                op = LSTDQ(lake, budget=BUDGET, gamma=GAMMA) \
                    if operator == "lstdq" else nsrl.ExactGreedy(mdp)
                h = nsrl.run(nsrl.make_scheme(name), op, ITERATIONS, mdp=mdp, mu=mdp.start,
                             rng=np.random.default_rng(seed))
                losses.append(h.losses)
                memory = h.memory[-1]
            mean = np.mean(losses, axis=0)
            print(f"{name:10s} {operator:9s} {mean[0]:12.4f} {mean[4]:8.4f} {mean[-1]:8.4f}  "
                  f"{memory}")


if __name__ == "__main__":
    main()
