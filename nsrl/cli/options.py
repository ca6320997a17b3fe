"""The operators' options on the command line: one flag per declared option, same name.

Every option that a registered operator declares (:mod:`nsrl.greedy.registry`) is a flag of
the same name with dashes (``value_estimate`` is ``--value-estimate``), typed and checked by
its declaration; the old spellings of :data:`RENAMED_FLAGS` work for one more release.
"""

from __future__ import annotations

import argparse

from nsrl.cli.common import UsageError, deprecated_flag, integer, real, user_input


def check_sample_memory(operator: str, mdp, transitions: int, what: str, fix: str) -> None:
    """Refuse a sample-based operator whose ``transitions`` per greedy call cannot fit.

    The bytes come from the operator's registry entry (``OperatorEntry.nbytes``, measured).

    Raises:
        ValueError: the estimate exceeds the available memory (message: ``what``, ``fix``).
    """
    from nsrl.greedy.registry import operator_entry
    from nsrl.model.memory import check_memory

    nbytes = operator_entry(operator).nbytes
    if nbytes is None:  # the operator declared no memory model
        return
    need = nbytes(mdp.n_states, mdp.n_actions, transitions)
    check_memory(need, f"{what} with {operator}", fix)


# The operators' options are flags of the same name with dashes (``value_estimate`` is
# ``--value-estimate``), built from the registry's declarations (nsrl.greedy.registry), except
# the rollouts' ``m``, which is ``--rollout-m`` beside the schemes' own m (``nspi(5)``).
FLAG_OF = {"m": "--rollout-m"}
# Flags renamed for one release (old -> new): the old one still works and warns.
RENAMED_FLAGS = {"--samples": "--budget", "--representation": "--features"}
# What each option does, for --help (its type, range and default come from its declaration).
OPTION_HELP = {
    "noise": "noise amplitude iota of the projected operator",
    "noise_model": "how the projected operator's noise enters v",
    "constant_feature": "append a constant feature to Phi (projected operator)",
    "value_estimate": "how the projected operator scores CPI+'s line search",
    "feature_law": "the law of Phi's entries (projected operator)",
    "budget": "transitions per greedy call of a sample-based operator",
    "features": "state features of the sample-based operators, phi or onehot (Phi if the "
                "model has it)",
    "ridge": "LSTD-Q's ridge, in transitions",
    "horizon": "rollout horizon H when no critic value ends the rollouts (the first call, "
               "--critic none): an int, or 'geometric' (unbiased, noisy at gamma near 1)",
    "m": "rollout length m before the critic's bootstrap gamma^m V(s_m) (CBMPI)",
    "critic": "what ends the m-step rollouts: lstd (LSTD(0) on the previous call's "
              "transitions), regression (LinearRegression on its Q estimates), none (plain "
              "H-step rollouts), auto (lstd)",
}


def flag_of(option: str) -> str:
    """The command-line flag of an operator option (its name with dashes)."""
    return FLAG_OF.get(option, "--" + option.replace("_", "-"))


