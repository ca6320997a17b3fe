"""Values of docs/sb3.md (and the pages that quote the head-to-head) from its committed runs.

Source: benchmarks/results/sb3_head_to_head_{ppo,a2c,dqn,nsrl}.csv, one row per checkpoint of
a run (problem, learner, seed, samples, exact loss). A learner's loss "at B transitions" is
that of its last checkpoint within B, as ``benchmarks/bench_sb3_head_to_head.py`` tabulates
it (its table, ``sb3_head_to_head.txt``, is the block ``sb3-head-to-head``).

Inline values ``sb3.<problem>.<learner>.<budget>`` (mean over the seeds, 3 decimals, as in
the table; learner as in :func:`learner_slug`, budget ``1e4``, ``1e5`` or ``1e6``; with
``.sd`` appended, the standard deviation over the seeds), the reference policies' losses
(benchmarks/results/reference_policies_sb3.txt) and a few
sentences comparing runs instance by instance.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from study.numbers.registry import block
from study.numbers.sources import listing, md_table, memo, num, read_csv, read_text, search

R = "benchmarks/results/"
SB3 = ("ppo", "a2c", "dqn")
CSVS = [R + f"sb3_head_to_head_{n}.csv" for n in (*SB3, "nsrl")]
PROBLEMS = ("garnet", "frozenlake")
LEARNERS = ("ppo", "a2c", "dqn", "api/lstdq", "api/lstdq per=25000", "psdp/lstdq",
            "nspi(10)/lstdq", "lspi", "api/rollout-csc", "api/rollout-csc m=5",
            "cpi+/rollout-csc", "psdp/rollout-csc", "nspi(10)/rollout-csc")
BUDGETS = {"1e4": 1e4, "1e5": 1e5, "1e6": 1e6}
LSTDQ = ("api/lstdq", "api/lstdq per=25000", "psdp/lstdq", "nspi(10)/lstdq", "lspi")


def learner_slug(learner: str) -> str:
    """'nspi(10)/rollout-csc' -> 'nspi10-rollout-csc', 'api/lstdq per=25000' -> ...-per25000."""
    return (learner.replace("+", "-plus").replace("(", "").replace(")", "").replace("/", "-")
            .replace(" per=", "-per").replace(" m=", "-m"))


@memo
def runs(root: Path) -> pd.DataFrame:
    """Every checkpoint of every run of the head-to-head."""
    return pd.concat([read_csv(root, rel) for rel in CSVS], ignore_index=True)


@memo
def at_budgets(root: Path, grid) -> pd.DataFrame:
    """Per run and budget of ``grid``: the loss of the run's last checkpoint within it.

    A run that ended early (CPI+ stops by its own rule) keeps its last policy up to the
    problem's budget (the largest checkpoint of any run, 1% slack), as the benchmark does.
    """
    df = runs(root)
    grid = np.asarray(grid, dtype=float)
    reach = 1.01 * df.groupby("problem")["samples"].max()
    out = []
    for (problem, learner, seed), g in df.groupby(["problem", "learner", "seed"]):
        g = g.sort_values("samples")
        idx = np.searchsorted(g["samples"].to_numpy(), grid, side="right") - 1
        ok = (idx >= 0) & (grid <= reach[problem])
        out.append(pd.DataFrame({
            "problem": problem, "learner": learner, "seed": seed, "budget": grid[ok],
            "loss": np.maximum(g["loss"].to_numpy()[idx[ok]], 0.0)}))
    return pd.concat(out, ignore_index=True)


def per_seed(root: Path, problem: str, budget: float) -> pd.DataFrame:
    """Loss by seed (rows) and learner (columns) at ``budget`` transitions."""
    df = at_budgets(root, [budget])
    return df[df["problem"] == problem].pivot(index="seed", columns="learner", values="loss")


def _mean(root: Path, problem: str, learner: str, budget: float, sd: bool = False) -> str:
    table = per_seed(root, problem, budget)
    if learner not in table:
        raise ValueError(f"{problem}/{learner} has no checkpoint within {budget:g} transitions")
    return f"{table[learner].std() if sd else table[learner].mean():.3f}"


def _register_means() -> None:
    for problem in PROBLEMS:
        for learner in LEARNERS:
            for tag, budget in BUDGETS.items():
                for suffix in ("", ".sd"):
                    def render(root: Path, p=problem, n=learner, b=budget, s=suffix) -> str:
                        return _mean(root, p, n, b, sd=bool(s))
                    block(f"sb3.{problem}.{learner_slug(learner)}.{tag}{suffix}", sources=CSVS,
                          optional=True)(render)


_register_means()


def _f3(x: float) -> str:
    return f"{x:.3f}"


def versus(root: Path, learner: str, other: str, budget: float, problem: str = "garnet"
           ) -> tuple[int, list[tuple[float, float]], list[float]]:
    """How often ``learner`` is below ``other``, instance by instance, at the table's 3 decimals.

    Returns the number of seeds below, the (learner, other) pairs above and the tied values.
    """
    table = per_seed(root, problem, budget).round(3)
    below, above, tied = 0, [], []
    for a, b in zip(table[learner], table[other], strict=True):
        if a < b:
            below += 1
        elif a > b:
            above.append((a, b))
        else:
            tied.append(a)
    return below, above, tied


def _versus_text(root: Path, learner: str, budget: float, name: str) -> str:
    below, above, tied = versus(root, learner, "dqn", budget)
    text = f"{name} below DQN on {below} instance{'s' if below != 1 else ''}"
    if above:
        text += f", above on {len(above)} (" + "; ".join(
            f"{_f3(a)} vs {_f3(b)}" for a, b in above) + ")"
    if tied:
        text += f", tied on {len(tied)} (" + "; ".join(f"{_f3(t)} each" for t in tied) + ")"
    return text


@block("sb3-instances-1e5", sources=CSVS)
def _instances_1e5(root: Path) -> str:
    return (_versus_text(root, "lspi", 1e5, "LSPI is") + ", and "
            + _versus_text(root, "api/lstdq", 1e5, "API + LSTD-Q"))


@block("sb3-instances-1e6", sources=CSVS)
def _instances_1e6(root: Path) -> str:
    names = {"api/lstdq": "API + LSTD-Q", "nspi(10)/lstdq": "NSPI(10) + LSTD-Q",
             "lspi": "LSPI", "psdp/lstdq": "PSDP + LSTD-Q"}
    n = len(per_seed(root, "garnet", 1e6))
    everywhere, partly = [], []
    for learner, name in names.items():
        below, above, tied = versus(root, learner, "dqn", 1e6)
        if below == n:
            everywhere.append(name)
        else:
            pairs = "; ".join(f"{_f3(a)} vs {_f3(b)}" for a, b in above)
            partly.append(f"{name} on {below} of {n}" + (f": {pairs} where it is not"
                                                          if pairs else ""))
    text = f"{listing(everywhere)} are below DQN on every instance" if everywhere else ""
    return text + (f" ({'; '.join(partly)})" if partly else "")


@block("sb3-api-runs-1e6", sources=CSVS)
def _api_runs(root: Path) -> str:
    losses = np.sort(per_seed(root, "garnet", 1e6)["api/lstdq"].to_numpy())
    return (f"within {_f3(losses[-2])} of the optimal policy in {len(losses) - 1} of "
            f"{len(losses)} runs at 10^6 ({_f3(losses[-1])} in the other)")


@block("sb3-dqn-range-1e6", sources=CSVS)
def _dqn_range(root: Path) -> str:
    dqn = per_seed(root, "garnet", 1e6)["dqn"]
    return f"{_f3(dqn.mean())} ({_f3(dqn.min())}-{_f3(dqn.max())} over runs)"


def _budget_text(b: float) -> str:
    exponent = int(np.floor(np.log10(b)))
    mantissa = b / 10 ** exponent
    return f"10^{exponent}" if round(mantissa, 1) == 1 else f"{mantissa:.1f} 10^{exponent}"


def optimal_from(root: Path, problem: str, learner: str) -> float:
    """The first budget from which every run of ``learner`` stays at loss 0.000.

    Budgets are those of the figure's grid: 40 log-spaced points from 10^3 to 10^6.
    """
    grid = np.geomspace(1e3, 1e6, 40)
    df = at_budgets(root, grid)
    g = df[(df["problem"] == problem) & (df["learner"] == learner)].pivot(
        index="budget", columns="seed", values="loss")
    ok = (g.round(3) <= 0).all(axis=1).to_numpy()
    if not ok[-1]:
        raise ValueError(f"{problem}/{learner} is not optimal in every run at the last budget")
    first = len(ok) - int(np.argmin(ok[::-1])) if not ok.all() else 0
    return float(g.index[first])


@block("sb3-frozenlake-optimal", sources=CSVS)
def _frozenlake_optimal(root: Path) -> str:
    api = optimal_from(root, "frozenlake", "api/lstdq")
    dqn = optimal_from(root, "frozenlake", "dqn")
    return (f"API + LSTD-Q is optimal in every run from {_budget_text(api)} transitions on, "
            f"DQN from {_budget_text(dqn)}")


@block("sb3-cpu", sources=CSVS)
def _cpu(root: Path) -> str:
    cpu = runs(root).groupby(["problem", "learner", "seed"])["cpu_s"].first().reset_index()
    sb3 = cpu[cpu["learner"].isin(SB3)]["cpu_s"]
    own = cpu[~cpu["learner"].isin(SB3)]["cpu_s"]
    return (f"{own.min():.1f}-{own.max():.1f} CPU s per nsrl run against "
            f"{sb3.min():.0f}-{sb3.max():.0f} per SB3 run")


@block("sb3-garnet-lstdq-cpu", sources=CSVS)
def _garnet_lstdq_cpu(root: Path) -> str:
    cpu = runs(root).groupby(["problem", "learner", "seed"])["cpu_s"].first().reset_index()
    own = cpu[(cpu["problem"] == "garnet") & cpu["learner"].isin(LSTDQ)]["cpu_s"]
    return f"{own.min():.1f}-{own.max():.1f} CPU s each"


@block("sb3-sb3-runs", sources=CSVS)
def _sb3_runs(root: Path) -> str:
    cpu = runs(root).groupby(["problem", "learner", "seed"])["cpu_s"].first().reset_index()
    sb3 = cpu[cpu["learner"].isin(SB3)]["cpu_s"]
    return f"the {len(sb3)} SB3 runs ({sb3.sum() / 60:.0f} minutes of CPU in all)"


@block("sb3-dqn-rise", sources=CSVS)
def _dqn_rise(root: Path) -> str:
    """The largest rise of a DQN run's loss on the Garnet after 10^5 transitions."""
    df = runs(root)
    g = df[(df["problem"] == "garnet") & (df["learner"] == "dqn") & (df["samples"] >= 1e5)]
    best = None
    for _, r in g.groupby("seed"):
        r = r.sort_values("samples")
        loss, samples = r["loss"].to_numpy(), r["samples"].to_numpy()
        for j in range(1, len(loss)):
            i = int(np.argmin(loss[:j]))
            rise = (loss[j] - loss[i], loss[i], samples[i], loss[j], samples[j])
            best = rise if best is None or rise > best else best
    if best is None:
        raise ValueError("no DQN run on the Garnet has two checkpoints after 10^5")
    _, low, at_low, high, at_high = best
    return (f"one run went from {low:.2f} at {_budget_text(at_low)} to {high:.2f} at "
            f"{_budget_text(at_high)}")


