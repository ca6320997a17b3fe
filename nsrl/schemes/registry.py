"""The registry of scheme names: the one list that make_scheme, presets and the CLI accept.

A name is a base (``api``, ``cpi+``, ...) optionally followed by one argument in parentheses
(``api(0.1)``, ``nspi(5)``). Each registered base maps to a scheme class and says whether it
takes an argument (alpha or m). :func:`register_scheme` adds one, e.g. a variant of API, so
that sweeps and the command line can name it; the batched engines run only the classes they
registered for, and the sweep runner falls back to the reference ``nsrl.run`` for the rest.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass

from nsrl.params import Param, check_params
from nsrl.plugins import ensure_installed, look_up
from nsrl.schemes.api import API, APIAlpha
from nsrl.schemes.base import Scheme
from nsrl.schemes.cpi import CPI, CPIAlpha, CPIPlus
from nsrl.schemes.nspi import NSPI
from nsrl.schemes.psdp import PSDP


@dataclass(frozen=True)
class SchemeEntry:
    """One registered scheme name.

    Attributes:
        base: the lower-case name before the parentheses, e.g. ``"api"``.
        cls: the scheme class.
        argument: None (no argument), ``"alpha"`` (a float in (0, 1]) or ``"m"`` (an int >= 1).
        example: a valid full name, e.g. ``"api(0.1)"`` (docs, error messages, tests).
    """

    base: str
    cls: type
    argument: str | None = None
    example: str = ""

    @property
    def pattern(self) -> str:
        """How the name is written, e.g. ``api(ALPHA)``."""
        return self.base if self.argument is None else f"{self.base}({self.argument.upper()})"


SCHEMES: dict[tuple[str, bool], SchemeEntry] = {}
_NAME = re.compile(r"^\s*([a-z][a-z0-9_+-]*)\s*(?:\(\s*([^()]*?)\s*\))?\s*$")


def register_scheme(base: str, cls: type, argument: str | None = None,
                    example: str | None = None) -> SchemeEntry:
    """Register ``cls`` under ``base`` (with an ``alpha`` or ``m`` argument, or none).

    ``register_scheme("apiocc", APIOcc)`` makes ``make_scheme("apiocc")`` (and a sweep's
    ``schemes = ["apiocc"]``) build an ``APIOcc()``.
    """
    if argument not in (None, "alpha", "m"):
        raise ValueError(f"argument should be None, 'alpha' or 'm', got {argument!r}.")
    if not _NAME.match(base) or "(" in base:
        raise ValueError(f"a scheme name should be lower-case letters, digits, +, - or _, got "
                         f"{base!r}.")
    example = example or (base if argument is None else
                          f"{base}({'0.1' if argument == 'alpha' else 5})")
    entry = SchemeEntry(base, cls, argument, example)
    SCHEMES[(base, argument is not None)] = entry
    return entry


def scheme_names() -> tuple[str, ...]:
    """Every registered name pattern, e.g. ``('api', 'api(ALPHA)', ...)`` (plugins too)."""
    ensure_installed()
    return tuple(e.pattern for e in SCHEMES.values())


def _known() -> str:
    return (f"expected one of {', '.join(scheme_names())} (alpha in (0, 1], m a positive int),"
            f" e.g. 'api(0.1)' or 'nspi(5)'")


def entry_of(name: str) -> SchemeEntry:
    """The registry entry a scheme name refers to (ValueError if none)."""
    match = _NAME.match(str(name).lower())
    key = (match.group(1), match.group(2) is not None) if match else None
    entry = look_up(SCHEMES, key) if key else None
    if entry is None:
        raise ValueError(f"unknown scheme {name!r}; {_known()}.")
    return entry


def added_entries(names: Iterable[str]) -> list[SchemeEntry]:
    """The entries of ``names`` registered by the user (beyond the built-in seven)."""
    return [e for e in map(entry_of, names) if (e.base, e.argument is not None) not in BUILTIN]


def options_of(cls: type) -> dict:
    """The options ``cls`` declares (its ``params``; a class without, its signature's names)."""
    params = getattr(cls, "params", None)
    if params is None:  # a user's class that declares nothing: names only, values unchecked
        params = {n: Param(object) for n in inspect.signature(cls).parameters}
    return params


def scheme_options(name: str, options: dict) -> dict:
    """The part of ``options`` that the scheme ``name`` takes (a sweep's options for all).

    Examples:
        >>> scheme_options("cpi+", {"line_search": "doubling", "epsilon": None, "m": 3})
        {'line_search': 'doubling', 'epsilon': None}
    """
    taken = options_of(entry_of(name).cls)
    return {k: v for k, v in options.items() if k in taken}


def make_scheme(name: str, **options: object) -> Scheme:
    """A scheme from its name: api, api(0.1), cpi, cpi(0.1), cpi+, psdp, nspi(5).

    Args:
        name: a registered name (:func:`scheme_names`).
        **options: keyword options the scheme's class declares (its ``params``, e.g.
            ``advantage``, ``epsilon`` and ``line_search`` for CPI+); any other is refused
            (:func:`scheme_options` keeps those a scheme takes from a sweep's options).

    Raises:
        ValueError: an unknown or malformed name, an unknown option or a bad value.

    Examples:
        >>> make_scheme("nspi(10)").name
        'NSPI(10)'
        >>> make_scheme("cpi+", line_search="doubling").line_search
        'doubling'
    """
    match = _NAME.match(str(name).lower())
    if not match:
        raise ValueError(f"unknown scheme {name!r}; {_known()}.")
    base, arg = match.groups()
    entry = SCHEMES.get((base, arg is not None))
    if entry is None:
        kind = "unknown" if not any(b == base for b, _ in SCHEMES) else "malformed"
        raise ValueError(f"{kind} scheme {name!r}; {_known()}.")
    params = options_of(entry.cls)
    if entry.argument is not None:
        if entry.argument in options:
            raise ValueError(f"scheme {name!r} gives {entry.argument} in its name; drop "
                             f"{entry.argument}={options[entry.argument]!r}.")
        try:
            value = int(arg) if entry.argument == "m" and arg.isdigit() else float(arg)
            params[entry.argument].check(value, entry.argument, entry.argument)
        except (ValueError, TypeError, KeyError):
            raise ValueError(f"malformed scheme {name!r}; {_known()}.") from None
        options = {entry.argument: value, **options}
    check_params(params, options, f"scheme {name!r}")
    return entry.cls(**options)


for _args in (("api", API), ("api", APIAlpha, "alpha"), ("cpi", CPI), ("cpi", CPIAlpha, "alpha"),
              ("cpi+", CPIPlus), ("psdp", PSDP), ("nspi", NSPI, "m")):
    register_scheme(*_args)
BUILTIN = frozenset(SCHEMES)
