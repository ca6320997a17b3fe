"""The ``nsrl`` command line: garnet, run, reproduce, plot, compare, bounds.

Every module of this package that defines ``add_parser(subparsers)`` adds its subcommands
(found by :func:`pkgutil.iter_modules`, no list to keep up to date); each subcommand sets
``func(args)``. Input errors (:class:`UsageError`) and errors of the environment (a full
disk, a read-only or locked output folder: :func:`nsrl.experiments.safe_io.describe`) and
a value the exact backend cannot certify (:class:`nsrl.exact.iterative.NotCertifiedError`) print
one line on stderr and exit with status 2; a bare ``nsrl`` prints the usage and the commands
on stderr, also with status 2 (argparse's status for a missing argument). A closed output
pipe (``nsrl ... | head``) ends quietly with status 141 (128 + SIGPIPE, as a shell reports
for a command cut off by its reader); any other exception is a bug and keeps its traceback.

``--plugin MODULE`` (repeatable, anywhere on the line) imports a module that registers
operators, schemes, domains or experiments (:mod:`nsrl.plugins`) before the parser is built,
so every choice and ``--help`` lists its names; installed plugins (entry-point group
``nsrl.plugins``) are loaded too.
"""

from __future__ import annotations

import argparse
import importlib
import os
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


def _plugin_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE first: it registers operators, schemes, domains "
                        "or experiments (repeatable)")


class _CommandsFormatter(argparse.HelpFormatter):
    """argparse's help, without the lone ``COMMAND`` line above the list of the commands."""

    def _format_action(self, action: argparse.Action) -> str:
        text = super()._format_action(action)
        if isinstance(action, argparse._SubParsersAction):
            text = text.partition("\n")[2]
        return text


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every subcommand (choices read from the live registries)."""
    from nsrl import __version__

    parser = _Parser(prog="nsrl", formatter_class=_CommandsFormatter,
                     description="Approximate policy iteration schemes of Scherrer (ICML 2014): "
                     "run them, reproduce the paper's experiments, compare operators.",
                     epilog="'nsrl COMMAND --help' describes each command.")
    parser.add_argument("--version", action="version", version=f"nsrl {__version__}")
    _plugin_option(parser)
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND",
                                parser_class=_Parser)
    for module in subcommand_modules():
        module.add_parser(sub)
    for command in sub.choices.values():
        _plugin_option(command)
    return parser


def plugins_named(argv: list[str]) -> list[str]:
    """The modules named by ``--plugin MODULE`` or ``--plugin=MODULE`` anywhere in ``argv``.

    Examples:
        >>> plugins_named(["--plugin", "a", "run", "--plugin=b.c", "--scheme", "api"])
        ['a', 'b.c']
    """
    named = []
    for i, word in enumerate(argv):
        if word == "--plugin":
            if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                raise UsageError("argument --plugin: expected one module name, e.g. "
                                 "--plugin my_package.nsrl_plugin")
            named.append(argv[i + 1])
        elif word.startswith("--plugin="):
            named.append(word.partition("=")[2])
    return named


def main(argv=None) -> int:
    """Entry point of the ``nsrl`` console script."""
    from nsrl.exact.iterative import NotCertifiedError
    from nsrl.plugins import PluginError, load_plugins

    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        try:
            load_plugins(plugins_named(argv))
        except PluginError as exc:
            raise UsageError(str(exc)) from None
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:  # a bare `nsrl`: the usage and the commands, as a usage error
            _say(parser.format_help().rstrip("\n"))
            return 2
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except UsageError as exc:
        _say(f"nsrl: error: {exc}")
        return 2
    except NotCertifiedError as exc:  # a model the exact methods cannot certify: says why
        _say(f"nsrl: error: {exc}")
        return 2
    except KeyboardInterrupt:
        _say("nsrl: interrupted")
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except OSError as exc:  # a full disk, a read-only folder, a locked one: not a bug
        from nsrl.experiments.safe_io import describe

        line = describe(exc)
        if line is None:
            raise
        _say(f"nsrl: error: {line}")
        return 2


def _say(line: str) -> None:
    """One line on stderr, even if stderr is itself a closed pipe."""
    try:
        print(line, file=sys.stderr)
    except BrokenPipeError:
        pass


def _silence_stdout() -> None:
    """Point stdout at /dev/null: Python's exit would flush into the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured)
        pass


if __name__ == "__main__":
    sys.exit(main())
