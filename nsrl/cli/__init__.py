"""The ``nsrl`` command line: garnet, run, reproduce, plot, compare, bounds.

Every module of this package that defines ``add_parser(subparsers)`` adds its subcommands
(found by :func:`pkgutil.iter_modules`, no list to keep up to date); each subcommand sets
``func(args)``. Input errors (:class:`UsageError`) print one line on stderr and exit with
status 2; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from nsrl.cli.common import UsageError, _Parser

__all__ = ["UsageError", "build_parser", "main", "subcommand_modules"]


def subcommand_modules() -> list:
    """The modules of this package that register subcommands, core commands first."""
    modules = [importlib.import_module(f"{__name__}.{info.name}")
               for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")]
    found = [m for m in modules if hasattr(m, "add_parser")]
    return sorted(found, key=lambda m: (getattr(m, "ORDER", 1), m.__name__))


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every subcommand."""
    parser = _Parser(prog="nsrl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in subcommand_modules():
        module.add_parser(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``nsrl`` console script."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"nsrl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nsrl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
