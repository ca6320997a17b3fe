"""The batched engines' registry: one engine per scheme class, looked up by exact type.

An engine is ``engine(batch, scheme, U, out)``: it runs ``scheme`` once per row of the noise
draws ``U[r, k, s]`` on ``batch``'s MDP with the paper's projected operator, filling
``out["loss"|"memory"|"step"][r, k]`` as the reference loop would. Engines compute values;
every decision they take comes from the scheme's data through :mod:`nsrl.schemes.rules`.

The engines are entries of one :class:`nsrl.registry.Registry` (kind ``"engines"``), named by
their scheme class's qualified name, so that a plugin's engine reaches the worker processes
of a sweep as its scheme does. The lookup is by exact type, not isinstance: a subclass of API
that changes what API does must not silently run API's engine. :func:`engine_for` raises
TypeError for any class without its own engine; ``nsrl.run(engine="auto")`` then runs it on
the reference loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nsrl.registry import Entry, Registry


@dataclass(frozen=True)
class EngineEntry(Entry):
    """One batched engine: ``factory`` is the engine, ``scheme`` the class it runs exactly."""

    scheme: type | None = None

    kind = "engines"


ENGINES: Registry[EngineEntry] = Registry("engines", "@nsrl.batched.register(SchemeClass)",
                                          normalise=str)


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register(*classes: type, replace: bool = False) -> Callable:
    """Decorator: ``@register(API)`` makes the function the batched engine of exactly API."""
    def decorate(engine: Callable) -> Callable:
        for cls in classes:
            ENGINES.register(EngineEntry(_name(cls), engine, scheme=cls), replace=replace)
        return engine

    return decorate


def _entry(scheme: Any) -> EngineEntry | None:
    entry = ENGINES.find(_name(type(scheme)))
    return entry if entry is not None and entry.scheme is type(scheme) else None


def has_engine(scheme: Any) -> bool:
    """Whether ``scheme``'s exact class has a batched engine."""
    return _entry(scheme) is not None


def engine_for(scheme: Any) -> Callable:
    """The batched engine of ``scheme``'s exact class, or TypeError naming the way out."""
    entry = _entry(scheme)
    if entry is None:
        name = type(scheme).__name__
        raise TypeError(
            f"no batched engine for {name}: run it with nsrl.run(..., engine='reference') "
            f"(engine='auto' does so by itself), or add one with "
            f"@nsrl.batched.register({name})."
        )
    return entry.resolve()


def engine_entry(scheme_class: type) -> EngineEntry | None:
    """The registered engine of exactly ``scheme_class`` (None if it has none)."""
    entry = ENGINES.find(_name(scheme_class))
    return entry if entry is not None and entry.scheme is scheme_class else None
