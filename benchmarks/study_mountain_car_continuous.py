"""Continuous Mountain Car, rollouts + CSC: the schemes beside LSPI and DQN (issue 44, item 5).

The protocol of Scherrer et al., JMLR 2015, section 6.1 as far as this script follows it; the
choices where the paper's text was not at hand are marked (choice).

* Env: Gymnasium's ``MountainCar-v0`` dynamics (3 actions, reward -1 per step, the goal at
  position >= 0.5 ends the episode), through ``nsrl.envs.SavedState`` so that rollouts restart
  from saved (position, velocity) states.
* Start states, for the rollout states (rho = nu) and for the evaluation: uniform over the
  position x velocity box [-1.2, 0.5) x [-0.07, 0.07] (``UniformStart``), as the paper's
  "number of steps to the goal" is averaged over the whole state space; Gymnasium's own reset
  distribution (position in [-0.6, -0.4], velocity 0) is a much harder start (about 120 steps
  for a near-optimal policy, against about 52 from the uniform box: measured with the
  bang-bang policy "push in the direction of the velocity").
* Features: Gaussian RBFs on a 3 x 3 or 2 x 2 grid over the box normalised to [0, 1]^2
  (centres on the box's corners and mid-points, standard deviation one centre spacing
  (choice)), plus a constant: ``rbf_features``. The same features serve the classifier
  (``SoftmaxCSC``, multinomial logistic CSC, C = 1), the critic (least squares) and LSPI.
* gamma = 0.99 (choice). Budget B = 4 000 transitions per iteration, counted as nsrl counts
  them (``History.samples``: every simulator step of a rollout; the critic reuses the rollout
  estimates and draws nothing); K = 10 iterations per run (choice).
* Schemes, each with the same ``RolloutCSC`` operator (rollout states from nu, one rollout per
  state and action, common random numbers): API, which is CBMPI with m-step rollouts closed by
  the critic (m = 2, choice) after a first iteration of H = 20-step rollouts; CPI(0.3);
  PSDP; NSPI(3); and DPI (API with H = 20-step rollouts, no critic). pi_0: action 0
  everywhere (the library's default).
* LSPI: ``nsrl.LSTDQ`` on the same features, 4 000 new transitions per iteration along
  random-action walks from the uniform start (walks stopped w.p. 1 - gamma), every stored
  transition reused (LSTD-Q's default), the same K iterations of API.
* DQN: stable-baselines3's DQN with RL Zoo's MountainCar-v0 hyperparameters (gamma 0.98
  kept), trained on K x B transitions of episodes from the same uniform start, cut at 300
  steps.
* Evaluation: the final policy of each run, from ``--games`` fixed start states (the uniform
  box, episode i reset with seed 10**6 + i, the same for every run and method), cut at 300
  steps (an episode cut counts 300). A run's score is its mean steps to the goal; the table
  gives the mean over runs and a 95% t-interval over runs.

Writes the table to benchmarks/results/study_mountain_car_continuous.txt (``--out``).

    python benchmarks/study_mountain_car_continuous.py --runs 10
    python benchmarks/study_mountain_car_continuous.py --runs 2 --iterations 2 --budget 600 \\
        --games 5 --dqn-runs 1 --out /tmp/small.txt       # the smallest size (tests)
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from scipy import stats
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

import nsrl
from nsrl.envs import SavedState
from nsrl.greedy import LSTDQ, RBFGrid, RolloutCSC, SoftmaxCSC
from nsrl.greedy.sampling.quality import MonteCarlo

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "study_mountain_car_continuous.txt"
BOX_LOW, BOX_HIGH = np.array([-1.2, -0.07]), np.array([0.6, 0.07])  # the RBF box
START_LOW, START_HIGH = np.array([-1.2, -0.07]), np.array([0.5, 0.07])  # below the goal
GAMMA, BUDGET, ITERATIONS, HORIZON, M = 0.99, 4000, 10, 20, 2
CAP, EVAL_SEED = 300, 10**6
SCHEMES = ("api", "cpi(0.3)", "psdp", "nspi(3)")
PUBLISHED = {  # JMLR 2015, section 6.1: mean steps to the goal at B = 4 000 (read off figures)
    "3x3": {"LSPI": "~50", "DPI": "~160"},
    "2x2": {"LSPI": "75", "AMPI-Q": "70", "CBMPI": "~50"},
}


def add_constant(x: np.ndarray) -> np.ndarray:
    """The features with a column of ones appended."""
    return np.c_[x, np.ones(len(x))]


def rbf_features(n: int, width: float = 1.0) -> Pipeline:
    """n x n Gaussian RBFs over the position x velocity box, plus a constant, fitted.

    RBFGrid is fitted on the box's corners, so its centres are the grid over the box (ends
    included) and its standard deviation ``width`` spacings per axis: the same as RBFs on the
    box normalised to [0, 1]^2. Fitted, it is used as is by the operators (not refitted on
    their first batch).
    """
    pipe = Pipeline([("rbf", RBFGrid(n_centres=n, width=width)),
                     ("constant", FunctionTransformer(add_constant))])
    return pipe.fit(np.stack([BOX_LOW, BOX_HIGH]))


class UniformStart(gym.Wrapper):
    """MountainCar whose reset (without a state) draws (position, velocity) uniformly in the box
    [-1.2, 0.5) x [-0.07, 0.07] from the env's own seeded ``np_random``."""

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        state = self.env.unwrapped.np_random.uniform(START_LOW, START_HIGH)
        self.env.unwrapped.state = state
        return np.asarray(state, dtype=np.float32), info


