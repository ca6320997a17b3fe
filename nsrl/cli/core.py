"""``nsrl garnet`` and ``nsrl run``: the core commands (a stable contract).

nsrl garnet --states S --actions A --branching B [--features P] [--gamma G] --seed N --out F
nsrl run --scheme NAME (--garnet S,A,B [--mdp-seed N] | --mdp F) [--iterations K]
[--noise IOTA] [--operator NAME] [--samples N] [--horizon H|geometric] [--rollout-m M]
[--critic auto|lstd|regression|none] [--seed N] [--json]
"""

from __future__ import annotations

import json
import sys

import numpy as np

from nsrl.cli.common import (
    GAMMA_MAX,
    OPERATOR_FLAGS,
    UsageError,
    add_operator_arguments,
    add_problem_arguments,
    check_features,
    check_sample_memory,
    integer,
    load_problem,
    npz_target,
    operator_options,
    real,
    user_input,
)
from nsrl.greedy.registry import operator_names
from nsrl.schemes.registry import scheme_names

ORDER = 0  # listed first in ``nsrl --help``


def _cmd_garnet(args) -> int:
    from nsrl.experiments.safe_io import make_folder, output_error, remove_made
    from nsrl.model.garnet import garnet

    check_features(args.features, args.states)
    path = npz_target(args.out)  # what numpy writes: --out noext writes noext.npz; no link
    with user_input():
        mdp = garnet(args.states, args.actions, args.branching, args.features, args.gamma,
                     seed=args.seed)
    made = make_folder(path.parent)
    try:  # mdp.save is atomic: an existing file stays whole until the new one is complete
        path = mdp.save(path)
    except OSError as exc:  # a full disk, a read-only folder: one line naming the file
        remove_made(made)
        raise output_error(exc, path) from None
    except BaseException:
        remove_made(made)
        raise
    print(f"wrote {mdp!r} to {path}", file=sys.stderr)
    return 0


def make_operator(args, mdp):
    """The registered operator named by ``--operator`` with the options given as flags."""
    from nsrl.greedy.registry import operator_entry

    name = args.operator
    with user_input():
        entry = operator_entry(name)
    options = operator_options(args, [entry.name])
    if entry.sample_based:
        samples = options.get("samples", entry.params["samples"].default)
        check_sample_memory(name, mdp, samples, f"--samples {samples}", "lower --samples")
    try:
        return entry.make(mdp, **options)
    except (ValueError, TypeError) as exc:  # name the flags the operator refused
        flags = " ".join(f"{flag} {getattr(args, flag[2:].replace('-', '_'))}"
                         for flag, key in OPERATOR_FLAGS.items() if key in options)
        raise UsageError(f"--operator {name} with {flags}: {exc}") from None


ROLLOUT_HELP = {
    "--horizon": "rollout horizon H when no critic value ends the rollouts (the first call, "
                 "--critic none): an int, or 'geometric' (unbiased, noisy at gamma near 1); "
                 "default: the operator's (30)",
    "--rollout-m": "rollout length m before the critic's bootstrap gamma^m V(s_m) (CBMPI); "
                   "default: the operator's (1)",
    "--critic": "what ends the m-step rollouts: lstd (LSTD(0) on the previous call's "
                "transitions), regression (LinearRegression on its Q estimates), none (plain "
                "H-step rollouts), auto (lstd)",
}


def add_rollout_arguments(p) -> None:
    """--horizon, --rollout-m, --critic: the rollout operators' options (their declarations)."""
    add_operator_arguments(p, ROLLOUT_HELP, ROLLOUT_HELP)


def check_iterations(iterations: int, mdp) -> None:
    """Refuse ``--iterations`` whose history cannot fit in memory (ValueError).

    Per iteration: the losses, memory, steps, samples and errors (8 bytes each) and the
    scheme's output, a policy of at most n_S x n_A floats (PSDP, NSPI and CPI keep them all).
    """
    from nsrl.model.memory import check_memory

    check_memory(iterations * (48 + 8 * mdp.n_states * mdp.n_actions),
                 f"--iterations {iterations:,} (the history of every iteration)",
                 "lower --iterations")


def _cmd_run(args) -> int:
    from nsrl.engine import run
    from nsrl.experiments.accuracy import check_losses
    from nsrl.schemes import make_scheme

    operator_options(args, [args.operator])  # before any work
    with user_input():
        scheme = make_scheme(args.scheme)
        mdp = load_problem(args)
        check_iterations(args.iterations, mdp)
    operator = make_operator(args, mdp)
    hist = run(scheme, operator, args.iterations, rng=np.random.default_rng(args.seed), mdp=mdp,
               progress=not args.json and sys.stderr.isatty())
    with user_input():  # an impossible loss is never printed
        check_losses(hist.losses, mdp.gamma, mdp.r_max, f"{scheme.name}'s losses")
    if args.json:
        out = {
            "scheme": scheme.name,
            "operator": args.operator,
            "losses": [float(x) for x in hist.losses],
            "memory": [int(x) for x in hist.memory],
            "steps": [None if np.isnan(x) else float(x) for x in hist.steps],
            "samples": [int(x) for x in hist.samples],
        }
        print(json.dumps(out, allow_nan=False))
    else:
        print(f"{scheme.name} on {mdp!r}")
        for k in sorted({0, len(hist.losses) // 4, len(hist.losses) // 2, len(hist.losses) - 1}):
            print(f"  iteration {k + 1:4d}  loss {hist.losses[k]:10.5f}  memory {hist.memory[k]}")
    return 0


def add_parser(sub) -> None:
    """Register ``nsrl garnet`` and ``nsrl run``."""
    p = sub.add_parser("garnet", help="draw a Garnet MDP and save it as .npz")
    p.add_argument("--states", type=integer(1), required=True)
    p.add_argument("--actions", type=integer(1), required=True)
    p.add_argument("--branching", type=integer(1), required=True)
    p.add_argument("--features", type=integer(1), default=None)
    p.add_argument("--gamma", type=real(0, GAMMA_MAX, low_open=True), default=0.99)
    p.add_argument("--seed", type=integer(0), required=True)
    p.add_argument("--out", required=True, help="file to write (.npz is appended if missing)")
    p.set_defaults(func=_cmd_garnet)

    p = sub.add_parser("run", help="run one scheme and print its losses")
    p.add_argument("--scheme", required=True,
                   help="a registered scheme: " + ", ".join(scheme_names()))
    add_problem_arguments(p)
    p.add_argument("--iterations", type=integer(1), default=100)
    p.add_argument("--operator", default="projected",
                   help="greedy operator: " + ", ".join(operator_names()) + " (default projected)")
    add_operator_arguments(p, ["--noise", "--samples"], {
        "--noise": "noise amplitude iota of the projected operator",
        "--samples": "transitions per greedy call of a sample-based operator"})
    add_rollout_arguments(p)
    p.add_argument("--seed", type=integer(0), default=0, help="run seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_run)
