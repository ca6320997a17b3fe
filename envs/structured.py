"""What the structured-domain envs share: the "coordinates" observation and a model cache."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from nsrl.model.mdp import FiniteMDP

from .observations import MODES

# A structured domain's features are its coordinates, so "coordinates" names that mode.
ALIASES = {"coordinates": "features"}


def observation_mode(observation: str) -> str:
    """The observation mode of :mod:`nsrl.envs.observations` that ``observation`` names."""
    if observation not in MODES and observation not in ALIASES:
        raise ValueError(f"observation should be one of {('index', 'coordinates') + MODES[1:]}, "
                         f"got {observation!r}; e.g. observation='coordinates'.")
    return ALIASES.get(observation, observation)


@lru_cache(maxsize=16)
def _memo(builder: Callable[..., FiniteMDP], items: tuple) -> FiniteMDP:
    return builder(**{key: value for key, _, value in items})


def _types(value: object) -> object:
    """The types in ``value``, nested through tuples (cells such as ((1, 2),) included)."""
    if isinstance(value, tuple):
        return (tuple, *(_types(item) for item in value))
    return type(value)


def cached_model(builder: Callable[..., FiniteMDP], **kwargs: object) -> FiniteMDP:
    """``builder(**kwargs)``, memoised so that every copy of an env shares one model.

    Unhashable arguments (e.g. goal cells given as lists) build a fresh model.
    """
    try:
        # each value's type in the key: 5 and 5.0 (or 1 and True) compare equal, and the
        # builder must refuse 5.0 whatever was cached before (issue 47)
        typed = ((key, _types(value), value) for key, value in kwargs.items())
        return _memo(builder, tuple(sorted(typed, key=lambda item: item[0])))
    except TypeError:
        return builder(**kwargs)
