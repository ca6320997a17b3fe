"""The discretised mountain car against Gymnasium's own MountainCar-v0, over disjoint seed sets.

For each grid size: v* of ``nsrl.mountain_car(n, n)`` (gamma = 0.99, barycentric and
nearest-point interpolation), its greedy policy, and that policy's returns in Gymnasium's
continuous ``MountainCar-v0``, each observation mapped to its nearest grid point by
``nsrl.model.mountain_car.nearest_state`` (a tie, such as velocity 0 on an even grid, goes to
the lower grid point). Each seed set ``A-B`` is the episodes reset with seeds A, A + 1, ...,
B; for each, the mean return and its standard error (sample standard deviation / sqrt(n)).
Gymnasium counts the task solved at a mean return >= -110 over 100 episodes; a grid is
reported solved only if the mean of its **worst** seed set is >= -110.

Writes ``--out`` (default benchmarks/results/mountain_car_check.txt) and, when the grid
``--figure-size`` is among the sizes, docs/bigger/mountain_car_policy.png.

    python benchmarks/check_mountain_car.py --sizes 30 60 100 316 \\
        --seed-sets 0-99 100-199 200-299
    python benchmarks/check_mountain_car.py --seed-sets 1000-1099 5000-5099 9000-9099 \\
        --out /tmp/other_seeds.txt --figure-size 0      # other seed sets, nothing committed
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import nsrl
from nsrl.envs.mountain_car import gymnasium_returns

ROOT = Path(__file__).resolve().parents[1]
SOLVED = -110.0
INTERPOLATIONS = ("barycentric", "nearest")
DEFAULT_SEED_SETS = ("0-99", "100-199", "200-299")
HEADER = ("grid      states  interpolation  v* (s)  seeds        episodes  mean return  "
          "s.e.   min   max")


def seed_set(text: str) -> range:
    """``"A-B"`` (A <= B, both >= 0) as the range of reset seeds A..B inclusive."""
    parts = text.split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) > int(parts[1]):
        raise argparse.ArgumentTypeError(
            f"a seed set should be 'A-B' with 0 <= A <= B (e.g. 0-99), got {text!r}")
    return range(int(parts[0]), int(parts[1]) + 1)


def check_disjoint(sets: list[range]) -> None:
    """Refuse seed sets that share a seed: their means would not be independent."""
    seen: set[int] = set()
    for s in sets:
        if seen.intersection(s):
            raise ValueError(f"the seed sets should be disjoint; {s.start}-{s.stop - 1} shares "
                             "seeds with an earlier one")
        seen.update(s)


def summary(returns: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of the mean (ddof = 1; 0 for a single episode)."""
    se = returns.std(ddof=1) / np.sqrt(len(returns)) if len(returns) > 1 else 0.0
    return float(returns.mean()), float(se)


def check(n: int, interpolation: str, sets: list[range]) -> dict:
    """v* of the n x n grid, its greedy policy, and its returns on each seed set."""
    mdp = nsrl.mountain_car(n, n, interpolation=interpolation)
    start = time.perf_counter()
    v = nsrl.optimal_value(mdp)
    seconds = time.perf_counter() - start
    pi = nsrl.greedy_actions(mdp, v)
    returns = [gymnasium_returns(pi, n, n, n_episodes=len(s), seed=s.start) for s in sets]
    return {"n": n, "states": mdp.n_states, "interpolation": interpolation,
            "v_star_s": seconds, "returns": returns, "v": v, "pi": pi}


def lines_of(row: dict, sets: list[range]) -> list[str]:
    """One line per seed set, then the worst set's verdict."""
    out = []
    means = []
    for s, r in zip(sets, row["returns"], strict=True):
        mean, se = summary(r)
        means.append(mean)
        out.append(f"{row['n']:4d}^2 {row['states']:9d}  {row['interpolation']:13s} "
                   f"{row['v_star_s']:6.1f}  {f'{s.start}-{s.stop - 1}':12s} {len(r):8d}  "
                   f"{mean:11.1f} {se:5.1f} {r.min():5.0f} {r.max():5.0f}")
    worst = int(np.argmin(means))
    verdict = "solved" if means[worst] >= SOLVED else "not solved"
    out.append(f"{row['n']:4d}^2 {row['interpolation']}: worst seed set "
               f"{sets[worst].start}-{sets[worst].stop - 1}, mean {means[worst]:.1f}: {verdict}")
    return out


def figure(row: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = row["n"]
    worst = min(summary(r)[0] for r in row["returns"])
    extent = (-1.2, 0.6, -0.07, 0.07)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, data, title in ((axes[0], row["v"], "v* (gamma = 0.99)"),
                            (axes[1], row["pi"], "greedy action (0 left, 1 none, 2 right)")):
        im = ax.imshow(data.reshape(n, n).T, origin="lower", aspect="auto", extent=extent,
                       cmap="viridis")
        ax.set(xlabel="position", ylabel="velocity", title=title)
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"Discretised mountain car, {n} x {n} grid: mean return {worst:.1f} in "
                 f"Gymnasium's MountainCar-v0 (worst of {len(row['returns'])} seed sets)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[30, 60, 100, 316])
    parser.add_argument("--seed-sets", type=seed_set, nargs="+",
                        default=[seed_set(s) for s in DEFAULT_SEED_SETS],
                        help="disjoint ranges of reset seeds, 'A-B' each (default: "
                             f"{' '.join(DEFAULT_SEED_SETS)})")
    parser.add_argument("--figure-size", type=int, default=100,
                        help="the grid whose v* and policy are drawn (0: no figure)")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "mountain_car_check.txt")
    args = parser.parse_args(argv)
    try:
        check_disjoint(args.seed_sets)
    except ValueError as error:
        parser.error(str(error))
    import gymnasium

    lines = [f"python benchmarks/check_mountain_car.py --sizes {' '.join(map(str, args.sizes))}"
             f" --seed-sets {' '.join(f'{s.start}-{s.stop - 1}' for s in args.seed_sets)}",
             f"gymnasium {gymnasium.__version__}; observation -> nearest grid point, ties to the "
             f"lower; solved: mean return >= {SOLVED:.0f}", "", HEADER]
    print("\n".join(lines), flush=True)
    for n in args.sizes:
        for interpolation in INTERPOLATIONS:
            row = check(n, interpolation, args.seed_sets)
            new = lines_of(row, args.seed_sets)
            lines += new
            print("\n".join(new), flush=True)
            if n == args.figure_size and interpolation == "barycentric":
                figure(row, ROOT / "docs" / "bigger" / "mountain_car_policy.png")
    args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
