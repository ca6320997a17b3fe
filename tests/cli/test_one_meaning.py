"""One meaning per option name across the subcommands and the sweeps' keys.

A flag that several subcommands take stores the same setting in each (the same argparse
``dest``); an old spelling kept for one release is hidden, warns on stderr and as a
DeprecationWarning naming the new flag, and stores under the new flag's setting. A sweep's key
that is also a flag's setting means the same thing, but the one exception listed here.
"""

from __future__ import annotations

import argparse
import dataclasses
import re

import pytest

from nsrl.cli import build_parser
from nsrl.cli.options import _Renamed
from nsrl.experiments.sweep import Sweep
from nsrl.greedy.registry import OPERATORS

# Sweep keys that a subcommand also takes, under another meaning, and why they stay.
SWEEP_EXCEPTIONS = {
    # The sweep's master seed: every MDP's and every run's seed derive from it
    # (nsrl.experiments.seeds). nsrl run --seed is one run's; renaming the sweep's key would
    # change the fingerprint of every committed result.
    "seed",
}


# Flags whose help differs between subcommands, and why that is still one meaning.
WORDED_APART = {
    "--out": "where the command writes: nsrl garnet one file, compare and reproduce a folder",
}
# Sweep keys that are also a flag's setting, with the one meaning they have in both.
SAME = {
    "gamma": "the discount",
    "n_features": "p, the columns of a Garnet's features Phi",
    "operator": "the greedy operator (a name on the command line, a name and options in a sweep)",
    "schemes": "the schemes run (names on the command line, names or specs in a sweep)",
}


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _visible(parser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions if a.help != argparse.SUPPRESS
            for s in a.option_strings}


def _said(action: argparse.Action) -> str:
    """What a flag's help says it is: without the parentheses (defaults, ranges, examples)."""
    text, previous = action.help or "", None
    while text != previous:
        previous, text = text, re.sub(r"\s*\([^()]*\)", "", text)
    return " ".join(text.split())


def test_a_flag_of_several_subcommands_stores_one_setting_and_says_one_thing():
    dests: dict[str, set[str]] = {}
    said: dict[str, set[str]] = {}
    for parser in _commands().values():
        for flag, action in _visible(parser).items():
            dests.setdefault(flag, set()).add(action.dest)
            said.setdefault(flag, set()).add(_said(action))
    assert not {f: d for f, d in dests.items() if len(d) > 1}, "a flag of two settings"
    worded_apart = {f: sorted(s) for f, s in said.items() if len(s) > 1}
    assert set(worded_apart) == set(WORDED_APART), worded_apart


def test_every_hidden_spelling_names_a_flag_of_the_same_command_with_the_same_setting():
    hidden = 0
    for command, parser in _commands().items():
        visible = _visible(parser)
        for action in parser._actions:
            if action.help != argparse.SUPPRESS or not action.option_strings:
                continue
            assert isinstance(action, _Renamed), (
                f"nsrl {command} {action.option_strings}: a hidden flag must be an old "
                f"spelling that warns (nsrl.cli.options._Renamed)")
            assert visible[action.new].dest == action.dest, (command, action.option_strings)
            hidden += 1
    assert hidden >= 5  # --samples, --representation (run, compare), compare --budget, garnet's


@pytest.mark.parametrize(("argv", "new", "setting", "value"), [
    (["compare", "--out", "c", "--budget", "5000"], "--run-budget", "run_budget", 5000),
    (["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--out", "g",
      "--features", "3"], "--n-features", "n_features", 3),
    (["garnet", "--states", "5", "--actions", "2", "--branching", "1", "--out", "g",
      "--seed", "7"], "--mdp-seed", "mdp_seed", 7),
])
def test_an_old_spelling_warns_and_means_the_new_flag(argv, new, setting, value, capsys):
    with pytest.warns(DeprecationWarning, match=f"use {new}"):
        args = build_parser().parse_args(argv)
    assert getattr(args, setting) == value
    err = capsys.readouterr().err
    assert err.startswith("nsrl: warning: ") and f"use {new}" in err
    fresh = build_parser().parse_args(argv[:-2] + [new, argv[-1]])
    assert vars(fresh) == vars(args)


def test_the_budgets_of_run_and_compare_are_two_names():
    """nsrl run --budget: transitions per greedy call; nsrl compare --run-budget: per run."""
    commands = _commands()
    run, compare = _visible(commands["run"]), _visible(commands["compare"])
    assert run["--budget"].dest == "budget" and "per greedy call" in run["--budget"].help
    assert "--budget" not in compare and "per run" in compare["--run-budget"].help


def test_a_sweep_key_that_is_a_flag_means_what_the_flag_means():
    """The sweep's settings and its operator's options against the flags' settings."""
    settings = {f.name for f in dataclasses.fields(Sweep)}
    options = {name for entry in OPERATORS.values() for name in entry.params}
    commands = _commands()
    flags = {a.dest for parser in commands.values() for a in _visible(parser).values()}
    # A new key shared by a sweep and a flag fails here until its meaning is checked on both
    # sides and it is added to SAME (or, with the reason, to SWEEP_EXCEPTIONS).
    assert (settings & flags) - SWEEP_EXCEPTIONS == set(SAME)
    run, default = commands["run"], Sweep()
    for key in ("gamma", "n_features"):  # the same default on both sides
        assert run.get_default(key) == getattr(default, key), key
    assert options <= flags | {"m"}  # the rollouts' m is --rollout-m (nspi(M) has its own m)
    assert SWEEP_EXCEPTIONS <= settings & flags  # an exception that no longer applies: drop it
