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
from dataclasses import dataclass

from nsrl.schemes.api import API, APIAlpha
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
    """Every registered name pattern, e.g. ``('api', 'api(ALPHA)', ...)``."""
    return tuple(e.pattern for e in SCHEMES.values())


def _known() -> str:
    return (f"expected one of {', '.join(scheme_names())} (alpha in (0, 1], m a positive int),"
            f" e.g. 'api(0.1)' or 'nspi(5)'")


def entry_of(name: str) -> SchemeEntry:
    """The registry entry a scheme name refers to (ValueError if none)."""
    match = _NAME.match(str(name).lower())
    entry = SCHEMES.get((match.group(1), match.group(2) is not None)) if match else None
    if entry is None:
        raise ValueError(f"unknown scheme {name!r}; {_known()}.")
    return entry


def added_entries(names) -> list[SchemeEntry]:
    """The entries of ``names`` registered by the user (beyond the built-in seven)."""
    return [e for e in map(entry_of, names) if (e.base, e.argument is not None) not in BUILTIN]


def make_scheme(name: str, **options):
    """A scheme from its name: api, api(0.1), cpi, cpi(0.1), cpi+, psdp, nspi(5).

    Args:
        name: a registered name (:func:`scheme_names`).
        **options: keyword options for the schemes whose class takes them (e.g.
            ``advantage``, ``epsilon`` and ``line_search`` for the CPI family, as a sweep
            passes them to all its schemes); a class that does not take one ignores it.

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
    taken = inspect.signature(entry.cls).parameters
    kwargs = {k: v for k, v in options.items() if k in taken}
    if entry.argument is None:
        return entry.cls(**kwargs)
    try:
        if entry.argument == "m":
            if not arg.isdigit() or int(arg) > _MAX_M:  # m is stored as an int32 (memory)
                raise ValueError
            value = int(arg)
        else:
            value = float(arg)
    except ValueError:
        raise ValueError(f"malformed scheme {name!r}; {_known()}.") from None
    try:
        return entry.cls(value, **kwargs)
    except ValueError:
        raise ValueError(f"malformed scheme {name!r}; {_known()}.") from None


_MAX_M = 2**31 - 1

for _args in (("api", API), ("api", APIAlpha, "alpha"), ("cpi", CPI), ("cpi", CPIAlpha, "alpha"),
              ("cpi+", CPIPlus), ("psdp", PSDP), ("nspi", NSPI, "m")):
    register_scheme(*_args)
BUILTIN = frozenset(SCHEMES)