class _Renamed(argparse.Action):
    """An old flag: stores its value under the new one's, and warns."""

    def __init__(self, *args, new: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        deprecated_flag(option_string, self.new)
        setattr(namespace, self.dest, values)


class LegacyCount(int):
    """``--features P`` with a number: the old spelling of ``--n-features P``."""


def param_type(declared, legacy_count: bool = False):
    """An argparse ``type`` from a declared option (:class:`nsrl.params.Param`).

    The text is read as the option's type (an int in exact scientific notation, a finite
    float, true/false, a lower-case string) and checked by the declaration, so that the
    error names the flag and what it takes (``argument --noise: should be a finite float
    in [0, 1e+06]``). ``legacy_count``: a positive int is a :class:`LegacyCount`.
    """
    from nsrl.params import InvalidParameterError, describe

    kind = declared.kind

    def parse(text: str) -> object:
        word = text.strip().lower()
        if legacy_count and word.isdigit() and int(word) >= 1:
            return LegacyCount(int(word))
        value: object = word
        if bool in kind.bases and value in ("true", "false"):
            value = value == "true"
        for base in (int, float):
            if base in kind.bases and not isinstance(value, bool):
                try:
                    value = (integer() if base is int else real())(text)
                    break
                except argparse.ArgumentTypeError:
                    continue
        try:
            return declared.check(value, "", "")
        except InvalidParameterError:
            raise argparse.ArgumentTypeError(f"should be {describe(kind, declared.rule)}, got "
                                             f"{text!r}") from None

    parse.__name__ = "option"
    return parse


def declared_options(exclude=()) -> dict:
    """Every option of the registered operators, name -> its declaration (the first one's)."""
    from nsrl.greedy.registry import OPERATORS

    options: dict = {}
    for entry in OPERATORS.values():
        for name, declared in entry.params.items():
            if name not in exclude:
                options.setdefault(name, declared)
    return options


def add_operator_arguments(p: argparse.ArgumentParser, exclude=()) -> None:
    """Add a flag for every option of the registered operators (but ``exclude``).

    Each is typed by its declaration; a flag left out is None (the operator's default
    applies). The old flags of :data:`RENAMED_FLAGS` are added too, hidden; ``--features``
    still takes the old ``--features P`` (a number: ``--n-features P``).
    """
    flags = {}
    for name, declared in declared_options(exclude).items():
        if flag_of(name) in p._option_string_actions:  # e.g. a plugin's "gamma": not a flag
            continue
        flag = flags[name] = flag_of(name)
        default = (f" (default {declared.default})" if declared.default is not None else
                   " (default: the operator's)")
        help_text = OPTION_HELP.get(name, f"the {name} option of the operators that take it")
        p.add_argument(flag, dest=name, type=param_type(declared, name == "features"),
                       default=None, metavar=flag[2:].upper().replace("-", "_"),
                       help=help_text + default)
    for old, new in RENAMED_FLAGS.items():
        name = next((k for k, f in flags.items() if f == new), None)
        if name is not None:
            p.add_argument(old, dest=name, type=param_type(declared_options()[name]),
                           default=None, action=_Renamed, new=new, help=argparse.SUPPRESS)
    p.set_defaults(operator_flags=flags)


def operator_options(args, operators) -> dict:
    """The operators' options given on the command line, checked against ``operators``.

    Raises:
        UsageError: a flag that none of ``operators`` takes, or options that do not go
            together (named by their flags).
    """
    from nsrl.greedy.registry import operator_entry, takers, unused_options

    with user_input():  # an unknown operator name
        for name in operators:
            operator_entry(name)
    flags = getattr(args, "operator_flags", {})
    options = {name: getattr(args, name, None) for name in flags}
    options = {k: v for k, v in options.items()
               if v is not None and not isinstance(v, LegacyCount)}
    given = {flags[k]: v for k, v in options.items()}
    unused = set(unused_options(operators, options))
    if unused:
        named = [flags[k] for k in options if k in unused]
        who = sorted({t for k in unused for t in takers(k)})
        one = len(named) == 1
        raise UsageError(f"{', '.join(named)} {'is an option' if one else 'are options'} of "
                         f"{', '.join(who)}, not of {', '.join(operators)}; drop "
                         f"{'it' if one else 'them'} or choose such an operator.")
    for name in operators:
        mine = {k: v for k, v in options.items() if k in operator_entry(name).params}
        try:
            operator_entry(name).check(mine)
        except ValueError as exc:
            raise UsageError(f"--operator {name} with {flagged(given, mine, flags)}: "
                             f"{exc}") from None
    return options


def flagged(given: dict, options: dict, flags: dict) -> str:
    """``options`` as the flags that gave them, e.g. ``'--budget 5 --critic none'``."""
    return " ".join(f"{f} {v}" for f, v in given.items() if f in {flags[k] for k in options})