REFERENCE = R + "reference_policies_sb3.txt"


@block("sb3-references", sources=[REFERENCE])
def _references(root: Path) -> str:
    uniform = search(root, REFERENCE, r"^garnet uniform random policy: ([\d.]+) ± ([\d.]+)")
    pi0 = search(root, REFERENCE, r"^garnet pi_0 .*: ([\d.]+) ±")[1]
    lake_u = search(root, REFERENCE, r"^frozenlake uniform random policy: ([\d.]+), "
                    r"from the start: ([\d.]+)")
    lake_0 = search(root, REFERENCE, r"^frozenlake pi_0 .*: ([\d.]+), from the start: ([\d.]+)")
    return (f"the uniform policy has loss {float(uniform[1]):.1f} ± {float(uniform[2]):.1f} on "
            f"these Garnets (pi_0 = action 0 everywhere: {float(pi0):.1f}), and "
            f"{float(lake_u[1]):.3f} on FrozenLake (start-loss {float(lake_u[2]):.3f}; pi_0: "
            f"{float(lake_0[1]):.3f} and {float(lake_0[2]):.3f})")


VECENV = R + "bench_sb3_vecenv.txt"


@block("sb3-vecenv", sources=[VECENV])
def _vecenv(root: Path) -> str:
    """SB3VecEnv against DummyVecEnv: raw steps and PPO, transitions per CPU and wall second."""
    text = read_text(root, VECENV)
    rates = {(what.strip(), env): (float(wall.replace(",", "")), float(cpu.replace(",", "")))
             for what, env, wall, cpu in re.findall(
                 r"^  (raw step|PPO learn)\s+(SB3VecEnv|DummyVecEnv)\s+([\d,]+) transitions/s "
                 r"wall\s+([\d,]+) per CPU", text, re.MULTILINE)}
    n = search(root, VECENV, r"N = (\d+) envs")[1]
    load = search(root, VECENV, r"load ([\d.]+)")[1]
    rows = []
    for what, label in (("raw step", "raw `step`"), ("PPO learn", "PPO `learn`")):
        for i, clock in ((1, "CPU"), (0, "wall")):
            ours, theirs = rates[what, "SB3VecEnv"][i], rates[what, "DummyVecEnv"][i]
            rows.append([f"{label}, transitions per {clock} second", num(ours, 0),
                         num(theirs, 0), f"{ours / theirs:.1f}x"])
    return (md_table(["what", "SB3VecEnv", f"DummyVecEnv of {n} `FiniteMDPEnv`", "ratio"], rows,
                     "lrrr") + f"\n\nLoad average at the start: {load} (2 cores).")


PER_CALL = R + "sb3_rollout_per_call.csv"


@block("sb3-rollout-per-call", sources=[PER_CALL])
def _rollout_per_call(root: Path) -> str:
    """API + rollouts on Garnet seed 0: the final loss for each budget per greedy step."""
    runs = read_csv(root, PER_CALL)
    last = runs.sort_values("samples").groupby("learner", sort=False).tail(1)
    last = last.assign(per=last["learner"].str.extract(r"per=(\d+)", expand=False).astype(int))
    last = last.sort_values("per")
    return (listing([f"{x:.2f}" for x in last["loss"]]) + " with "
            + listing([num(p, 0) for p in last["per"]]) + " per step")
