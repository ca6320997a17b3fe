"""What every ``nsrl`` subcommand shares: usage errors, typed options, problem arguments.

Numeric options are parsed by :func:`integer` and :func:`real`, which refuse out-of-range
values while parsing, so the error names the option (``argument --seed: should be an int
>= 0, got '-1'``) and nothing has been computed or written yet.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
from decimal import Decimal, InvalidOperation
from pathlib import Path

# As nsrl.exact.operators.GAMMA_MAX, the largest discount the exact backend certifies (not
# imported: the CLI starts without the numerical code; a test checks that they agree).
GAMMA_MAX = 1 - 1e-5


GAMMA_HELP = (f"discount (default 0.99; at most {GAMMA_MAX:g} = 1 - 1e-5, the largest whose "
              f"exact values are certified)")
MDP_SEED_HELP = "the Garnet's seed (default 0): the same seed draws the same MDP on any machine"
N_FEATURES_HELP = "p, the columns of the Garnet's features Phi (default n_S // 10, 1 to 1000)"


class UsageError(ValueError):
    """Bad command-line input: reported on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with one-line errors and an epilog computed only when shown."""

    lazy_epilog = None  # a function returning the epilog (read when --help is asked)

    def error(self, message):  # one clear line, exit 2 (argparse prints usage otherwise)
        raise UsageError(message)

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()


def _bounds(low, high, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f" in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f" {'>' if low_open else '>='} {low:g}"
    return f" {'<' if high_open else '<='} {high:g}" if high is not None else ""


def integer(low: int | None = None, high: int | None = None):
    """An argparse ``type``: an int in [low, high]; exact scientific notation is taken (1e6)."""
    what = "an int" + _bounds(low, high, False, False)

    def parse(text: str) -> int:
        try:
            d = Decimal(text.strip())
            ok = d.is_finite() and d == d.to_integral_value()
        except InvalidOperation:
            ok = False
        if not ok or (low is not None and d < low) or (high is not None and d > high):
            raise argparse.ArgumentTypeError(f"should be {what}, got {text!r}")
        return int(d)

    parse.__name__ = "int"
    return parse


def real(low: float | None = None, high: float | None = None, *, low_open: bool = False,
         high_open: bool = False):
    """An argparse ``type``: a finite float between low and high (open ends if asked)."""
    what = "a finite number" + _bounds(low, high, low_open, high_open)

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        ok = math.isfinite(x) and (low is None or (x > low if low_open else x >= low)) and (
            high is None or (x < high if high_open else x <= high))
        if not ok:
            raise argparse.ArgumentTypeError(f"should be {what}, got {text!r}")
        return x

    parse.__name__ = "float"
    return parse


def npz_target(text: str, option: str = "--out") -> Path:
    """The file ``numpy.savez`` writes for ``text`` (``.npz`` appended if missing), checked.

    Raises:
        UsageError: the path names a folder, or cannot be created or written.
    """
    from nsrl.experiments.storage import check_folder, check_target

    path = Path(text if text.endswith(".npz") else text + ".npz")
    with user_input():
        check_folder(path.parent, f"{option} {text}")
        check_target(path, f"{option} {text}")
    if text.endswith(("/", os.sep)) or Path(text).is_dir() or path.is_dir():
        folder = text.rstrip("/" + os.sep) or text
        raise UsageError(f"{option} {text} is a folder; give a file name, e.g. "
                         f"{option} {Path(folder) / 'garnet.npz'}.")
    return path


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
    """The FiniteMDP named by --garnet/--mdp-seed/--n-features/--gamma or --mdp."""
    from nsrl.experiments.accuracy import check_problem
    from nsrl.model.garnet import garnet
    from nsrl.model.mdp import FiniteMDP

    if getattr(args, "mdp", None):
        try:
            with user_input():
                mdp = FiniteMDP.load(args.mdp)
                check_problem(mdp.gamma, mdp.r_max, f"--mdp {args.mdp}")
                return mdp
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
    if not getattr(args, "garnet", None):
        raise UsageError("give the problem: --garnet S,A,B or --mdp FILE.npz.")
    s, a, b = parse_garnet(args.garnet)
    n_features = getattr(args, "n_features", None)
    if isinstance(getattr(args, "features", None), int):  # --features P: the old spelling
        deprecated_flag("--features P (a number of features)", "--n-features P")
        n_features = int(args.features)
    check_features(n_features, s)
    with user_input():
        return garnet(s, a, b, n_features, getattr(args, "gamma", 0.99), seed=args.mdp_seed)


def deprecated_flag(old: str, new: str) -> None:
    """Say on stderr (and as a DeprecationWarning) that ``old`` is spelled ``new`` now."""
    import sys
    import warnings

    line = f"{old} is deprecated and will be removed in the next release; use {new}"
    print(f"nsrl: warning: {line}", file=sys.stderr)
    warnings.warn(line + ".", DeprecationWarning, stacklevel=2)


def check_features(features: int | None, n_states: int, option: str = "--n-features") -> None:
    """Refuse more features than states: Phi has rank <= n_S, the rest is only memory."""
    if features is not None and features > n_states:
        raise UsageError(f"{option} {features} is more than the {n_states} states (Phi has rank "
                         f"<= n_S: more features add nothing but memory and time); use "
                         f"{option} {n_states} or fewer.")


def add_problem_arguments(p: argparse.ArgumentParser) -> None:
    """--garnet S,A,B [--mdp-seed N] [--n-features P] [--gamma G] | --mdp FILE."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--garnet", metavar="S,A,B",
                   help="a Garnet with S states, A actions and B successors per pair")
    g.add_argument("--mdp", metavar="FILE.npz", help="an MDP saved by nsrl garnet")
    p.add_argument("--mdp-seed", type=integer(0), default=0, help=MDP_SEED_HELP)
    p.add_argument("--n-features", type=integer(1), default=None, help=N_FEATURES_HELP)
    p.add_argument("--gamma", type=real(0, GAMMA_MAX, low_open=True), default=0.99,
                   help=GAMMA_HELP)


def add_quiet_argument(p: argparse.ArgumentParser) -> None:
    """``--quiet``/``-q``: no progress and no notes on stderr (see :func:`note`)."""
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print no progress bar and no notes on stderr (warnings and errors "
                   "still); what the command prints on stdout is unchanged")


def note(args: argparse.Namespace, line: str) -> None:
    """A note for the user on stderr (what was written, how far a run is), unless ``--quiet``.

    Warnings and errors are not notes: they are printed whatever ``--quiet`` says.
    """
    if not getattr(args, "quiet", False):
        import sys

        print(line, file=sys.stderr)


def show_progress(args: argparse.Namespace) -> bool:
    """Whether a progress bar is drawn: stderr is a terminal and ``--quiet`` was not given."""
    import sys

    return not getattr(args, "quiet", False) and sys.stderr.isatty()


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
