"""How informative the coordinate feature maps are on the bigger domains (docs/bigger.md).

    python benchmarks/feature_maps_greedy.py > benchmarks/results/feature_maps_greedy.txt

On ``nsrl.gridworld(100, seed=0)`` and ``nsrl.mountain_car(100, 100)``: Phi = each feature
map of the states' coordinates (about 100 features), v_hat = the least-squares projection of
v* on Phi (unweighted), and the exact loss of the greedy policy of v_hat, beside pi_0's
(action 0 everywhere). Exact numbers, no timing: rerunning gives the same table.
"""

from __future__ import annotations

import numpy as np

import nsrl
from nsrl.greedy.feature_maps import coordinate_features

KINDS = {"rbf": "RBF grid", "tiles": "tiles", "rff": "RFF"}


def main() -> None:
    models = {"grid world": nsrl.gridworld(100, seed=0),
              "mountain car": nsrl.mountain_car(100, 100)}
    print("### Loss of the greedy step of the least-squares projection of v* on Phi")
    print()
    print("| model | n_states | pi_0 | " + " | ".join(KINDS.values()) + " |")
    print("|---|---|---|" + "---|" * len(KINDS))
    for name, mdp in models.items():
        v_star = nsrl.optimal_value(mdp)
        cells = []
        for kind in KINDS:
            phi = coordinate_features(mdp.features, kind, 100)
            theta, *_ = np.linalg.lstsq(phi, v_star, rcond=None)
            greedy = nsrl.Deterministic(nsrl.greedy_actions(mdp, phi @ theta))
            cells.append(f"{nsrl.loss(mdp, greedy):.4f}")
        print(f"| {name} | {mdp.n_states} | {nsrl.loss(mdp, nsrl.constant(0)):.4f} | "
              + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
