"""The ``nsrl`` command line.

Core commands (a stable contract):

    nsrl garnet --states S --actions A --branching B [--features P] [--gamma G] --seed N --out F
    nsrl run --scheme NAME (--garnet S,A,B [--mdp-seed N] | --mdp F) [--iterations K]
             [--noise IOTA] [--seed N] [--json]

Other features add their subcommands through :data:`EXTENSIONS`: each listed module has
``add_parser(subparsers)`` that registers a subcommand whose ``func(args)`` runs it.
Errors in the input print one line on stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

import numpy as np

EXTENSIONS: list[str] = ["nsrl.experiments.cli", "nsrl.bounds_cli", "nsrl.compare"]


class UsageError(ValueError):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2 (argparse prints usage otherwise)
        raise UsageError(message)


def parse_garnet(text: str) -> tuple[int, int, int]:
    """'S,A,B' -> (S, A, B)."""
    parts = str(text).split(",")
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) < 1:
        raise UsageError(
            f"--garnet expects three positive integers S,A,B (states, actions, branching), "
            f"got {text!r}; e.g. --garnet 100,5,2."
        )
    return values


def load_problem(args):
    """The FiniteMDP named by --garnet/--mdp-seed/--features/--gamma or --mdp."""
    from nsrl.garnet import garnet
    from nsrl.mdp import FiniteMDP

    if getattr(args, "mdp", None):
        try:
            return FiniteMDP.load(args.mdp)
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
    if not getattr(args, "garnet", None):
        raise UsageError("give the problem: --garnet S,A,B or --mdp FILE.npz.")
    s, a, b = parse_garnet(args.garnet)
    features = getattr(args, "features", None)
    return garnet(s, a, b, features, getattr(args, "gamma", 0.99), seed=args.mdp_seed)


def add_problem_arguments(p: argparse.ArgumentParser) -> None:
    """--garnet S,A,B [--mdp-seed N] [--features P] [--gamma G] | --mdp FILE."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--garnet", metavar="S,A,B", help="a Garnet with S states, A actions, B succ.")
    g.add_argument("--mdp", metavar="FILE.npz", help="an MDP saved with `nsrl garnet`")
    p.add_argument("--mdp-seed", type=int, default=0, help="Garnet instance seed (default 0)")
    p.add_argument("--features", type=int, default=None, help="number of features p (S // 10)")
    p.add_argument("--gamma", type=float, default=0.99, help="discount (default 0.99)")


def _cmd_garnet(args) -> int:
    from nsrl.garnet import garnet

    mdp = garnet(args.states, args.actions, args.branching, args.features, args.gamma,
                 seed=args.seed)
    mdp.save(args.out)
    print(f"wrote {mdp!r} to {args.out}", file=sys.stderr)
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


def _sample_operator(name: str):
    """Factory of a sample-based operator (nsrl.compare), ``--samples`` transitions per call."""

    def factory(args, mdp):
        from nsrl.compare import sample_operator

        if args.samples < 1:
            raise UsageError(f"--samples should be >= 1, got {args.samples}.")
        return sample_operator(name, mdp, args.samples)

    return factory


# Further operators register here: name -> factory(args, mdp) -> operator.
OPERATORS: dict = {name: _sample_operator(name) for name in ("rollout-csc", "rollout-reg", "lstdq")}


def _cmd_run(args) -> int:
    from nsrl.schemes import make_scheme, run

    if args.iterations < 1:
        raise UsageError(f"--iterations should be >= 1, got {args.iterations}.")
    if args.noise < 0:
        raise UsageError(f"--noise should be >= 0, got {args.noise}.")
    scheme = make_scheme(args.scheme)
    mdp = load_problem(args)
    operator = make_operator(args, mdp)
    hist = run(scheme, operator, args.iterations, rng=np.random.default_rng(args.seed), mdp=mdp,
               progress=not args.json and sys.stderr.isatty())
    if args.json:
        out = {
            "scheme": scheme.name,
            "operator": getattr(args, "operator", "projected"),
            "losses": [float(x) for x in hist.losses],
            "memory": [int(x) for x in hist.memory],
            "steps": [None if np.isnan(x) else float(x) for x in hist.steps],
            "samples": [int(x) for x in hist.samples],
        }
        print(json.dumps(out))
    else:
        print(f"{scheme.name} on {mdp!r}")
        for k in sorted({0, len(hist.losses) // 4, len(hist.losses) // 2, len(hist.losses) - 1}):
            print(f"  iteration {k + 1:4d}  loss {hist.losses[k]:10.5f}  memory {hist.memory[k]}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every subcommand."""
    parser = _Parser(prog="nsrl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("garnet", help="draw a Garnet MDP and save it as .npz")
    p.add_argument("--states", type=int, required=True)
    p.add_argument("--actions", type=int, required=True)
    p.add_argument("--branching", type=int, required=True)
    p.add_argument("--features", type=int, default=None)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_cmd_garnet)

    p = sub.add_parser("run", help="run one scheme and print its losses")
    p.add_argument("--scheme", required=True, help="api, api(0.1), cpi, cpi(0.1), cpi+, psdp, "
                   "nspi(5)")
    add_problem_arguments(p)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--noise", type=float, default=0.1, help="noise amplitude iota (0.1)")
    p.add_argument("--operator", default="projected",
                   help="greedy operator: exact, projected (default), rollout-csc, rollout-reg, "
                   "lstdq")
    p.add_argument("--samples", type=int, default=10_000,
                   help="transitions per greedy call of a sample-based operator (10000)")
    p.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_run)

    for module in EXTENSIONS:
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``nsrl`` console script."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except (UsageError, ValueError, TypeError, FileNotFoundError) as exc:
        print(f"nsrl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nsrl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