def rollout_env() -> SavedState:
    """The simulator of the rollouts: uniform starts, reset-to-state, no time limit to speak of."""
    return SavedState(UniformStart(gym.make("MountainCar-v0", max_episode_steps=10_000)))


def evaluation(games: int) -> MonteCarlo:
    """Steps to the goal = minus the undiscounted return, from fixed uniform starts, cut at CAP."""
    env = UniformStart(gym.make("MountainCar-v0", max_episode_steps=CAP))
    return MonteCarlo(env, games=games, gamma=1.0, max_steps=CAP, seed=EVAL_SEED)


@dataclass
class Result:
    """One run: its final policy's mean steps to the goal, and the transitions it drew."""

    steps: float
    samples: int
    per_iteration: list[int]


def rollout_operator(features: Pipeline, budget: int, critic: bool) -> RolloutCSC:
    """rollouts + CSC on ``features``: CBMPI (m = M, least-squares critic) or DPI (H only)."""
    return RolloutCSC(rollout_env(), SoftmaxCSC(), gamma=GAMMA, budget=budget, horizon=HORIZON,
                      m=M, critic=LinearRegression() if critic else None, features=features)


def run_scheme(scheme: str, op: Any, iterations: int, seed: int, mc: MonteCarlo) -> Result:
    """One run of ``scheme`` with operator ``op``; its final output scored by ``mc``."""
    h = nsrl.run(scheme, op, iterations, rng=np.random.default_rng(seed))
    per = np.diff(np.r_[0, h.samples]).astype(int).tolist()
    return Result(-mc(h.output).mean, int(h.samples[-1]), per)


class SB3Policy:
    """A trained SB3 model as an nsrl policy on observations (greedy actions)."""

    memory, stochastic = 1, False

    def __init__(self, model: Any) -> None:
        self.model = model

    def act(self, obs: Any, phase: int = 0, rng: Any = None) -> np.ndarray:
        return np.asarray(self.model.predict(np.asarray(obs), deterministic=True)[0])


def run_dqn(transitions: int, seed: int, mc: MonteCarlo) -> Result:
    """SB3 DQN (RL Zoo's MountainCar-v0 settings) on ``transitions`` environment steps."""
    import torch
    from stable_baselines3 import DQN

    torch.set_num_threads(1)
    env = UniformStart(gym.make("MountainCar-v0", max_episode_steps=CAP))
    model = DQN("MlpPolicy", env, learning_rate=4e-3, batch_size=128, buffer_size=10_000,
                learning_starts=1000, gamma=0.98, target_update_interval=600, train_freq=16,
                gradient_steps=8, exploration_fraction=0.2, exploration_final_eps=0.07,
                policy_kwargs={"net_arch": [256, 256]}, seed=seed, verbose=0, device="cpu")
    model.learn(total_timesteps=transitions)
    return Result(-mc(SB3Policy(model)).mean, int(model.num_timesteps), [])


