"""``nsrl garnet`` and ``nsrl run``: the core commands (a stable contract).

nsrl garnet --states S --actions A --branching B [--features P] [--gamma G] --seed N --out F
nsrl run --scheme NAME (--garnet S,A,B [--mdp-seed N] | --mdp F) [--iterations K]
[--noise IOTA] [--operator NAME] [--samples N] [--horizon H|geometric] [--rollout-m M]
[--critic auto|lstd|regression|none] [--seed N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from nsrl.cli.common import (
    GAMMA_MAX,
    UsageError,
    add_problem_arguments,
    check_features,
    check_sample_memory,
    integer,
    load_problem,
    npz_target,
    real,
    user_input,
)

ORDER = 0  # listed first in ``nsrl --help``
NOISE_MAX = 1e6  # as nsrl.experiments.presets.NOISE_MAX (not imported: it loads the schemes)


def _cmd_garnet(args) -> int:
    from nsrl.experiments.safe_io import atomic_path, make_folder, remove_made
    from nsrl.model.garnet import garnet

    check_features(args.features, args.states)
    path = npz_target(args.out)  # what numpy writes: --out noext writes noext.npz
    with user_input():
        mdp = garnet(args.states, args.actions, args.branching, args.features, args.gamma,
                     seed=args.seed)
    made = make_folder(path.parent)
    try:  # an existing file stays whole until the new one is complete (killed or disk full)
        with atomic_path(path, suffix=".npz") as tmp:
            mdp.save(tmp)
    except BaseException:
        remove_made(made)
        raise
    print(f"wrote {mdp!r} to {path}", file=sys.stderr)
    return 0


def make_operator(args, mdp):
    """The greedy operator named by ``--operator`` (core: exact, projected)."""
    from nsrl.greedy import ExactGreedy, ProjectedGreedy

    name = getattr(args, "operator", "projected")
    if name == "exact":
        return ExactGreedy(mdp)
    if name == "projected":
        return ProjectedGreedy(mdp, noise=args.noise)
    factory = OPERATORS.get(name)
    if factory is None:
        known = ", ".join(["exact", "projected", *OPERATORS])
        raise UsageError(f"unknown operator {name!r}; expected one of {known}.")
    return factory(args, mdp)


ROLLOUT_OPERATORS = ("rollout-csc", "rollout-reg")
CRITICS = ("auto", "lstd", "regression", "none")  # as nsrl.experiments.compare.CRITICS


def horizon(text: str):
    """An argparse ``type``: "geometric" or an int >= 1 (the rollout horizon H)."""
    if text.strip().lower() == "geometric":
        return "geometric"
    try:
        return integer(1)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"should be an int >= 1 or 'geometric', got "
                                         f"{text!r}") from None


def critic(text: str) -> str:
    """An argparse ``type``: one of :data:`CRITICS`."""
    if text.strip().lower() not in CRITICS:
        raise argparse.ArgumentTypeError(f"should be one of {', '.join(CRITICS)}, got {text!r}")
    return text.strip().lower()


def add_rollout_arguments(p) -> None:
    """--horizon, --rollout-m, --critic: the rollout operators' settings (default: theirs)."""
    p.add_argument("--horizon", type=horizon, default=None, metavar="H|geometric",
                   help="rollout horizon H when no critic value ends the rollouts (the first "
                   "call, --critic none): an int, or 'geometric' (unbiased, noisy at gamma "
                   "near 1); default: the operator's (30)")
    p.add_argument("--rollout-m", type=integer(1), default=None, metavar="M",
                   help="rollout length m before the critic's bootstrap gamma^m V(s_m) "
                   "(CBMPI); default: the operator's (1)")
    p.add_argument("--critic", type=critic, default="auto",
                   help="what ends the m-step rollouts: lstd (LSTD(0) on the previous call's "
                   "transitions), regression (LinearRegression on its Q estimates), none (plain "
                   "H-step rollouts); default auto (lstd)")


def rollout_options(args, operators) -> dict:
    """The rollout settings given on the command line, checked against ``operators``.

    Raises:
        UsageError: a rollout setting without a rollout operator, or --rollout-m with
            --critic none (without a critic nothing ends the rollouts at m).
    """
    given = [opt for opt, value in (("--horizon", args.horizon), ("--rollout-m", args.rollout_m),
                                    ("--critic", None if args.critic == "auto" else args.critic))
             if value is not None]
    if given and not any(op in ROLLOUT_OPERATORS for op in operators):
        what = "is a setting" if len(given) == 1 else "are settings"
        raise UsageError(f"{', '.join(given)} {what} of the rollout operators "
                         f"({', '.join(ROLLOUT_OPERATORS)}), not of {', '.join(operators)}; "
                         f"drop {'it' if len(given) == 1 else 'them'} or use a rollout "
                         f"operator.")
    if args.rollout_m is not None and args.critic == "none":
        raise UsageError("--rollout-m needs a critic to end the rollouts at m; with --critic "
                         "none they run --horizon H steps: drop --rollout-m or pick a critic.")
    return {"horizon": args.horizon, "m": args.rollout_m, "critic": args.critic}


def _sample_operator(name: str):
    """Factory of a sample-based operator, ``--samples`` transitions per call."""

    def factory(args, mdp):
        from nsrl.experiments.compare import sample_operator

        check_sample_memory(name, mdp, args.samples, None, f"--samples {args.samples}",
                            "lower --samples")
        rollout = rollout_options(args, [name])
        try:
            return sample_operator(name, mdp, args.samples, **rollout)
        except (ValueError, TypeError) as exc:  # name the options the operator refused
            flags = [f"--samples {args.samples}"] + [
                f"{opt} {rollout[key]}" for opt, key in (("--horizon", "horizon"),
                                                         ("--rollout-m", "m"))
                if rollout[key] is not None]
            raise UsageError(f"--operator {name} with {' '.join(flags)}: {exc}") from None

    return factory


# Further operators register here: name -> factory(args, mdp) -> operator.
OPERATORS: dict = {name: _sample_operator(name) for name in ("rollout-csc", "rollout-reg", "lstdq")}


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
    from nsrl.experiments.accuracy import check_losses
    from nsrl.schemes import make_scheme, run

    rollout_options(args, [getattr(args, "operator", "projected")])  # before any work
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
            "operator": getattr(args, "operator", "projected"),
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
    p.add_argument("--scheme", required=True, help="api, api(0.1), cpi, cpi(0.1), cpi+, psdp, "
                   "nspi(5)")
    add_problem_arguments(p)
    p.add_argument("--iterations", type=integer(1), default=100)
    p.add_argument("--noise", type=real(0, NOISE_MAX), default=0.1,
                   help="noise amplitude iota (0.1)")
    p.add_argument("--operator", default="projected",
                   help="greedy operator: exact, projected (default), rollout-csc, rollout-reg, "
                   "lstdq")
    p.add_argument("--samples", type=integer(1), default=10_000,
                   help="transitions per greedy call of a sample-based operator (10000)")
    add_rollout_arguments(p)
    p.add_argument("--seed", type=integer(0), default=0, help="run seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_run)
