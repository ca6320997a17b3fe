"""What every ``nsrl`` subcommand shares: usage errors and the problem arguments."""

from __future__ import annotations

import argparse
import contextlib


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
    from nsrl.model.garnet import garnet
    from nsrl.model.mdp import FiniteMDP

    if getattr(args, "mdp", None):
        try:
            with user_input():
                return FiniteMDP.load(args.mdp)
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
    if not getattr(args, "garnet", None):
        raise UsageError("give the problem: --garnet S,A,B or --mdp FILE.npz.")
    s, a, b = parse_garnet(args.garnet)
    features = getattr(args, "features", None)
    with user_input():
        return garnet(s, a, b, features, getattr(args, "gamma", 0.99), seed=args.mdp_seed)


def add_problem_arguments(p: argparse.ArgumentParser) -> None:
    """--garnet S,A,B [--mdp-seed N] [--features P] [--gamma G] | --mdp FILE."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--garnet", metavar="S,A,B", help="a Garnet with S states, A actions, B succ.")
    g.add_argument("--mdp", metavar="FILE.npz", help="an MDP saved with `nsrl garnet`")
    p.add_argument("--mdp-seed", type=int, default=0, help="Garnet instance seed (default 0)")
    p.add_argument("--features", type=int, default=None, help="number of features p (S // 10)")
    p.add_argument("--gamma", type=float, default=0.99, help="discount (default 0.99)")


@contextlib.contextmanager
def user_input():
    """Turn the ValueError/TypeError that a public function raises on bad input into UsageError.

    Only around calls whose arguments come from the command line: an error raised elsewhere
    is a bug and keeps its traceback.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
