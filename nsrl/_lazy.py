"""A package's names imported on first use (PEP 562).

Importing one submodule of such a package does not import them all.

    __getattr__, __dir__ = lazy_names(__name__, {"Name": "submodule", ...}, globals())
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_names(package: str, where: Mapping[str, str], namespace: dict
               ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``namespace`` is its ``globals()``.

    ``where[name]`` is the submodule that defines ``name``.
    A name is imported on first use and then kept in the package's namespace; any other
    attribute is looked up as a submodule (as when the package imported them all).
    """

    def __getattr__(name: str) -> object:
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            namespace[name] = value
            return value
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
