"""``nsrl bounds``: print the concentrability constants of Definition 1 for one MDP.

    nsrl bounds (--garnet S,A,B [--mdp-seed N] [--gamma G] | --mdp FILE) [--m M] [--tol T]
                [--json]

mu is uniform and nu is the MDP's start distribution (uniform for a Garnet). In ``--json``
output an infinite constant is the string ``"inf"`` (JSON has no infinity).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from nsrl.cli.common import (
    add_problem_arguments,
    add_quiet_argument,
    integer,
    load_problem,
    parse_garnet,
    real,
    user_input,
)
from nsrl.model.memory import check_memory

_SHOWN = 10  # coefficients c(i) printed in text mode


def _number(x: float):
    return "inf" if np.isinf(x) else float(x)


def _check_size(n_states: int, n_actions: int, option: str) -> None:
    """Refuse (one line, exit 2) a model whose coefficients cannot fit in memory."""
    from nsrl.theory.concentrability import concentrability_nbytes

    with user_input():
        check_memory(concentrability_nbytes(n_states, n_actions), f"nsrl bounds {option} "
                     f"(the coefficients hold O(n_S^2 n_A) numbers)", "use fewer states")


def _progress():
    """A progress line on stderr when it is a terminal (else None: no output).

    The coefficients of a few thousand states take minutes (issue 47: nothing was shown
    for 100 s at 2,000 states); the line says terms done, expected and the time left.
    """
    if not sys.stderr.isatty():
        return None
    began = time.perf_counter()

    def show(done: int, expected: int) -> None:
        if done == 0:
            return
        spent = time.perf_counter() - began
        left = spent / done * max(0, expected - done)
        print(f"\rnsrl bounds: {done:,} of ~{expected:,} terms, {spent:.0f} s, about "
              f"{left:.0f} s left ", end="", file=sys.stderr, flush=True)

    return show


def _cmd_bounds(args) -> int:
    from nsrl.theory.concentrability import concentrability

    if getattr(args, "garnet", None):  # from the sizes alone, before drawing the Garnet
        _check_size(*parse_garnet(args.garnet)[:2], f"--garnet {args.garnet}")
    mdp = load_problem(args)
    if getattr(args, "mdp", None):
        _check_size(mdp.n_states, mdp.n_actions, f"--mdp {args.mdp}")
    show = _progress()
    conc = concentrability(mdp, m=(args.m,), tol=args.tol, progress=show)
    if show is not None:
        print(file=sys.stderr)  # end the progress line
    constants = conc.summary(args.m)
    if args.json:
        print(json.dumps({
            "mdp": repr(mdp),
            "gamma": mdp.gamma,
            "m": args.m,
            "tol": args.tol,
            "n_terms": conc.n_terms,
            "converged": conc.converged,
            "constants": {k: _number(v) for k, v in constants.items()},
            "c": [_number(x) for x in conc.c],
            "c_pi_star": [_number(x) for x in conc.c_pi_star],
            "c_tail": _number(conc.c_tail),
        }))
        return 0
    status = "within" if conc.converged else "NOT within"
    print(f"Concentrability of {mdp!r}: mu uniform, nu = start distribution, m = {args.m}")
    print(f"  {conc.n_terms} terms, every constant {status} {args.tol:g} (an upper bound)")
    for name, value in constants.items():
        print(f"  {name:<12} {value:12.4f}")
    shown = ", ".join(f"{x:.3g}" for x in conc.c[:_SHOWN])
    print(f"  c(0..{min(_SHOWN, conc.n_terms) - 1}): {shown}; c(i) <= {conc.c_tail:.4g} after")
    return 0


def add_parser(subparsers) -> None:
    """Register ``nsrl bounds``."""
    p = subparsers.add_parser("bounds", help="concentrability constants (Definition 1, Figure 2)")
    add_problem_arguments(p)
    p.add_argument("--m", type=integer(1), default=5,
                   help="period m of C(1,m), C(2,m,k) (default 5)")
    p.add_argument("--tol", type=real(0, low_open=True), default=1e-4,
                   help="accuracy of the constants (1e-4)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_quiet_argument(p)
    p.set_defaults(func=_cmd_bounds)
