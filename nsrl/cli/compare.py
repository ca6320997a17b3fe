"""``nsrl compare``: exact loss against samples used, sample-based operators beside exact ones.

    nsrl compare --garnet 50,4,2 --schemes api,cpi(0.1),nspi(5)
                 --operators rollout-csc,lstdq,exact --budget 200000 --seeds 3 --out DIR

See :mod:`nsrl.experiments.compare` for the learners, the table and the figure.
"""

from __future__ import annotations

import sys
from pathlib import Path

from nsrl.cli.common import UsageError, add_problem_arguments, load_problem, user_input


def _split(text: str) -> list[str]:
    # Scheme names contain commas only inside parentheses, e.g. "api(0.1)".
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return [x for x in out + [cur.strip()] if x]


def _cmd_compare(args) -> int:
    if args.budget < 1 or args.seeds < 1 or args.iterations < 1:
        raise UsageError(f"--budget, --seeds and --iterations should be >= 1, got "
                         f"{args.budget}, {args.seeds}, {args.iterations}.")
    from nsrl.experiments.compare import compare, load_sb3, plot, scheme_learner

    mdp = load_problem(args)
    learners = {}
    with user_input():
        for scheme in _split(args.schemes):
            for op in _split(args.operators):
                learners[f"{scheme}/{op}"] = scheme_learner(
                    scheme, op, args.iterations, horizon=args.horizon,
                    features=args.representation)
        if args.sb3:
            learners.update(load_sb3(_split(args.sb3)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    df = compare(mdp, learners, args.budget, range(args.seed, args.seed + args.seeds),
                 progress=lambda n, s: print(f"  {n} seed {s}", file=sys.stderr))
    df.to_csv(out / "compare.csv", index=False)
    plot(df, out / "compare.png", repr(mdp))
    final = df.sort_values("checkpoint").groupby(["learner", "seed"]).last()
    summary = final.groupby("learner", sort=False).agg(samples=("samples", "mean"),
                                                       loss=("loss", "mean"))
    print(summary.to_string(float_format=lambda x: f"{x:.4g}"))
    print(f"wrote {out / 'compare.csv'} and {out / 'compare.png'}", file=sys.stderr)
    return 0


def add_parser(subparsers) -> None:
    """Register ``nsrl compare``."""
    p = subparsers.add_parser("compare", help="exact loss vs samples: sample-based vs exact")
    add_problem_arguments(p)
    p.add_argument("--schemes", default="api,cpi(0.1),nspi(5)", help="comma-separated schemes")
    p.add_argument("--operators", default="rollout-csc,lstdq,exact",
                   help="rollout-csc, rollout-reg, lstdq, exact, projected")
    p.add_argument("--budget", type=int, default=100_000, help="transitions per run")
    p.add_argument("--iterations", type=int, default=20, help="scheme iterations per run (20)")
    p.add_argument("--horizon", type=int, default=None,
                   help="rollout horizon H before the critic has data (default: the operator's)")
    p.add_argument("--representation", choices=["phi", "onehot"], default=None,
                   help="state features of the sample-based operators (default: Phi)")
    p.add_argument("--seeds", type=int, default=3, help="runs per learner (3)")
    p.add_argument("--seed", type=int, default=0, help="first run seed (0)")
    p.add_argument("--sb3", default="", help="also SB3 learners, e.g. ppo,a2c,dqn")
    p.add_argument("--out", required=True, help="output directory")
    p.set_defaults(func=_cmd_compare)
