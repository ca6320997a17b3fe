"""Head-to-head: exact loss against environment transitions, SB3 agents vs nsrl's schemes.

Problems: Garnet(100, 4, 2) (gamma 0.99, instance seed = run seed) and FrozenLake-v1 (4x4,
slippery, converted with ``FiniteMDP.from_gymnasium``, gamma 0.99).

* SB3 PPO, A2C, DQN (``nsrl.sb3.learners``): Garnet through ``SB3VecEnv``; FrozenLake
  through SB3's own ``make_vec_env("FrozenLake-v1")`` (the real episodic env). They learn from
  episodes started from the reset distribution nu.
* nsrl schemes API, CPI+, PSDP, NSPI(10) with the rollout + cost-sensitive classification
  operator (``nsrl.greedy.rollout``, one-hot features, a decision tree, one rollout per state
  and action, ``--per-call`` transitions per greedy step): they use a *generative model*
  (reset to any state and action, nu uniform), which PPO does not have. Both count every
  simulator transition. ``scheme/lstdq`` learners use LSTD-Q (one-hot features) instead.

Every policy is tabulated and its exact loss computed: mu (v* - v_pi), mu uniform, and
nu (v* - v_pi) (nu = start distribution; the same for a Garnet). Results are appended run by
run to a CSV (a run already there is skipped), so the script can be stopped and resumed.

    python benchmarks/bench_sb3_head_to_head.py --part sb3 --seeds 5 --budget 1e6
    python benchmarks/bench_sb3_head_to_head.py --part nsrl --seeds 5 --budget 1e6
    python benchmarks/bench_sb3_head_to_head.py --part nsrl --learners api/lstdq --seeds 3
    python benchmarks/bench_sb3_head_to_head.py --part report
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import nsrl

ROOT = Path(__file__).resolve().parents[1]
CSV = ROOT / "benchmarks" / "results" / "sb3_head_to_head.csv"
FIGURE = ROOT / "docs" / "sb3_head_to_head.png"
FIELDS = ["problem", "learner", "seed", "samples", "loss", "loss_start", "wall_s", "cpu_s"]
PROBLEMS = ("garnet", "frozenlake")
SB3_LEARNERS = ("ppo", "a2c", "dqn")
NSRL_SCHEMES = ("api", "cpi+", "psdp", "nspi(10)")
LEARNER_ORDER = [*SB3_LEARNERS, *NSRL_SCHEMES, "api/lstdq", "psdp/lstdq", "nspi(10)/lstdq"]


def make_problem(name: str, seed: int):
    """The finite model of a problem (a Garnet's instance seed is the run seed)."""
    if name == "garnet":
        return nsrl.garnet(100, 4, 2, gamma=0.99, seed=seed)
    return nsrl.FiniteMDP.from_gymnasium(gym.make("FrozenLake-v1"), gamma=0.99)


def done_runs(path: Path) -> set:
    if not path.exists():
        return set()
    with path.open() as f:
        return {(r["problem"], r["learner"], int(r["seed"])) for r in csv.DictReader(f)}


def append_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def rows_of(problem, learner, seed, mdp, checkpoints, wall, cpu):
    return [{"problem": problem, "learner": learner, "seed": seed, "samples": int(n),
             "loss": nsrl.loss(mdp, pi), "loss_start": nsrl.loss(mdp, pi, mu=mdp.start),
             "wall_s": round(wall, 2), "cpu_s": round(cpu, 2)} for n, pi in checkpoints]


def timed(fn, *args, **kwargs):
    """``(result, wall seconds, CPU seconds of this process)``; CPU time is what a shared,
    loaded machine does not distort."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def run_sb3(problem: str, algo: str, seed: int, budget: int):
    from stable_baselines3.common.env_util import make_vec_env

    from nsrl.sb3.learners import CONFIGS, learn

    mdp = make_problem(problem, seed)
    env = None
    if problem == "frozenlake":
        env = make_vec_env("FrozenLake-v1", n_envs=CONFIGS[algo].num_envs, seed=seed)
    checkpoints, wall, cpu = timed(learn, algo, mdp, budget, seed, env=env)
    return mdp, checkpoints, wall, cpu


# Rollout settings of the nsrl schemes: one rollout per (state, action), truncated and
# discounted at horizon H. H was picked on seed 0 from {20, 50, 100, geometric}: the shortest
# horizon that still sees FrozenLake's distant reward.
NSRL_HORIZON = {"garnet": 20, "frozenlake": 100}


def run_nsrl(problem: str, learner: str, seed: int, budget: int, per_call: int):
    """``learner`` is a scheme name (rollout + CSC operator) or ``scheme/lstdq``."""
    from sklearn.tree import DecisionTreeClassifier

    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy import LSTDQ
    from nsrl.greedy.rollout import RolloutCSC

    mdp = make_problem(problem, seed)
    # The schemes draw greedy states from nu: the generative model lets them reset anywhere,
    # so nu is uniform (the paper's choice), also on FrozenLake whose own start is state 0.
    model = nsrl.FiniteMDP(mdp.P, mdp.R, mdp.gamma)
    env = FiniteMDPVectorEnv(model, 1)
    scheme, _, op_name = learner.partition("/")
    if op_name == "lstdq":
        operator = LSTDQ(env, budget=per_call, features="onehot", ridge=1e-4)
    else:
        operator = RolloutCSC(env, DecisionTreeClassifier(random_state=0), budget=per_call,
                              features="onehot", horizon=NSRL_HORIZON[problem])
    hist, wall, cpu = timed(nsrl.run, nsrl.make_scheme(scheme), operator,
                            max(1, budget // per_call), rng=np.random.default_rng(seed),
                            mdp=model, keep_outputs=True)
    checkpoints = [(n, pi) for n, pi in zip(hist.samples, hist.outputs, strict=True)
                   if n <= 1.01 * budget]
    return mdp, checkpoints, wall, cpu


def at_budgets(df, grid):
    """Per (problem, learner, seed): the loss of the last checkpoint within each budget."""
    import pandas as pd

    out = []
    # Every run of a problem had the same budget; a run that ended below it (CPI+ stops by its
    # own rule) keeps its last policy up to that budget. 1% slack for batch granularity.
    reach = 1.01 * df.groupby("problem")["samples"].max()
    for (problem, learner, seed), g in df.groupby(["problem", "learner", "seed"]):
        g = g.sort_values("samples")
        idx = np.searchsorted(g["samples"].to_numpy(), grid, side="right") - 1
        ok = (idx >= 0) & (grid <= reach[problem])
        out.append(pd.DataFrame({
            "problem": problem, "learner": learner, "seed": seed, "budget": grid[ok],
            "loss": g["loss"].to_numpy()[idx[ok]],
            "loss_start": g["loss_start"].to_numpy()[idx[ok]],
            "wall_s": g["wall_s"].iloc[0], "cpu_s": g["cpu_s"].iloc[0]}))
    return pd.concat(out, ignore_index=True)


def report(folder: Path, figure: Path) -> None:
    """Print the markdown table and draw the figure from every CSV of ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.concat([pd.read_csv(f) for f in sorted(folder.glob("sb3_head_to_head*.csv"))])
    table = at_budgets(df, np.array([1e4, 1e5, 1e6]))
    stats = table.groupby(["problem", "learner", "budget"]).agg(
        loss=("loss", "mean"), loss_sd=("loss", "std"), start=("loss_start", "mean"),
        seeds=("seed", "nunique"), wall=("wall_s", "mean"), cpu=("cpu_s", "mean")).reset_index()
    print("| problem | learner | seeds | loss @1e4 | loss @1e5 | loss @1e6 | "
          "start-loss @1e6 | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    rank = {n: i for i, n in enumerate(LEARNER_ORDER)}
    stats = stats.sort_values(["problem", "learner"], key=lambda c: c.map(rank).fillna(99)
                              if c.name == "learner" else c, ascending=[False, True])
    for (problem, learner), g in stats.groupby(["problem", "learner"], sort=False):
        # Losses are >= 0; rounding can leave -1e-12 for an optimal policy.
        cells = {b: f"{max(r.loss, 0.0):.3f}" + (f" ± {r.loss_sd:.3f}" if r.seeds > 1 else "")
                 for b, r in zip(g["budget"], g.itertuples(), strict=True)}
        last = g.iloc[-1]
        print(f"| {problem} | {learner} | {int(last.seeds)} | " + " | ".join(
            cells.get(b, "-") for b in (1e4, 1e5, 1e6))
            + f" | {max(last.start, 0.0):.3f} | {last.wall:.0f} | {last.cpu:.0f} |")
    grid = np.geomspace(1e3, 1e6, 40)
    curves = at_budgets(df, grid)
    panels = [("garnet", "loss", "Garnet(100, 4, 2): mu(v* - v_pi), mu uniform"),
              ("frozenlake", "loss", "FrozenLake-v1: mu uniform"),
              ("frozenlake", "loss_start", "FrozenLake-v1: from the start state")]
    order = LEARNER_ORDER
    learners = sorted(curves.learner.unique(), key=lambda n: (n not in order, order.index(n)
                                                              if n in order else n))
    colors = {n: f"C{i % 10}" for i, n in enumerate(learners)}
    fig, axes = plt.subplots(1, 3, figsize=(15, 5))
    for ax, (problem, column, title) in zip(axes, panels, strict=True):
        for learner, g in curves[curves.problem == problem].groupby("learner"):
            m = g.groupby("budget")[column].agg(["mean", "std"])
            style = "--" if learner in SB3_LEARNERS else "-." if "lstdq" in learner else "-"
            ax.plot(m.index, m["mean"], style, color=colors[learner], label=learner)
            ax.fill_between(m.index, m["mean"] - m["std"], m["mean"] + m["std"],
                            color=colors[learner], alpha=0.12)
        ax.set(xscale="log", yscale="log", xlabel="environment transitions", title=title)
    axes[0].set_ylabel("exact loss (mean ± sd over seeds)")
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    fig.legend([handles[n] for n in learners if n in handles],
               [n for n in learners if n in handles], loc="lower center", ncol=len(handles),
               title="dashed: SB3 agents (episodes from the env's start); solid: nsrl schemes, "
                     "rollouts + CSC (generative model); dash-dot: nsrl schemes, LSTD-Q")
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    fig.savefig(figure, dpi=120)
    print(f"figure: {figure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["sb3", "nsrl", "report"], required=True)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=1e6)
    parser.add_argument("--learners", default=None, help="comma list (default: all of part)")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--per-call", type=int, default=25_000,
                        help="transitions per greedy step of the nsrl schemes")
    parser.add_argument("--out", type=Path, default=CSV)
    args = parser.parse_args()
    if args.part == "report":
        report(args.out.parent, FIGURE)
        return
    default = SB3_LEARNERS if args.part == "sb3" else NSRL_SCHEMES
    learners = args.learners.split(",") if args.learners else list(default)
    done = done_runs(args.out)
    # Seed-major order: if time runs out, every learner has the same seeds done.
    for seed in range(args.seeds):
        for problem in args.problems.split(","):
            for learner in learners:
                if (problem, learner, seed) in done:
                    continue
                if args.part == "sb3":
                    out = run_sb3(problem, learner, seed, int(args.budget))
                else:
                    out = run_nsrl(problem, learner, seed, int(args.budget), args.per_call)
                rows = rows_of(problem, learner, seed, *out)
                append_rows(args.out, rows)
                last = rows[-1]
                print(f"{problem:10s} {learner:9s} seed {seed}  samples {last['samples']:8d}  "
                      f"loss {last['loss']:8.4f}  start-loss {last['loss_start']:8.4f}  "
                      f"wall {last['wall_s']:7.1f} s", flush=True)


if __name__ == "__main__":
    main()
