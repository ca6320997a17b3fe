"""The study behind the rollout operators' defaults (m, H, critic, n_rollouts, CRN, states).

Garnet(50, 4, 2), gamma = 0.99, one-hot features, RolloutCSC with LogisticRegression (the
classifier of ``nsrl compare``), rho = nu unless the scheme says otherwise.

A. **One-call greedy error against the budget**: ``nu (T v - T_{pi'} v)`` for v the value of
   the target, measured with the model (``nsrl.schemes.base.greedy_error``), for the
   targets pi_0 (action 0 everywhere) and pi* (the regime API ends in). A configuration with
   a critic is measured after warm-up calls with the same target and budget (one for the
   LSTD critic, whose data are one call's transitions; three for the regression critic,
   which chains its estimates), i.e. in the steady state of a scheme whose target stops
   changing.
B. **Final exact loss after 20 iterations** (``nsrl.run``), 15 000 transitions per call
   (300 000 in all), for API and PSDP under every configuration, with the mean in-run
   greedy error.
C. API and PSDP at 3 000 and 50 000 transitions per call, for the choice of m and critic.
D. Every scheme under the chosen defaults (and a few alternatives), 15 000 per call.

Every figure is a mean over mdp seeds 0, 1, 2 x run seeds (``--repeats``, default 3; one
run per mdp seed at 10^7 transitions per call).

Run: ``python benchmarks/study_rollouts.py`` (about 30 minutes on 2 shared cores; ``--quick``
for a smaller grid). Tables are printed as markdown and saved under benchmarks/results/.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression, LogisticRegression
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.envs import FiniteMDPVectorEnv
from nsrl.greedy import RolloutCSC
from nsrl.greedy.critic import ExactCritic, LSTDCritic
from nsrl.schemes.base import Step, greedy_error

OLD = dict(critic=None, crn=False, stratified=False, every_state=False)  # before the study
REG = LinearRegression()  # the regression critic (one-hot critic features: tabular)
CONFIGS = {
    "geometric (old nsrl compare)": dict(horizon="geometric", **OLD),
    "H=30 (old)": dict(horizon=30, **OLD),
    "H=30 +CRN": dict(critic=None, horizon=30, crn=True, stratified=False),
    "H=30 +CRN +strat": dict(critic=None, horizon=30),
    "H=100 +CRN +strat": dict(critic=None, horizon=100),
    "geometric +CRN +strat": dict(critic=None, horizon="geometric"),
    "m=1 LSTD (defaults)": dict(),
    "m=1 LSTD, no CRN": dict(crn=False),
    "m=1 LSTD, no strat": dict(stratified=False),
    "m=1 LSTD, K=4": dict(n_rollouts=4),
    "m=1 LSTD, H=100": dict(horizon=100),
    "m=2 LSTD": dict(m=2),
    "m=3 LSTD": dict(m=3),
    "m=5 LSTD": dict(m=5),
    "m=5 LSTD, no CRN": dict(m=5, crn=False),
    "m=10 LSTD": dict(m=10),
    "m=1 regression": dict(m=1, critic=REG),
    "m=2 regression": dict(m=2, critic=REG),
    "m=5 regression": dict(m=5, critic=REG),
    "m=1 exact critic (oracle)": dict(m=1, critic="exact"),
    "m=5 exact critic (oracle)": dict(m=5, critic="exact"),
}
DEFAULT = "m=1 LSTD (defaults)"
# At 10^7 transitions per call only these run (one run per mdp seed): it takes a while.
BIG = ("geometric (old nsrl compare)", "H=30 +CRN +strat", "geometric +CRN +strat",
       "m=1 LSTD (defaults)", "m=5 LSTD")


def operator(mdp, budget, cfg):
    cfg = dict(cfg)
    if cfg.get("critic") == "exact":
        cfg["critic"] = ExactCritic(mdp)
    return RolloutCSC(FiniteMDPVectorEnv(mdp), LogisticRegression(max_iter=1000),
                      budget=budget, features="onehot", **cfg)


def warmups(op) -> int:
    """Calls before the measured one: the LSTD critic needs one call's data; the regression
    critic chains its estimates (modified policy iteration), three calls; none without."""
    if op.critic is None or isinstance(op.critic, ExactCritic):
        return 0
    return 1 if isinstance(op.critic, LSTDCritic) else 3


def one_call(budgets, configs, repeats):
    rows = []
    for seed in range(3):
        mdp = nsrl.garnet(50, 4, 2, seed=seed)
        targets = {"pi_0": nsrl.constant(0),
                   "pi*": nsrl.Deterministic(nsrl.greedy_actions(mdp, nsrl.optimal_value(mdp)))}
        for tname, target in targets.items():
            for name, cfg in configs.items():
                for budget in budgets:
                    if budget > 3_000_000 and name not in BIG:
                        continue
                    for r in range(repeats if budget <= 3_000_000 else 1):
                        rng = np.random.default_rng(1000 * seed + r)
                        op = operator(mdp, budget, cfg)
                        for _ in range(warmups(op)):  # the critic's data
                            op.greedy(target, nsrl.Nu(), rng)
                        g = op.greedy(target, nsrl.Nu(), rng)
                        err = greedy_error(mdp, Step(target=target, rho=nsrl.Nu(), greedy=g))
                        rows.append((name, tname, budget, seed, r, err, g.samples))
    return pd.DataFrame(rows, columns=["config", "target", "budget", "mdp", "run", "error",
                                       "samples"])


def final_losses(schemes, configs, per_call, repeats, iterations=20):
    rows = []
    for scheme in schemes:
        for name, cfg in configs.items():
            for seed in range(3):
                mdp = nsrl.garnet(50, 4, 2, seed=seed)
                for r in range(repeats):
                    if name == "exact":
                        op, runs = nsrl.ExactGreedy(mdp), r == 0
                    else:
                        op, runs = operator(mdp, per_call, cfg), True
                    if not runs:
                        continue
                    t0 = time.perf_counter()
                    h = nsrl.run(nsrl.make_scheme(scheme), op, iterations,
                                 rng=np.random.default_rng(seed + 100 * r), measure_errors=True)
                    rows.append((scheme, name, per_call, seed, r, h.losses[-1],
                                 float(np.nanmean(h.errors)), int(h.samples[-1]),
                                 time.perf_counter() - t0))
    return pd.DataFrame(rows, columns=["scheme", "config", "per_call", "mdp", "run", "loss",
                                       "mean_error", "samples", "seconds"])


def table(df, index, columns, value, fmt="{:.3f}"):
    pivot = df.pivot_table(index=index, columns=columns, values=value, aggfunc="mean",
                           sort=False)
    head = "| " + " | ".join([str(index)] + [str(c) for c in pivot.columns]) + " |"
    lines = [head, "|" + "---|" * (len(pivot.columns) + 1)]
    for idx, row in pivot.iterrows():
        lines.append("| " + " | ".join([str(idx)] + [fmt.format(x) for x in row]) + " |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller grid (a few minutes)")
    p.add_argument("--repeats", type=int, default=3, help="run seeds per mdp seed (3)")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    budgets = [3_000, 30_000, 300_000] if args.quick else [3_000, 10_000, 30_000, 100_000,
                                                           300_000, 1_000_000, 10_000_000]
    t0 = time.time()
    a = one_call(budgets, CONFIGS, args.repeats)
    a.to_csv(out / "study_rollouts_one_call.csv", index=False)
    for tname in ("pi*", "pi_0"):
        print(f"\n### A. One-call greedy error nu(T v - T_pi' v), target {tname}\n")
        print(table(a[a.target == tname], "config", "budget", "error"))
    print(f"\n({time.time() - t0:.0f} s)")

    b = final_losses(["api", "psdp"], CONFIGS, 15_000, args.repeats)
    print("\n### B. Final exact loss after 20 iterations, 15 000 transitions per call\n")
    print(table(b, "config", "scheme", "loss"))
    print("\nMean in-run greedy error (nu(T v - T_pi' v) over the 20 calls):\n")
    print(table(b, "config", "scheme", "mean_error"))
    sweep = {name: CONFIGS[name] for name in ("m=1 LSTD (defaults)", "m=2 LSTD", "m=3 LSTD",
                                              "m=5 LSTD", "m=1 regression")}
    c = pd.concat([final_losses(["api", "psdp"], sweep, per_call, args.repeats)
                   for per_call in ([3_000, 50_000] if not args.quick else [3_000])])
    c = pd.concat([c, b[b.config.isin(sweep)]])
    c["setting"] = c.scheme + " @ " + c.per_call.astype(str) + "/call"
    print("\n### C. Final loss against the per-call budget and m\n")
    print(table(c, "config", "setting", "loss"))
    schemes = ["api", "api(0.1)", "cpi(0.1)", "cpi+", "nspi(5)", "psdp"]
    d = final_losses(schemes, {"exact": None, DEFAULT: {},
                               "defaults, one walk per d_{pi,nu} state":
                                   dict(every_state=False),
                               "m=1 regression": CONFIGS["m=1 regression"],
                               "geometric (old nsrl compare)":
                                   CONFIGS["geometric (old nsrl compare)"]}, 15_000,
                     args.repeats)
    print("\n### D. Every scheme, 300 000 transitions over 20 iterations\n")
    print(table(d, "config", "scheme", "loss"))
    pd.concat([b, c, d]).to_csv(out / "study_rollouts_runs.csv", index=False)
    print(f"\nwall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):
        main()
