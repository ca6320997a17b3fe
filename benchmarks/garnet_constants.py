"""The concentrability constants of Garnets against the branching factor (docs/bounds.md).

    python benchmarks/garnet_constants.py > benchmarks/results/garnet_constants.txt

nsrl.concentrability(nsrl.garnet(S, 5, b, seed=s), m=(5,)), gamma = 0.99, mu = nu uniform,
mean of seeds 0, 1, 2. Exact numbers (no timing): rerunning gives the same table.
"""

import numpy as np

import nsrl

NAMES = ["C_pi*", "C(1)_pi*", "C(1,0)", "C(1,5)", "C(2,1,0)", "C(2,5,0)", "C(2,5,5)"]


def main():
    print("### Garnet(n_S, 5, b), gamma = 0.99, mu = nu uniform, m = 5, mean of seeds 0, 1, 2")
    print()
    print("| n_S | b | " + " | ".join(n.replace("*", "\\*") for n in NAMES) + " |")
    print("|" + "---|" * (len(NAMES) + 2))
    for n_states in (50, 100, 200):
        for b in (1, 2, 10):
            rows = []
            for seed in (0, 1, 2):
                mdp = nsrl.garnet(n_states, 5, b, seed=seed)
                rows.append(nsrl.concentrability(mdp, m=(5,)).summary(5))
            means = [np.mean([r[n] for r in rows]) for n in NAMES]
            print(f"| {n_states} | {b} | " + " | ".join(f"{x:.2f}" for x in means) + " |")


if __name__ == "__main__":
    main()
