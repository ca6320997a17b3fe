"""The seven schemes of Scherrer (2014), section 2: their rules, registry and reference loop."""

from __future__ import annotations

from nsrl.schemes.api import API, APIAlpha
from nsrl.schemes.base import History, Step, reference_run
from nsrl.schemes.cpi import CPI, CPIAlpha, CPIPlus
from nsrl.schemes.nspi import NSPI
from nsrl.schemes.psdp import PSDP
from nsrl.schemes.registry import SCHEMES, make_scheme, register_scheme, scheme_names

SCHEME_NAMES = scheme_names()  # the built-in names; SCHEMES holds every registered one
PAPER_SCHEMES = ("api", "api(0.1)", "cpi+", "cpi(0.1)", "nspi(5)", "nspi(10)", "nspi(30)", "psdp")

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
    "SCHEMES",
    "SCHEME_NAMES",
    "Step",
    "make_scheme",
    "reference_run",
    "register_scheme",
    "scheme_names",
]
