"""``nsrl garnet`` and ``nsrl run``: the core commands (a stable contract).

nsrl garnet --states S --actions A --branching B [--n-features P] [--gamma G] [--mdp-seed N]
--out F
nsrl run --scheme NAME (--garnet S,A,B [--mdp-seed N] | --mdp F) [--iterations K]
[--operator NAME] [--OPTION VALUE ...] [--seed N] [--json]

``--OPTION`` is any option of the registered operators, spelled as declared with dashes
(``--noise``, ``--budget``, ``--features``, ``--value-estimate``, ``--horizon``,
``--rollout-m``, ``--critic``...; ``nsrl run --help`` lists them).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from nsrl.cli.common import (
    GAMMA_HELP,
    GAMMA_MAX,
    MDP_SEED_HELP,
    N_FEATURES_HELP,
    UsageError,
    add_problem_arguments,
    add_quiet_argument,
    check_features,
    integer,
    load_problem,
    note,
    npz_target,
    real,
    show_progress,
    user_input,
)
from nsrl.cli.options import (
    _Renamed,
    add_operator_arguments,
    check_sample_memory,
    flagged,
    operator_options,
)
from nsrl.greedy.registry import make_operator, operator_entry, operator_names
from nsrl.schemes.registry import scheme_names

ORDER = 0  # listed first in ``nsrl --help``


def _cmd_garnet(args) -> int:
    from nsrl.experiments.safe_io import make_folder, output_error, remove_made
    from nsrl.model.garnet import garnet

    check_features(args.n_features, args.states)
    path = npz_target(args.out)  # what numpy writes: --out noext writes noext.npz; no link
    with user_input():
        mdp = garnet(args.states, args.actions, args.branching, args.n_features, args.gamma,
                     seed=args.mdp_seed)
    made = make_folder(path.parent)  # as reproduce and compare do with --out; said below
    try:  # mdp.save is atomic: an existing file stays whole until the new one is complete
        path = mdp.save(path)
    except OSError as exc:  # a full disk, a read-only folder: one line naming the file
        remove_made(made)
        raise output_error(exc, path) from None
    except BaseException:
        remove_made(made)
        raise
    if made:  # innermost first: name the outermost folder created
        note(args, f"created the folder {made[-1]} (missing folders of --out are made)")
    note(args, f"wrote {mdp!r} to {path}")
    return 0


def build_operator(args, mdp, options: dict | None = None):
    """The registered operator named by ``--operator`` with the options given as flags.

    Built by :func:`nsrl.greedy.registry.make_operator`; a sample-based operator's memory
    is checked first, and a refusal names the flags. ``options``: those of
    :func:`operator_options` when the caller has them already (checked once).
    """
    if options is None:
        options = operator_options(args, [args.operator])
    entry = operator_entry(args.operator)
    if entry.sample_based:
        budget = options.get("budget", entry.params["budget"].default)
        with user_input():  # the memory its --budget needs, before any work
            check_sample_memory(entry.name, mdp, budget, f"--budget {budget}", "lower --budget")
    try:
        return make_operator(entry.name, mdp, **options)
    except (ValueError, TypeError) as exc:  # name the flags the operator refused
        given = {args.operator_flags[k]: v for k, v in options.items()}
        raise UsageError(f"--operator {args.operator} with "
                         f"{flagged(given, options, args.operator_flags)}: {exc}") from None


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

    options = operator_options(args, [args.operator])  # the flags, before any work
    with user_input():
        scheme = make_scheme(args.scheme)
        mdp = load_problem(args)
        check_iterations(args.iterations, mdp)
    operator = build_operator(args, mdp, options)
    hist = run(scheme, operator, args.iterations, rng=np.random.default_rng(args.seed), mdp=mdp,
               progress=not args.json and show_progress(args))
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
    p.add_argument("--states", type=integer(1), required=True,
                   help="n_S; up to n_S^2 n_A = 1e9 successors are drawn as in earlier versions "
                   "(the same instances, O(S^2 A) time: 8-30 s at 1e4 states and 10 actions), "
                   "beyond in O(S A b) (1e5 states: 0.2 s)")
    p.add_argument("--actions", type=integer(1), required=True, help="n_A, actions per state")
    p.add_argument("--branching", type=integer(1), required=True,
                   help="b, successors of each state-action pair (at most n_S)")
    p.add_argument("--n-features", type=integer(1), default=None,
                   help=N_FEATURES_HELP)
    # --features P is the spelling of earlier releases (hidden; it warns): in `nsrl run` and
    # `nsrl compare`, --features names the sample-based operators' state features.
    p.add_argument("--features", dest="n_features", type=integer(1), default=None,
                   action=_Renamed, new="--n-features", help=argparse.SUPPRESS)
    p.add_argument("--gamma", type=real(0, GAMMA_MAX, low_open=True), default=0.99,
                   help=GAMMA_HELP)
    p.add_argument("--mdp-seed", type=integer(0), default=0, help=MDP_SEED_HELP)
    # --seed N is the spelling of earlier releases (hidden; it warns): in `nsrl run` and `nsrl
    # compare`, --seed is the seed of the runs, and --mdp-seed the Garnet's, as here.
    p.add_argument("--seed", dest="mdp_seed", type=integer(0), default=argparse.SUPPRESS,
                   action=_Renamed, new="--mdp-seed", help=argparse.SUPPRESS)
    p.add_argument("--out", required=True, help="file to write (.npz is appended if missing)")
    add_quiet_argument(p)
    p.set_defaults(func=_cmd_garnet)

    p = sub.add_parser("run", help="run one scheme and print its losses")
    p.add_argument("--scheme", required=True,
                   help="a registered scheme: " + ", ".join(scheme_names()))
    add_problem_arguments(p)
    p.add_argument("--iterations", type=integer(1), default=100,
                   help="scheme iterations per run (default 100)")
    p.add_argument("--operator", default="projected",
                   help="greedy operator: " + ", ".join(operator_names()) + " (default projected)")
    add_operator_arguments(p)
    p.add_argument("--seed", type=integer(0), default=0,
                   help="the seed of the runs (default 0); --mdp-seed is the Garnet's")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet_argument(p)
    p.set_defaults(func=_cmd_run)
