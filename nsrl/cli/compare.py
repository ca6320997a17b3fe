"""``nsrl compare``: exact loss against samples used, sample-based operators beside exact ones.

    nsrl compare --garnet 50,4,2 --schemes api,cpi(0.1),nspi(5)
                 --operators rollout-csc,lstdq,exact --run-budget 200000 --seeds 3 --out DIR
                 [--features onehot] [--horizon H|geometric] [--rollout-m M]
                 [--critic auto|lstd|regression|none] [--OPTION VALUE ...]

``--run-budget`` is the transitions of one run (its greedy calls share it: each gets
``run budget // iterations``, the operators' own budget); every other option of the
registered operators is a flag of its name (``nsrl compare --help``). ``--budget`` is the
spelling of earlier releases for ``--run-budget`` (it warns; in ``nsrl run`` it is the
transitions of one greedy call).

See :mod:`nsrl.experiments.compare` for the learners, the table and the figure.
"""

from __future__ import annotations

import argparse

from nsrl.cli.common import (
    UsageError,
    add_problem_arguments,
    add_quiet_argument,
    integer,
    load_problem,
    note,
    show_progress,
    user_input,
)
from nsrl.cli.core import check_iterations
from nsrl.cli.options import (
    _Renamed,
    add_operator_arguments,
    check_sample_memory,
    operator_options,
)
from nsrl.greedy.registry import make_operator, operator_entry, operator_names, options_for


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


def _names(option: str, text: str) -> list[str]:
    names = _split(text)
    if not names:
        raise UsageError(f"{option} is empty; give at least one name, e.g. "
                         f"{option} {_DEFAULTS[option]}.")
    return names


def _cmd_compare(args) -> int:
    from nsrl.experiments.accuracy import check_losses
    from nsrl.experiments.compare import compare, load_sb3, plot, scheme_learner
    from nsrl.experiments.locking import check_unlocked, locked
    from nsrl.experiments.safe_io import atomic_path, make_folder, refuse_link, remove_made
    from nsrl.experiments.storage import check_folder

    schemes, operators = _names("--schemes", args.schemes), _names("--operators", args.operators)
    with user_input():
        for op in operators:
            operator_entry(op)  # an unknown name, before the flags are checked against it
    given = operator_options(args, operators)
    with user_input():
        out = check_folder(args.out)
        mdp = load_problem(args)
        check_iterations(args.iterations, mdp)
        learners = {}
        per_operator = options_for(operators, given)
        for scheme in schemes:
            for op in operators:
                learners[f"{scheme}/{op}"] = scheme_learner(scheme, op, args.iterations,
                                                            **per_operator[op])
        if args.sb3:
            learners.update(load_sb3(_split(args.sb3)))
        per_call = max(1, args.run_budget // args.iterations)  # as scheme_learner draws them
        for op in operators:
            what = f"--run-budget {args.run_budget} ({per_call:,} transitions per greedy " \
                   f"call, run budget / iterations)"
            check_sample_memory(op, mdp, per_call, what, "lower --run-budget")
            if operator_entry(op).sample_based:  # a budget too small for one state, now
                try:
                    make_operator(op, mdp, **per_operator[op], budget=per_call)
                except ValueError as exc:
                    raise ValueError(f"{what} with {op}: {exc}") from None
        for name in ("compare.csv", "compare.png"):
            refuse_link(out / name)
        check_unlocked(out)
    made = make_folder(out)
    seeds = range(args.seed, args.seed + args.seeds)
    try:
        with locked(out), _bar(args, len(learners) * len(seeds)) as bar:
            df = compare(mdp, learners, args.run_budget, seeds,
                         progress=lambda name, seed: bar.update(1))
            with user_input():  # an impossible loss is never written
                check_losses(df["loss"], mdp.gamma, mdp.r_max, "the losses")
            with atomic_path(out / "compare.csv") as tmp:
                df.to_csv(tmp, index=False)
            with atomic_path(out / "compare.png", ".png") as tmp:
                plot(df, tmp, repr(mdp))
    finally:
        remove_made(made)  # nothing written (an error, Ctrl-C): no empty folder left
    final = df.sort_values("checkpoint").groupby(["learner", "seed"]).last()
    summary = final.groupby("learner", sort=False).agg(samples=("samples", "mean"),
                                                       loss=("loss", "mean"))
    print(summary.to_string(float_format=lambda x: f"{x:.4g}"))
    note(args, f"wrote {out / 'compare.csv'} and {out / 'compare.png'}")
    return 0


def _bar(args, total: int):
    """A bar over the (learner, seed) runs, drawn only on a terminal and without --quiet."""
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="run", desc="nsrl compare", disable=not show_progress(args))


_DEFAULTS = {"--schemes": "api,cpi(0.1),nspi(5)", "--operators": "rollout-csc,lstdq,exact"}


def add_parser(subparsers) -> None:
    """Register ``nsrl compare``."""
    p = subparsers.add_parser("compare", help="exact loss vs samples: sample-based vs exact")
    add_problem_arguments(p)
    p.add_argument("--schemes", default=_DEFAULTS["--schemes"], help="comma-separated schemes")
    p.add_argument("--operators", default=_DEFAULTS["--operators"],
                   help=", ".join(operator_names()))
    p.add_argument("--run-budget", type=integer(1), default=100_000,
                   help="transitions per run (default 100000); each greedy call of a "
                   "sample-based operator gets run budget / iterations of them")
    # The spelling of earlier releases, hidden, for one more release (it warns): `nsrl run
    # --budget` counts the transitions of one greedy call, this one those of a run.
    p.add_argument("--budget", dest="run_budget", type=integer(1), default=argparse.SUPPRESS,
                   action=_Renamed, new="--run-budget", help=argparse.SUPPRESS)
    p.add_argument("--iterations", type=integer(1), default=20,
                   help="scheme iterations per run (default 20)")
    add_operator_arguments(p, exclude=("budget",))
    p.add_argument("--seeds", type=integer(1), default=3, help="runs per learner (default 3)")
    p.add_argument("--seed", type=integer(0), default=0,
                   help="the seed of the runs (default 0; a learner's runs have seeds seed, "
                   "seed + 1, ...); --mdp-seed is the Garnet's")
    p.add_argument("--sb3", default="", help="also SB3 learners, e.g. ppo,a2c,dqn")
    p.add_argument("--out", required=True, help="output directory")
    add_quiet_argument(p)
    p.set_defaults(func=_cmd_compare)
