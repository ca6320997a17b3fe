"""The concentrability constants of Garnets against the branching factor (docs/bounds.md).

    python benchmarks/garnet_constants.py > benchmarks/results/garnet_constants.txt
    python benchmarks/garnet_constants.py --actions 2 --states 100 \
        > benchmarks/results/garnet_constants_a2.txt   # and --actions 10: ..._a10.txt

nsrl.concentrability(nsrl.garnet(S, A, b, seed=s), m=(5,)), gamma = 0.99, mu = nu uniform,
mean of seeds 0, 1, 2. Exact numbers (no timing): rerunning gives the same table.
"""

import argparse

import numpy as np

import nsrl

NAMES = ["C_pi*", "C(1)_pi*", "C(1,0)", "C(1,5)", "C(2,1,0)", "C(2,5,0)", "C(2,5,5)"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=5, help="n_A (default 5)")
    parser.add_argument("--states", default="50,100,200", help="n_S values, comma-separated")
    args = parser.parse_args()
    n_actions = args.actions
    print(f"### Garnet(n_S, {n_actions}, b), gamma = 0.99, mu = nu uniform, m = 5, "
          "mean of seeds 0, 1, 2")
    print()
    print("| n_S | b | " + " | ".join(n.replace("*", "\\*") for n in NAMES) + " |")
    print("|" + "---|" * (len(NAMES) + 2))
    for n_states in (int(s) for s in args.states.split(",")):
        for b in (1, 2, 10):
            rows = []
            for seed in (0, 1, 2):
                mdp = nsrl.garnet(n_states, n_actions, b, seed=seed)
                rows.append(nsrl.concentrability(mdp, m=(5,)).summary(5))
            means = [np.mean([r[n] for r in rows]) for n in NAMES]
            print(f"| {n_states} | {b} | " + " | ".join(f"{x:.2f}" for x in means) + " |")


if __name__ == "__main__":
    main()
