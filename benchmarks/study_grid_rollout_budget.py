"""Rollouts + CSC on the grid world at 10^5 states: loss against transitions per greedy call.

The ``bigger`` family's grid world MDP 0 at n_states = 10^5 (90 007 free cells, gamma = 0.99),
its operator as the ``grid-rollout`` variant builds it (rollouts + cost-sensitive
classification on the 10 x 10 RBF Phi, the operator's other options at their defaults), with
the budget of each call changed: N = 10^5 (the family's), 10^6, 10^7 transitions per call.
``--classifier`` picks the fit: ``softmax`` (the default since issue 46: the soft-label
multinomial fit by Newton steps) or ``logistic`` (scikit-learn's LogisticRegression, what the
family's committed results used). Each (scheme, N) is one run, its run seed the family's
(``Sweep.run_rngs``), in a child process stopped after ``--cap`` CPU seconds; the exact loss
after every call, the first call at which the loss is <= 10% of pi_0's (the target the LSTD-Q
study used) and the best loss reached. One JSON line per result is appended to
``benchmarks/results/study_grid_rollout_budget.jsonl`` as soon as it is done, and the table
of every line of that file is printed at the end.

    python benchmarks/study_grid_rollout_budget.py                       # ~1 CPU hour
    python benchmarks/study_grid_rollout_budget.py --schemes api --budgets 100000 \\
        --classifier logistic                                            # the family's fit
    python benchmarks/study_grid_rollout_budget.py --table               # print the table only

BLAS runs on one thread.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import nsrl
from nsrl.experiments import load_experiment
from nsrl.experiments.shards import Shard

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "study_grid_rollout_budget.jsonl"
TARGET = 0.10  # a loss <= 10% of pi_0's, as in study_grid_transitions.py


def instance(n_states: int, budget: int, classifier: str):
    """(sweep, shard, MDP 0, pi_0's loss) of the ``grid-rollout`` variant at ``budget``."""
    base = load_experiment("bigger").sweeps()["grid-rollout"]
    sweep = base.replace(n_states=(n_states,), operator={
        "name": "rollout-csc", "options": {"budget": budget, "classifier": classifier}})
    shard = next(s for s in sweep.shards() if s.mdp == 0)
    assert isinstance(shard, Shard)
    mdp = sweep.model(shard)
    return sweep, shard, mdp, nsrl.loss(mdp, nsrl.constant())


def _run(n_states: int, scheme: str, budget: int, classifier: str, iterations: int,
         cap: float, queue) -> None:
    """One (scheme, budget), in a child process limited to ``cap`` CPU seconds."""
    resource.setrlimit(resource.RLIMIT_CPU, (int(cap), int(cap) + 10))
    with threadpool_limits(1, "blas"):
        sweep, shard, mdp, l0 = instance(n_states, budget, classifier)
        start = time.process_time()
        operator = sweep.operator_spec(shard).make(mdp)
        hist = nsrl.run(scheme, operator, iterations, rng=sweep.run_rngs(shard, scheme)[0],
                        mdp=mdp, engine="reference")
        queue.put(([round(float(x), 6) for x in hist.losses], int(hist.samples[-1]), l0,
                   time.process_time() - start))


def write(record: dict, out: Path) -> None:
    print(json.dumps(record), flush=True)
    with out.open("a") as f:
        f.write(json.dumps(record) + "\n")


def table(out: Path) -> str:
    """The markdown table of every line of ``out``."""
    lines = ["| classifier | scheme | transitions per call | loss after call 1, 2, 5, last "
             "(% of pi_0's) | best | first call <= 10% | CPU s |",
             "|---|---|---:|---|---:|---:|---:|"]
    for line in out.read_text().splitlines():
        r = json.loads(line)
        if r["losses"] is None:
            lines.append(f"| {r['classifier']} | {r['scheme']} | {r['budget']:,} | "
                         f"{r['stopped']} | - | - | {r['cpu_seconds']:.0f} |")
            continue
        losses, l0 = np.asarray(r["losses"]), r["loss_pi0"]
        picks = [losses[i] for i in (0, 1, 4) if i < len(losses) - 1] + [losses[-1]]
        shown = ", ".join(f"{x:.2f} ({100 * x / l0:.0f}%)" for x in picks)
        first = r["first_call_within_target"]
        lines.append(f"| {r['classifier']} | {r['scheme']} | {r['budget']:,} | {shown} | "
                     f"{losses.min():.2f} | {first if first else 'never'} | "
                     f"{r['cpu_seconds']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemes", default="api,psdp", help="comma-separated")
    parser.add_argument("--budgets", default="100000,1000000,10000000",
                        help="transitions per call, comma-separated")
    parser.add_argument("--classifier", default="softmax", choices=("softmax", "logistic"))
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--cap", type=float, default=1800.0,
                        help="CPU seconds after which a run is stopped and recorded as such")
    parser.add_argument("--n-states", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON-lines file appended to")
    parser.add_argument("--table", action="store_true", help="print the table of --out only")
    args = parser.parse_args()
    if args.table:
        print(table(args.out))
        return
    schemes = args.schemes.split(",")
    for scheme in schemes:
        nsrl.make_scheme(scheme)  # a wrong name fails before any work
    budgets = [int(x) for x in args.budgets.split(",")]
    ctx = mp.get_context("fork")
    for budget in budgets:
        for scheme in schemes:
            queue = ctx.Queue()
            child = ctx.Process(target=_run, args=(args.n_states, scheme, budget,
                                                   args.classifier, args.iterations, args.cap,
                                                   queue))
            child.start()
            child.join()
            record = {"classifier": args.classifier, "scheme": scheme, "budget": budget,
                      "n_states": args.n_states, "iterations": args.iterations,
                      "date": time.strftime("%Y-%m-%d %H:%M"),
                      "load_at_end": round(os.getloadavg()[0], 2)}
            if child.exitcode != 0:
                write({**record, "losses": None, "stopped": f"stopped over the cap of "
                       f"{args.cap:.0f} CPU s (exit code {child.exitcode})",
                       "cpu_seconds": args.cap}, args.out)
                continue
            losses, samples, l0, cpu = queue.get()
            crossed = np.flatnonzero(np.asarray(losses) / l0 <= TARGET)
            write({**record, "loss_pi0": l0, "losses": losses, "samples": samples,
                   "first_call_within_target": int(crossed[0]) + 1 if len(crossed) else None,
                   "cpu_seconds": round(cpu, 1)}, args.out)
    print(table(args.out))


if __name__ == "__main__":
    main()
