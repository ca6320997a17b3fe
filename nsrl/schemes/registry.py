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
from nsrl.plugins import BUILT_IN, origin
from nsrl.registry import PLUGIN_HINT, Entry, Registry
from nsrl.schemes.api import API, APIAlpha
from nsrl.schemes.base import Scheme
from nsrl.schemes.cpi import CPI, CPIAlpha, CPIPlus
from nsrl.schemes.nspi import NSPI
from nsrl.schemes.psdp import PSDP

_NAME = re.compile(r"^\s*([a-z][a-z0-9_+-]*)\s*(?:\(\s*([^()]*?)\s*\))?\s*$")


def _key(name: str) -> str:
    """The key of a name as written: its base, with ``()`` if it gives an argument."""
    match = _NAME.match(str(name).lower())
    if not match:
        return f"\0{name}"  # never a key
    return match.group(1) + ("()" if match.group(2) is not None else "")


@dataclass(frozen=True)
class SchemeEntry(Entry):
    """One registered scheme name (:class:`nsrl.registry.Entry`; ``name`` is its pattern).

    Attributes:
        name: how the name is written, e.g. ``"api(ALPHA)"``.
        factory: the scheme class.
        base: the lower-case name before the parentheses, e.g. ``"api"``.
        argument: None (no argument), ``"alpha"`` (a float in (0, 1]) or ``"m"`` (an int >= 1).
        example: a valid full name, e.g. ``"api(0.1)"`` (docs, error messages, tests).
    """

    base: str = ""
    argument: str | None = None
    example: str = ""

    kind = "schemes"

    @property
    def key(self) -> str:
        """``base``, or ``base()`` for a name that takes an argument."""
        return self.base + ("()" if self.argument is not None else "")

    @property
    def cls(self) -> type:
        """The scheme class."""
        return self.resolve()

    @property
    def pattern(self) -> str:
        """How the name is written, e.g. ``api(ALPHA)``."""
        return self.name


SCHEMES: Registry[SchemeEntry] = Registry("schemes", "nsrl.register_scheme", _key)


def register_scheme(base: str, cls: type, argument: str | None = None,
                    example: str | None = None, *, replace: bool = False) -> SchemeEntry:
    """Register ``cls`` under ``base`` (with an ``alpha`` or ``m`` argument, or none).

    ``register_scheme("apiocc", APIOcc)`` makes ``make_scheme("apiocc")`` (and a sweep's
    ``schemes = ["apiocc"]``) build an ``APIOcc()``.

    Raises:
        ValueError: a malformed name or argument, or a name taken and ``replace`` False.
    """
    if argument not in (None, "alpha", "m"):
        raise ValueError(f"argument should be None, 'alpha' or 'm', got {argument!r}.")
    if not isinstance(base, str) or not _NAME.match(base) or "(" in base:
        raise ValueError(f"a scheme name should be lower-case letters, digits, +, - or _, got "
                         f"{base!r}.")
    example = example or (base if argument is None else
                          f"{base}({'0.1' if argument == 'alpha' else 5})")
    pattern = base if argument is None else f"{base}({argument.upper()})"
    entry = SchemeEntry(pattern, cls, options_of(cls), base=base, argument=argument,
                        example=example)
    return SCHEMES.register(entry, replace=replace)


def scheme_names() -> tuple[str, ...]:
    """Every registered name pattern, e.g. ``('api', 'api(ALPHA)', ...)`` (plugins too)."""
    return SCHEMES.names()


def _known() -> str:
    return (f"expected one of {', '.join(scheme_names())} (alpha in (0, 1], m a positive int),"
            f" e.g. 'api(0.1)' or 'nspi(5)'")


def entry_of(name: str) -> SchemeEntry:
    """The registry entry a scheme name refers to (ValueError if none)."""
    entry = SCHEMES.find(name)
    if entry is None:
        if any(e.base == _key(name).rstrip("()") for e in SCHEMES.entries()):
            raise ValueError(f"malformed scheme {name!r}; {_known()}.")
        raise ValueError(f"unknown scheme {name!r}; {_known()}. Register yours with "
                         f"nsrl.register_scheme; {PLUGIN_HINT}.")
    return entry


def added_entries(names: Iterable[str]) -> list[SchemeEntry]:
    """The entries of ``names`` that a fresh worker process would not have by itself."""
    return [e for e in map(entry_of, names) if not SCHEMES.is_builtin(e)]


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


def scheme_argument(entry: SchemeEntry, name: str) -> dict:
    """The argument written in ``name`` (``{"alpha": 0.1}``), checked; {} for none."""
    match = _NAME.match(str(name).lower())
    arg = match.group(2) if match else None
    if entry.argument is None or arg is None:
        return {}
    try:
        value = int(arg) if entry.argument == "m" and arg.isdigit() else float(arg)
        return {entry.argument: entry.params[entry.argument].check(value, entry.argument,
                                                                  entry.argument)}
    except (ValueError, TypeError, KeyError):
        raise ValueError(f"malformed scheme {name!r}; {_known()}.") from None


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
    entry = entry_of(name)
    argument = scheme_argument(entry, name)
    if entry.argument is not None and entry.argument in options:
        raise ValueError(f"scheme {name!r} gives {entry.argument} in its name; drop "
                         f"{entry.argument}={options[entry.argument]!r}.")
    options = {**argument, **options}
    check_params(dict(entry.params), options, f"scheme {name!r}")
    return entry.cls(**options)


def canonical_name(name: str) -> str:
    """The name a sweep stores for the scheme ``name`` (its shards' ``scheme`` column).

    The scheme object's own ``name`` (``"API(0.1)"``, as every earlier result stores it) when
    that names the same registration and argument back, else the registered name as written
    (a plugin class that inherits ``name = "API"`` from API is stored as ``"lazy"``, never as
    the built-in it is not).

    Examples:
        >>> canonical_name("api(0.10)"), canonical_name("NSPI(5)")
        ('API(0.1)', 'NSPI(5)')
    """
    entry = entry_of(name)
    argument = scheme_argument(entry, name)
    shown = getattr(entry.cls(**argument), "name", None)
    if isinstance(shown, str) and SCHEMES.find(shown) is entry and \
            scheme_argument(entry, shown) == argument:
        return shown
    if entry.argument is None:
        return entry.base
    return f"{entry.base}({argument[entry.argument]:g})"


with origin(BUILT_IN):
    for _args in (("api", API), ("api", APIAlpha, "alpha"), ("cpi", CPI),
                  ("cpi", CPIAlpha, "alpha"), ("cpi+", CPIPlus), ("psdp", PSDP),
                  ("nspi", NSPI, "m")):
        register_scheme(*_args)
SCHEMES.seal()
BUILTIN = frozenset(SCHEMES)  # the built-in keys (read for one more release)
