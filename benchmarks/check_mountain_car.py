"""The discretised mountain car against Gymnasium's own MountainCar-v0 (issue 21, item 3).

For each grid size: v* of ``nsrl.mountain_car(n, n)`` (gamma = 0.99, barycentric
interpolation), its greedy policy, and that policy's mean return over 100 episodes of
Gymnasium's continuous ``MountainCar-v0`` (each observation mapped to its nearest grid
point). Gymnasium counts the task solved at a mean return >= -110.

Writes benchmarks/results/mountain_car_check.txt and docs/bigger/mountain_car_policy.png.

    python benchmarks/check_mountain_car.py --sizes 30 60 100 316
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import nsrl
from nsrl.envs.mountain_car import gymnasium_returns

ROOT = Path(__file__).resolve().parents[1]


def check(n: int, interpolation: str) -> dict:
    mdp = nsrl.mountain_car(n, n, interpolation=interpolation)
    start = time.perf_counter()
    v = nsrl.optimal_value(mdp)
    seconds = time.perf_counter() - start
    pi = nsrl.greedy_actions(mdp, v)
    returns = gymnasium_returns(pi, n, n, n_episodes=100)
    return {"n": n, "states": mdp.n_states, "interpolation": interpolation,
            "v_star_s": seconds, "mean": returns.mean(), "min": returns.min(),
            "max": returns.max(), "v": v, "pi": pi}


def figure(row: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = row["n"]
    extent = (-1.2, 0.6, -0.07, 0.07)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, data, title in ((axes[0], row["v"], "v* (gamma = 0.99)"),
                            (axes[1], row["pi"], "greedy action (0 left, 1 none, 2 right)")):
        im = ax.imshow(data.reshape(n, n).T, origin="lower", aspect="auto", extent=extent,
                       cmap="viridis")
        ax.set(xlabel="position", ylabel="velocity", title=title)
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"Discretised mountain car, {n} x {n} grid: mean return {row['mean']:.1f} "
                 f"in Gymnasium's MountainCar-v0 (100 episodes)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 60, 100, 316])
    parser.add_argument("--figure-size", type=int, default=100)
    args = parser.parse_args()
    lines = ["grid      states  interpolation  v* (s)  mean return  min   max"]
    for n in args.sizes:
        for interpolation in ("barycentric", "nearest"):
            row = check(n, interpolation)
            lines.append(f"{n:4d}^2 {row['states']:9d}  {interpolation:13s} "
                         f"{row['v_star_s']:6.1f}  {row['mean']:11.1f} {row['min']:5.0f} "
                         f"{row['max']:5.0f}")
            print(lines[-1], flush=True)
            if n == args.figure_size and interpolation == "barycentric":
                figure(row, ROOT / "docs" / "bigger" / "mountain_car_policy.png")
    out = ROOT / "benchmarks" / "results" / "mountain_car_check.txt"
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
