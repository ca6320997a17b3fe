"""The batched engines' registry: one engine per scheme class, looked up by exact type.

An engine is ``engine(batch, scheme, U, out)``: it runs ``scheme`` once per row of the noise
draws ``U[r, k, s]`` on ``batch``'s MDP with the paper's projected operator, filling
``out["loss"|"memory"|"step"][r, k]`` as the reference loop would. Engines compute values;
every decision they take comes from the scheme's data through :mod:`nsrl.schemes.rules`.

The lookup is by exact type, not isinstance: a subclass of API that changes what API does
must not silently run API's engine. :func:`engine_for` raises TypeError for any class
without its own engine; ``nsrl.run(engine="auto")`` then runs it on the reference loop.
"""

from __future__ import annotations

from collections.abc import Callable

ENGINES: dict[type, Callable] = {}


def register(*classes: type) -> Callable:
    """Decorator: ``@register(API)`` makes the function the batched engine of exactly API."""
    def decorate(engine: Callable) -> Callable:
        for cls in classes:
            ENGINES[cls] = engine
        return engine

    return decorate


def has_engine(scheme) -> bool:
    """Whether ``scheme``'s exact class has a batched engine."""
    return type(scheme) in ENGINES


def engine_for(scheme) -> Callable:
    """The batched engine of ``scheme``'s exact class, or TypeError naming the way out."""
    engine = ENGINES.get(type(scheme))
    if engine is None:
        name = type(scheme).__name__
        raise TypeError(
            f"no batched engine for {name}: run it with nsrl.run(..., engine='reference') "
            f"(engine='auto' does so by itself), or add one with "
            f"@nsrl.batched.register({name})."
        )
    return engine
