"""What a new user meets first: ``nsrl`` bare, ``python -m nsrl``, and every ``--help``.

Every subcommand's help is plain text (no reStructuredText of the docstrings: ````code````,
``:func:`x```, `` `x` ``) and every option it lists says what it does.
"""

from __future__ import annotations

import argparse
import re

import pytest

from nsrl.cli import build_parser, main

# ``code``, :role:`target`, `interpreted text`: markup of docstrings, noise in a terminal.
RST = re.compile(r"``|:[a-z]+(:[a-z]+)?:`|`[^`\s][^`]*`")


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {"": parser, **sub.choices}


COMMANDS = sorted(_subcommands())


def test_a_bare_nsrl_prints_the_usage_and_the_commands(capsys):
    """As argparse does for a missing argument: on stderr, status 2; but the whole list."""
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: nsrl ")
    listed = {line.split()[0] for line in err.partition("commands:\n")[2].splitlines()
              if line.startswith("    ")}
    assert listed == set(COMMANDS) - {""}
    assert "error" not in err


def test_the_rst_pattern_finds_the_markup_of_docstrings():
    for marked in ("see ``nsrl run``", ":func:`nsrl.run`", "a `folder`", ":py:class:`X`"):
        assert RST.search(marked), marked
    for plain in ("api(0.1), cpi(ALPHA)", "--budget 5", "the paper's Phi", "'nsrl COMMAND --help'"):
        assert not RST.search(plain), plain


@pytest.mark.parametrize("command", COMMANDS, ids=[c or "nsrl" for c in COMMANDS])
def test_every_help_is_plain_text_and_every_option_has_its_help(command):
    parser = _subcommands()[command]
    text = parser.format_help()
    assert not RST.search(text), f"nsrl {command} --help: {RST.search(text).group()!r} in\n{text}"
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue  # a hidden old spelling; the commands have their own help
        assert action.help and action.help.strip(), (
            f"nsrl {command}: {'/'.join(action.option_strings) or action.dest} has no help")
