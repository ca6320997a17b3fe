"""``nsrl garnet`` and ``nsrl run``: the core commands (a stable contract).

nsrl garnet --states S --actions A --branching B [--features P] [--gamma G] --seed N --out F
nsrl run --scheme NAME (--garnet S,A,B [--mdp-seed N] | --mdp F) [--iterations K]
[--noise IOTA] [--operator NAME] [--samples N] [--seed N] [--json]
"""

from __future__ import annotations

import json
import sys

import numpy as np

from nsrl.cli.common import (
    UsageError,
    add_problem_arguments,
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
    from nsrl.model.garnet import garnet

    path = npz_target(args.out)  # what numpy writes: --out noext writes noext.npz
    with user_input():
        mdp = garnet(args.states, args.actions, args.branching, args.features, args.gamma,
                     seed=args.seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    mdp.save(path)
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


def _sample_operator(name: str):
    """Factory of a sample-based operator, ``--samples`` transitions per call."""

    def factory(args, mdp):
        from nsrl.experiments.compare import sample_operator

        check_sample_memory(name, mdp, args.samples, None, f"--samples {args.samples}",
                            "lower --samples")
        return sample_operator(name, mdp, args.samples)

    return factory


# Further operators register here: name -> factory(args, mdp) -> operator.
OPERATORS: dict = {name: _sample_operator(name) for name in ("rollout-csc", "rollout-reg", "lstdq")}


def _cmd_run(args) -> int:
    from nsrl.schemes import make_scheme, run

    with user_input():
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


def add_parser(sub) -> None:
    """Register ``nsrl garnet`` and ``nsrl run``."""
    p = sub.add_parser("garnet", help="draw a Garnet MDP and save it as .npz")
    p.add_argument("--states", type=integer(1), required=True)
    p.add_argument("--actions", type=integer(1), required=True)
    p.add_argument("--branching", type=integer(1), required=True)
    p.add_argument("--features", type=integer(1), default=None)
    p.add_argument("--gamma", type=real(0, 1, low_open=True, high_open=True), default=0.99)
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
    p.add_argument("--seed", type=integer(0), default=0, help="run seed (default 0)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_run)
