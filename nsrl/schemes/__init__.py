"""The seven schemes of Scherrer (2014), section 2: their rules, registry and reference loop."""

from __future__ import annotations

from nsrl.schemes.api import API, APIAlpha
from nsrl.schemes.base import History, Step, reference_run
from nsrl.schemes.cpi import CPI, CPIAlpha, CPIPlus
from nsrl.schemes.nspi import NSPI
from nsrl.schemes.psdp import PSDP
from nsrl.schemes.registry import SCHEMES, make_scheme, register_scheme, scheme_names

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
    "Step",
    "make_scheme",
    "reference_run",
    "register_scheme",
    "scheme_names",
]


def __getattr__(name: str) -> tuple[str, ...]:
    if name == "SCHEME_NAMES":  # was a copy taken at import; the registry is read live now
        import warnings

        from nsrl.params import user_stacklevel

        warnings.warn("nsrl.schemes.SCHEME_NAMES is deprecated: call "
                      "nsrl.schemes.scheme_names(), which includes plugins' schemes.",
                      DeprecationWarning, stacklevel=user_stacklevel())
        return scheme_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