def summarise(results: list[Result]) -> tuple[float, float]:
    """Mean over runs and the half-width of the 95% t-interval (0 for one run)."""
    x = np.array([r.steps for r in results])
    if len(x) < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))


def methods(args: argparse.Namespace) -> list[tuple[str, str, int, Callable[[int], Result]]]:
    """(features, method, runs, run(seed) -> Result) for every row of the table."""
    mc = evaluation(args.games)
    rows: list[tuple[str, str, int, Callable[[int], Result]]] = []
    for grid in args.grids:
        n = int(grid.split("x")[0])
        for scheme in SCHEMES:
            rows.append((grid, f"{scheme} (CBMPI m={M})", args.runs,
                         lambda s, sc=scheme, n=n: run_scheme(
                             sc, rollout_operator(rbf_features(n), args.budget, True),
                             args.iterations, s, mc)))
        rows.append((grid, f"DPI = api, H={HORIZON}", args.runs,
                     lambda s, n=n: run_scheme("api", rollout_operator(rbf_features(n),
                                                                       args.budget, False),
                                               args.iterations, s, mc)))
        rows.append((grid, "LSPI (LSTDQ)", args.runs,
                     lambda s, n=n: run_scheme("api", LSTDQ(rollout_env(), args.budget,
                                                            features=rbf_features(n),
                                                            gamma=GAMMA),
                                               args.iterations, s, mc)))
    if args.dqn_runs:
        rows.append(("-", "DQN (SB3)", args.dqn_runs,
                     lambda s: run_dqn(args.budget * args.iterations, s, mc)))
    return rows


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--dqn-runs", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--budget", type=int, default=BUDGET)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--grids", nargs="+", default=["3x3", "2x2"])
    parser.add_argument("--only", default="", help="run only the methods containing this text")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    lines = [f"{'features':8} {'method':24} {'runs':>4} {'steps to goal':>17} "
             f"{'samples/iter mean/max':>21} {'CPU s':>7}"]
    print(lines[0], flush=True)
    for grid, name, runs, fn in methods(args):
        if args.only and args.only not in name:
            continue
        c0 = time.process_time()
        results = [fn(seed) for seed in range(runs)]
        mean, ci = summarise(results)
        pers = [x for r in results for x in r.per_iteration]
        per_text = f"{np.mean(pers):.0f} / {max(pers)}" if pers else \
            f"{results[0].samples / args.iterations:.0f} / -"
        line = (f"{grid:8} {name:24} {runs:4d} {mean:8.1f} +- {ci:6.1f} {per_text:>21} "
                f"{time.process_time() - c0:7.0f}")
        lines.append(line)
        print(line, flush=True)
    load = os.getloadavg()
    footer = [
        "",
        f"B = {args.budget} transitions per iteration, K = {args.iterations} iterations, gamma "
        f"= {GAMMA}; steps to the goal of the final policy from {args.games} fixed uniform "
        f"starts, cut at {CAP}; mean over runs +- 95% t-interval over runs.",
        "samples/iter: transitions drawn per iteration (History.samples), mean and most over "
        "the runs' iterations; CPI draws its states from d_(pi,nu) by walks of random "
        "(geometric) length, so B is met in expectation only; DQN: its total / K.",
        "Published (JMLR 2015, sec. 6.1, B = 4 000): 3x3 " + ", ".join(
            f"{k} {v}" for k, v in PUBLISHED["3x3"].items()) + "; 2x2 " + ", ".join(
            f"{k} {v}" for k, v in PUBLISHED["2x2"].items()) + ".",
        f"CPU time {time.process_time() - cpu0:.0f} s, wall {time.perf_counter() - wall0:.0f} s,"
        f" load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"({os.cpu_count()} cores, one process).",
    ]
    for line in footer:
        print(line)
    text = "\n".join(lines + footer) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return text


if __name__ == "__main__":
    main()
