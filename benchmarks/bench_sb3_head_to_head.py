"""Head-to-head: exact loss against environment transitions, SB3 agents vs nsrl's learners.

Problems: Garnet(100, 4, 2) (gamma 0.99, instance seed = run seed) and FrozenLake-v1 (4x4,
slippery, converted with ``FiniteMDP.from_gymnasium``, gamma 0.99).

* SB3 PPO, A2C, DQN (``nsrl.sb3.learners``): Garnet through ``SB3VecEnv``; FrozenLake
  through SB3's own ``make_vec_env("FrozenLake-v1")`` (the real episodic env). They learn from
  episodes started from the reset distribution.
* nsrl learners **without reset-to-state**, from the env's own episodes like SB3's (walks
  from the env's reset, restarted w.p. 1 - gamma; FrozenLake: the Gymnasium env itself,
  terminations and time limit included), LSTD-Q with its defaults (one-hot features,
  consistent ridge, sample reuse): ``api/lstdq``, ``psdp/lstdq``, ``nspi(10)/lstdq``, and
  **textbook LSPI** (``lspi``): tabular LSTD-Q on ONE batch of n transitions collected once and
  reused for 20 API iterations (``LSTDQ(env, budget=0, store=...)``), one run per batch size
  n on a log grid (its checkpoint at n is the run with n transitions).
* nsrl learners **with reset-to-state** (a generative model: reset to any state and action,
  greedy states from nu uniform, also on FrozenLake): rollouts + cost-sensitive
  classification with the operator's defaults (``RolloutCSC``: m = 1 rollouts ended by the
  LSTD critic, H = 30 for the first call, CRN, stratified states; LogisticRegression on
  one-hot features, as ``nsrl compare``): ``api/rollout-csc`` is CBMPI (Scherrer et al. 2015)
  with m = 1, ``api/rollout-csc m=5`` CBMPI with m = 5, and ``cpi+``, ``psdp``, ``nspi(10)``.

Every nsrl learner draws ``PER_CALL`` transitions per greedy step (5 000 for LSTD-Q, 25 000
for rollouts; ``api/lstdq per=25000`` too) until the budget is used. Every policy is
tabulated and its exact loss computed: mu (v* - v_pi), mu uniform, and nu (v* - v_pi) (nu =
start distribution; the same for a Garnet), at log-spaced checkpoints. Results are appended
run by run to CSVs (a run already there is skipped), so the
script can be stopped and resumed.

    python benchmarks/bench_sb3_head_to_head.py --part sb3 --seeds 5 --budget 1e6
    python benchmarks/bench_sb3_head_to_head.py --part nsrl --seeds 5 --budget 1e6
    python benchmarks/bench_sb3_head_to_head.py --part nsrl --learners api/lstdq,lspi --seeds 3
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
RESULTS = ROOT / "benchmarks" / "results"
FIGURE = ROOT / "docs" / "sb3_head_to_head.png"
FIELDS = ["problem", "learner", "seed", "samples", "loss", "loss_start", "wall_s", "cpu_s"]
PROBLEMS = ("garnet", "frozenlake")
SB3_LEARNERS = ("ppo", "a2c", "dqn")
# No reset-to-state: LSTD-Q from the env's own episodes.
EPISODE_LEARNERS = ("api/lstdq", "api/lstdq per=25000", "psdp/lstdq", "nspi(10)/lstdq",
                    "lspi")
# Reset-to-state (generative model): rollouts + CSC.
RESET_LEARNERS = ("api/rollout-csc", "api/rollout-csc m=5", "cpi+/rollout-csc",
                  "psdp/rollout-csc", "nspi(10)/rollout-csc")
NSRL_LEARNERS = EPISODE_LEARNERS + RESET_LEARNERS
LEARNER_ORDER = [*SB3_LEARNERS, *EPISODE_LEARNERS, *RESET_LEARNERS]
GRID = np.geomspace(1e3, 1e6, 31)  # log-spaced checkpoints of the nsrl curves
LSPI_BATCHES = (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000)
LSPI_ITERATIONS = 20
# Transitions per greedy call. LSTD-Q reuses every stored transition, so small calls (many
# iterations) cost no data; a rollout call's accuracy rests on its own budget only (checked
# on seed 0 of the Garnet: API + rollouts ended at 0.85, 0.46, 0.09 with 5 000, 25 000,
# 50 000 per call). A learner name can override it: "api/lstdq per=25000".
PER_CALL = {"lstdq": 5_000, "rollout-csc": 25_000}


def csv_path(part: str, learner: str) -> Path:
    """SB3 runs: one CSV per algorithm (they are long); nsrl runs: one CSV."""
    return RESULTS / (f"sb3_head_to_head_{learner}.csv" if part == "sb3"
                      else "sb3_head_to_head_nsrl.csv")


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


def episode_env(problem: str, mdp):
    """The env an LSTD-Q learner learns from: the env's own episodes, no reset-to-state."""
    from nsrl.envs import FiniteMDPVectorEnv

    if problem == "frozenlake":  # the Gymnasium env: start state 0, holes terminate
        return gym.make("FrozenLake-v1")
    return FiniteMDPVectorEnv(mdp, 1)  # reset from the Garnet's start distribution


