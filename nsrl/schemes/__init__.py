"""The seven schemes of Scherrer (2014), section 2, and the run loop."""

from __future__ import annotations

import re

from nsrl.schemes.api import API, APIAlpha
from nsrl.schemes.base import History, Step, run
from nsrl.schemes.cpi import CPI, CPIAlpha, CPIPlus
from nsrl.schemes.nspi import NSPI
from nsrl.schemes.psdp import PSDP

SCHEME_NAMES = ("api", "api(ALPHA)", "cpi", "cpi(ALPHA)", "cpi+", "psdp", "nspi(M)")
PAPER_SCHEMES = ("api", "api(0.1)", "cpi+", "cpi(0.1)", "nspi(5)", "nspi(10)", "nspi(30)", "psdp")

_PATTERN = re.compile(r"^\s*(api|cpi|cpi\+|psdp|nspi)\s*(?:\(\s*([0-9.eE+-]+)\s*\))?\s*$")


def make_scheme(name: str):
    """A scheme from its name: api, api(0.1), cpi, cpi(0.1), cpi+, psdp, nspi(5).

    Examples:
        >>> make_scheme("nspi(10)").name
        'NSPI(10)'
    """
    match = _PATTERN.match(str(name).lower())
    if not match:
        raise ValueError(
            f"unknown scheme {name!r}; expected one of {', '.join(SCHEME_NAMES)} "
            f"(alpha in (0, 1], m a positive int), e.g. 'api(0.1)' or 'nspi(5)'."
        )
    base, arg = match.groups()
    try:
        if base == "nspi":
            if arg is None or not arg.isdigit():
                raise ValueError
            return NSPI(int(arg))
        if arg is None:
            return {"api": API, "cpi": CPI, "cpi+": CPIPlus, "psdp": PSDP}[base]()
        if base in ("api", "cpi"):
            return (APIAlpha if base == "api" else CPIAlpha)(float(arg))
        raise ValueError
    except (ValueError, KeyError):
        raise ValueError(
            f"malformed scheme {name!r}; expected one of {', '.join(SCHEME_NAMES)}, "
            f"e.g. 'api(0.1)', 'cpi(0.1)' or 'nspi(5)'."
        ) from None


__all__ = [
    "API",
    "APIAlpha",
    "CPI",
    "CPIAlpha",
    "CPIPlus",
    "History",
    "NSPI",
    "PAPER_SCHEMES",
    "PSDP",
    "SCHEME_NAMES",
    "Step",
    "make_scheme",
    "run",
]
