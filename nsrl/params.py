"""A schema derived from a dataclass's annotations: typed, range-checked fields from TOML or JSON.

A preset read from TOML must not be coerced: ``relative_noise = "false"`` is a string, and a
non-empty string is truthy, so coercion would silently run the opposite of what was written.
Every field is therefore checked against its annotation, and against a :class:`Rule`
declared next to it with :func:`spec`::

    @dataclass(frozen=True)
    class Sweep:
        n_mdps: int = spec(30, ge=1)
        noise: float = spec(0.1, ge=0, le=1e6)
        line_search: str = spec("best", choices=("best", "first"))
        relative_noise: bool = True           # no rule: the type alone is checked

and ``conform_fields(self)`` in ``__post_init__``. Supported annotations: ``int``, ``float``,
``bool``, ``str``, ``tuple[X, ...]`` of those, and ``X | None``. ``int`` refuses bools and
floats (``3.0``), ``float`` takes ints (stored as floats, so ``1`` and ``1.0`` are the same
value) and refuses NaN and infinities, ``bool`` takes only ``true``/``false``, a tuple takes
a list or tuple (non-empty unless ``min_items=0``). Errors name the field, what was
expected, what was received and an example built from the default.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import numbers
import types
import typing
from dataclasses import dataclass

import numpy as np

_SCALARS = (bool, int, float, str)


@dataclass(frozen=True)
class Rule:
    """Constraints on a field (on every item of a tuple field) beyond its type.

    Attributes:
        ge, gt, le, lt: bounds of a number (>=, >, <=, <).
        choices: the allowed values.
        min_items: the fewest items of a tuple field (default 1: non-empty).
        distinct: a tuple field's items must differ (e.g. a grid axis).
    """

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple | None = None
    min_items: int = 1
    distinct: bool = False


def spec(default, **rule):
    """A dataclass field with ``default`` and the :class:`Rule` ``rule`` (see the module doc)."""
    return dataclasses.field(default=default, metadata={"rule": Rule(**rule)})


@dataclass(frozen=True)
class Kind:
    """A parsed annotation: scalar type ``base``, a tuple of them, optionally None."""

    base: type
    is_tuple: bool = False
    optional: bool = False


def parse_annotation(annotation) -> Kind:
    """``int``, ``tuple[int, ...]``, ``float | None``... as a :class:`Kind`, else TypeError."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            return dataclasses.replace(parse_annotation(rest[0]), optional=True)
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis and args[0] in _SCALARS:
        return Kind(args[0], is_tuple=True)
    elif annotation in _SCALARS:
        return Kind(annotation)
    raise TypeError(f"unsupported field annotation {annotation!r}: the schema takes int, float, "
                    f"bool, str, tuple[X, ...] of them and X | None.")


@functools.cache
def schema(cls) -> dict[str, tuple[Kind, Rule]]:
    """Every field of the dataclass ``cls``: name -> (kind, rule); TypeError if unsupported."""
    hints = typing.get_type_hints(cls)
    return {f.name: (parse_annotation(hints[f.name]), f.metadata.get("rule", Rule()))
            for f in dataclasses.fields(cls)}


def conform_fields(obj, label: str = "field") -> None:
    """Check every field of the frozen dataclass ``obj`` and store its canonical value.

    Raises:
        TypeError: a field of the wrong type (the message names it).
        ValueError: a field out of its rule's range.
    """
    defaults = {f.name: f.default for f in dataclasses.fields(obj)}
    for name, (kind, rule) in schema(type(obj)).items():
        value = conform(getattr(obj, name), kind, rule, f"{label} {name!r}",
                        example(name, defaults[name]))
        object.__setattr__(obj, name, value)


def conform(value, kind: Kind, rule: Rule, what: str, hint: str = ""):
    """``value`` checked against ``kind`` and ``rule``, in canonical form (see the module doc)."""
    def fail(error, got):
        raise error(f"{what} should be {describe(kind, rule)}, got {got}{hint}.")

    if value is None:
        return None if kind.optional else fail(TypeError, "nothing (None)")
    if not kind.is_tuple:
        return _scalar(value, kind.base, rule, fail)
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        fail(TypeError, _received(value))
    items = tuple(_scalar(v, kind.base, rule, lambda e, got, v=v: fail(
        e, f"{list(value)!r} (item {v!r}: {_kind(v) if e is TypeError else 'out of range'})"))
        for v in value)
    if len(items) < rule.min_items:
        fail(ValueError, f"{list(value)!r} ({len(items)} items)")
    if rule.distinct and len(set(items)) < len(items):
        fail(ValueError, f"{list(value)!r} (repeated items)")
    return items


def _scalar(value, base: type, rule: Rule, fail):
    is_bool = isinstance(value, (bool, np.bool_))
    if base is bool:
        ok = is_bool
    elif base is int:
        ok = isinstance(value, numbers.Integral) and not is_bool
    elif base is float:
        ok = isinstance(value, numbers.Real) and not is_bool
    else:
        ok = isinstance(value, base)
    if not ok:
        fail(TypeError, _received(value))
    value = base(value)
    if base is float and not math.isfinite(value):
        fail(ValueError, repr(value))
    if rule.choices is not None and value not in rule.choices:
        fail(ValueError, repr(value))
    if base in (int, float) and not _in_range(value, rule):
        fail(ValueError, repr(value))
    return value


def _in_range(x, rule: Rule) -> bool:
    return ((rule.ge is None or x >= rule.ge) and (rule.gt is None or x > rule.gt)
            and (rule.le is None or x <= rule.le) and (rule.lt is None or x < rule.lt))


_NAMES = {bool: ("a bool (true or false)", "bools (true or false)"), int: ("an int", "ints"),
          float: ("a finite float", "finite floats"), str: ("a string", "strings")}


def describe(kind: Kind, rule: Rule) -> str:
    """What ``kind`` and ``rule`` accept, in words, e.g. ``'a list of ints >= 1'``."""
    one, many = _NAMES[kind.base]
    text = one
    if kind.is_tuple:
        least = {0: "", 1: "non-empty "}.get(rule.min_items, f"at least {rule.min_items} ")
        text = f"a {least}list of {many}"
    low = (f"[{rule.ge:g}" if rule.ge is not None else f"({rule.gt:g}" if rule.gt is not None
           else None)
    high = (f"{rule.le:g}]" if rule.le is not None else f"{rule.lt:g})" if rule.lt is not None
            else None)
    if low and high:
        text += f" in {low}, {high}"
    elif low:
        text += f" {'>=' if low[0] == '[' else '>'} {low[1:]}"
    elif high:
        text += f" {'<=' if high[-1] == ']' else '<'} {high[:-1]}"
    if rule.choices is not None:
        text += ", one of " + ", ".join(map(repr, rule.choices))
    if kind.is_tuple and rule.distinct:
        text += ", all different"
    if kind.optional:
        text += " (or left out)"
    return text


def _kind(value) -> str:
    kinds = {bool: "a bool", int: "an int", float: "a float", str: "a string", list: "a list",
             tuple: "a list", dict: "a table"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), type(value).__name__)


def _received(value) -> str:
    return f"{value!r} ({_kind(value)})"


def example(name: str, default) -> str:
    """``'; e.g. noise = 0.1'``: the default written as TOML ('' for None or no default)."""
    if default is None or default is dataclasses.MISSING:
        return ""
    value = list(default) if isinstance(default, tuple) else default
    return f"; e.g. {name} = {json.dumps(value)}"