def log_spaced(samples, outputs, budget):
    """The checkpoints a curve needs: the last output within each point of GRID (and budget)."""
    samples = np.asarray(samples)
    grid = np.append(GRID[GRID < budget], budget)
    keep = sorted({int(i) for i in np.searchsorted(samples, grid, side="right") - 1 if i >= 0})
    return [(int(samples[i]), outputs[i]) for i in keep if samples[i] <= 1.01 * budget]


def run_lspi(problem: str, mdp, budget: int, seed: int):
    """Textbook LSPI at every batch size of LSPI_BATCHES up to ``budget``."""
    from nsrl.greedy import LSTDQ, TransitionStore

    out = []
    for n in (b for b in LSPI_BATCHES if b <= budget):
        rng = np.random.default_rng(seed)
        env = episode_env(problem, mdp)
        store = TransitionStore(n)
        store.add(LSTDQ(env, budget=1, reuse=False, gamma=mdp.gamma).sampler.transitions(n, rng))
        op = LSTDQ(env, budget=0, features="onehot", store=store, gamma=mdp.gamma)
        out.append((n, nsrl.run(nsrl.API(), op, LSPI_ITERATIONS, rng=rng).output))
    return out


def run_nsrl(problem: str, learner: str, seed: int, budget: int, per_call=None):
    """``learner``: one of NSRL_LEARNERS (``scheme/lstdq``, ``lspi``, ``scheme/rollout-csc``,
    options after a space: ``m=5``, ``per=25000``); ``per_call`` overrides PER_CALL."""
    from nsrl.envs import FiniteMDPVectorEnv
    from nsrl.greedy import LSTDQ

    mdp = make_problem(problem, seed)
    if learner == "lspi":
        return (mdp, *timed(run_lspi, problem, mdp, budget, seed))
    name, *options = learner.split(" ")
    options = dict(o.split("=") for o in options)
    scheme, _, op_name = name.partition("/")
    per_call = int(options.get("per", per_call or PER_CALL[op_name]))
    if op_name == "lstdq":
        operator = LSTDQ(episode_env(problem, mdp), budget=per_call, features="onehot",
                         gamma=mdp.gamma)
    else:  # reset-to-state: the greedy states come from nu uniform (the paper's choice)
        model = nsrl.FiniteMDP(mdp.P, mdp.R, mdp.gamma)
        m = int(options["m"]) if "m" in options else None
        operator = nsrl.make_operator(op_name, model, budget=per_call, features="onehot", m=m)
        assert isinstance(operator.sampler.env, FiniteMDPVectorEnv)
    hist, wall, cpu = timed(nsrl.run, nsrl.make_scheme(scheme), operator,
                            max(1, budget // per_call), rng=np.random.default_rng(seed),
                            keep_outputs=True, max_samples=budget)
    return mdp, log_spaced(hist.samples, hist.outputs, budget), wall, cpu


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


ACCESS = {**{n: "no: the env's own episodes (SB3)" for n in SB3_LEARNERS},
          **{n: "no: the env's own episodes (LSTD-Q)" for n in EPISODE_LEARNERS},
          **{n: "yes: rollouts from chosen states and actions" for n in RESET_LEARNERS}}
FLOOR = 1e-3  # a mean loss of 0 is drawn here on the log axis
# colour by scheme, line style by access: dashed SB3, solid LSTD-Q (no reset), dotted rollouts
STYLES = {"ppo": ("C0", "--"), "a2c": ("C9", "--"), "dqn": ("C1", "--"),
          "api/lstdq": ("C2", "-"), "api/lstdq per=25000": ("#98df8a", "-"),
          "psdp/lstdq": ("C4", "-"), "nspi(10)/lstdq": ("C3", "-"), "lspi": ("k", "-"),
          "api/rollout-csc": ("C2", ":"), "api/rollout-csc m=5": ("#98df8a", ":"),
          "cpi+/rollout-csc": ("C5", ":"), "psdp/rollout-csc": ("C4", ":"),
          "nspi(10)/rollout-csc": ("C3", ":")}


def _rank(name: str):
    return (LEARNER_ORDER.index(name) if name in LEARNER_ORDER else 99, name)


def _cell(r) -> str:
    # Losses are >= 0; rounding can leave -1e-12 for an optimal policy.
    return f"{max(r.loss, 0.0):.3f}" + (f" ± {r.loss_sd:.3f}" if r.seeds > 1 else "")


def table(df) -> str:
    """The markdown table at 1e4, 1e5, 1e6 transitions, and issue 12's target on the Garnet."""
    stats = at_budgets(df, np.array([1e4, 1e5, 1e6])).groupby(
        ["problem", "learner", "budget"]).agg(
        loss=("loss", "mean"), loss_sd=("loss", "std"), start=("loss_start", "mean"),
        seeds=("seed", "nunique"), wall=("wall_s", "mean"), cpu=("cpu_s", "mean")).reset_index()
    lines = ["| problem | learner | reset-to-state | seeds | loss @1e4 | loss @1e5 | loss @1e6 | "
             "start-loss @1e6 | wall s | CPU s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for problem in PROBLEMS:
        part = stats[stats.problem == problem]
        for learner in sorted(part.learner.unique(), key=_rank):
            g = part[part.learner == learner]
            cells = {b: _cell(r) for b, r in zip(g["budget"], g.itertuples(), strict=True)}
            last = g.iloc[-1]
            lines.append(f"| {problem} | {learner} | {ACCESS.get(learner, '?').split(':')[0]} | "
                         f"{int(last.seeds)} | "
                         + " | ".join(cells.get(b, "-") for b in (1e4, 1e5, 1e6))
                         + f" | {max(last.start, 0.0):.3f} | {last.wall:.0f} | "
                         f"{last.cpu:.0f} |")
    garnet = stats[stats.problem == "garnet"].set_index(["learner", "budget"]).loss
    lines.append("\nTarget (issue 12), Garnet(100, 4, 2): best learner without reset-to-state "
                 "vs SB3 DQN, mean loss over seeds")
    for b in (1e5, 1e6):
        own = {n: garnet.get((n, b), np.nan) for n in EPISODE_LEARNERS}
        best = min(own, key=lambda n: np.inf if np.isnan(own[n]) else own[n])
        dqn = garnet.get(("dqn", b), np.nan)
        verdict = "met" if own[best] <= dqn else f"missed by {own[best] - dqn:.3f}"
        lines.append(f"- at {b:.0e}: {best} {own[best]:.3f} vs DQN {dqn:.3f}: {verdict}")
    return "\n".join(lines)


def report(folder: Path, figure: Path) -> None:
    """Print the markdown tables and draw the figure from every result CSV of ``folder``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    df = pd.concat([pd.read_csv(f) for f in sorted(folder.glob("sb3_head_to_head_*.csv"))])
    df = df[df.learner.isin(LEARNER_ORDER)]
    text = "| learner | reset-to-state (generative model) |\n|---|---|\n" + "".join(
        f"| {name} | {ACCESS[name]} |\n" for name in LEARNER_ORDER) + "\n" + table(df) + "\n"
    print(text)
    (folder / "sb3_head_to_head.txt").write_text(text)
    curves = at_budgets(df, np.geomspace(1e3, 1e6, 40))
    panels = [("garnet", "loss", "Garnet(100, 4, 2): mu(v* - v_pi), mu uniform"),
              ("frozenlake", "loss", "FrozenLake-v1: mu uniform"),
              ("frozenlake", "loss_start", "FrozenLake-v1: from the start state")]
    learners = sorted(curves.learner.unique(), key=_rank)
    fig, axes = plt.subplots(1, 3, figsize=(16, 5.6))
    for ax, (problem, column, title) in zip(axes, panels, strict=True):
        for learner in learners:
            if learner == "lspi":  # one run per batch size: its points, not a staircase
                g = df[(df.problem == problem) & (df.learner == learner)]
                m = g.groupby("samples")[column].mean()
            else:
                g = curves[(curves.problem == problem) & (curves.learner == learner)]
                m = g.groupby("budget")[column].mean()
            color, style = STYLES[learner]
            ax.plot(m.index, np.maximum(m.to_numpy(), FLOOR), style, color=color, lw=1.6,
                    marker="o" if learner == "lspi" else None, ms=4, label=learner)
        ax.set(xscale="log", yscale="log", xlabel="environment transitions", title=title)
    axes[0].set_ylabel(f"exact loss, mean over 5 seeds (below {FLOOR:g} drawn at {FLOOR:g})")
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    fig.legend([handles[n] for n in learners if n in handles],
               [n for n in learners if n in handles], loc="lower center", ncol=6,
               title="dashed: SB3 agents; solid: nsrl without reset-to-state (LSTD-Q, the env's "
                     "own episodes); dotted: nsrl with reset-to-state (rollouts + CSC)")
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(figure, dpi=110)
    print(f"figure: {figure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["sb3", "nsrl", "report"], required=True)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=float, default=1e6)
    parser.add_argument("--learners", default=None, help="comma list (default: all of part)")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--per-call", type=int, default=None,
                        help="transitions per greedy step of every nsrl learner (default: "
                        "PER_CALL, 5000 for LSTD-Q, 25000 for rollouts)")
    parser.add_argument("--out", type=Path, default=None,
                        help="CSV to append to (default: benchmarks/results/sb3_head_to_head_"
                        "<sb3 algo | nsrl>.csv)")
    args = parser.parse_args()
    if args.part == "report":
        report(RESULTS, FIGURE)
        return
    default = SB3_LEARNERS if args.part == "sb3" else NSRL_LEARNERS
    learners = args.learners.split(",") if args.learners else list(default)
    # Seed-major order: if time runs out, every learner has the same seeds done.
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for problem in args.problems.split(","):
            for learner in learners:
                path = args.out or csv_path(args.part, learner)
                if (problem, learner, seed) in done_runs(path):
                    continue
                if args.part == "sb3":
                    out = run_sb3(problem, learner, seed, int(args.budget))
                else:
                    out = run_nsrl(problem, learner, seed, int(args.budget), args.per_call)
                rows = rows_of(problem, learner, seed, *out)
                append_rows(path, rows)
                last = rows[-1]
                print(f"{problem:10s} {learner:20s} seed {seed}  samples {last['samples']:8d}  "
                      f"loss {last['loss']:8.4f}  start-loss {last['loss_start']:8.4f}  "
                      f"wall {last['wall_s']:7.1f} s  CPU {last['cpu_s']:6.1f} s", flush=True)


if __name__ == "__main__":
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        main()
