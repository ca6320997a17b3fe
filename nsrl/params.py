"""Declared parameters: every option's type and range written once, one validator for all.

As scikit-learn's ``_parameter_constraints``: a scheme, a greedy operator and a sweep declare
their options as data, and :func:`check_params` (options of a class or factory) or
:func:`conform_fields` (the fields of a frozen dataclass) checks them. Nothing is coerced: in
TOML, ``relative_noise = "false"`` is a string, and a non-empty string is truthy, so coercion
would silently run the opposite of what was written. A sweep declares its fields with
:func:`spec`::

    @dataclass(frozen=True)
    class Sweep:
        n_mdps: int = spec(30, ge=1)
        noise: float = spec(0.1, ge=0, le=1e6)
        line_search: str = spec("best", choices=("best", "largest-improving", "doubling"))
        relative_noise: bool = True           # no rule: the type alone is checked

and calls ``conform_fields(self)`` in ``__post_init__``; a class declares its options with
:func:`param` (``params = {"alpha": param(float, 0.1, gt=0, le=1)}``) and calls
``check_params`` in ``__init__``; a sweep field that passes an option on reuses its
declaration (``Param.field``), so the range is stated once.

Supported annotations: ``int``, ``float``, ``bool``, ``str``, unions of them (``int | str``:
the numeric bounds apply to numbers, ``choices`` to strings), ``tuple[X, ...]``, ``dict`` (a
table of options with string keys, checked by whoever declares them) and ``X | None``.
``int`` refuses bools and floats (``3.0``), ``float`` takes ints (stored as
floats, so ``1`` and ``1.0`` are the same value) and refuses NaN and infinities, ``bool``
takes only ``true``/``false``, a tuple takes a list or tuple (non-empty unless
``min_items=0``). Errors (:class:`InvalidParameterError`, both a ValueError and a TypeError)
name the option, what was expected, what was received and an example built from the default.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import numbers
import types
import typing
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import numpy as np

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_SCALARS = (bool, int, float, str)
_T = TypeVar("_T")


class InvalidParameterError(ValueError, TypeError):
    """An option or field of the wrong type or out of its range (as scikit-learn's)."""


@dataclass(frozen=True)
class Rule:
    """Constraints on a value (on every item of a tuple) beyond its type.

    Attributes:
        ge, gt, le, lt: bounds of a number (>=, >, <=, <).
        choices: the allowed values (the allowed strings, in a union with a number type), or
            a function returning them, called at each check (a live registry's names).
        min_items: the fewest items of a tuple field (default 1: non-empty).
        distinct: a tuple field's items must differ (e.g. a grid axis).
    """

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    choices: tuple | typing.Callable[[], tuple] | None = None
    min_items: int = 1
    distinct: bool = False

    @property
    def allowed(self) -> tuple | None:
        """The allowed values now (a function's answer is read at each call, never kept)."""
        return self.choices() if callable(self.choices) else self.choices


def spec(default: _T, **rule: Any) -> _T:
    """A dataclass field with ``default`` and the :class:`Rule` ``rule`` (see the module doc)."""
    return dataclasses.field(default=default, metadata={"rule": Rule(**rule)})


@dataclass(frozen=True)
class Kind:
    """A parsed annotation: scalar type(s) ``base``, a tuple of them, optionally None."""

    base: type | tuple[type, ...]
    is_tuple: bool = False
    optional: bool = False

    @property
    def bases(self) -> tuple[type, ...]:
        """The accepted scalar types, in the order they are tried."""
        return self.base if isinstance(self.base, tuple) else (self.base,)


def parse_annotation(annotation: object) -> Kind:
    """``int``, ``int | str``, ``tuple[int, ...]``, ``float | None``... as a :class:`Kind`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        rest = tuple(a for a in args if a is not type(None))
        optional = len(rest) < len(args)
        if len(rest) == 1:
            return dataclasses.replace(parse_annotation(rest[0]), optional=optional)
        if all(a in _SCALARS for a in rest):
            return Kind(rest, optional=optional)
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis and args[0] in _SCALARS:
        return Kind(args[0], is_tuple=True)
    elif annotation in _SCALARS or annotation is dict:
        return Kind(annotation)
    raise TypeError(f"unsupported field annotation {annotation!r}: the schema takes int, float, "
                    f"bool, str, unions and tuple[X, ...] of them, and X | None.")


@dataclass(frozen=True)
class Param:
    """One declared option of a class or factory: its annotation, default and rule.

    Attributes:
        annotation: the type, as an annotation (``float``, ``int | None``, ``int | str``).
        default: the value when the option is not given.
        rule: the :class:`Rule` beyond the type.
    """

    annotation: object
    default: Any = None  # of the annotation's type (Any: signatures take it as their default)
    rule: Rule = Rule()

    @property
    def kind(self) -> Kind:
        """The parsed annotation."""
        return parse_annotation(self.annotation)

    def field(self, default: Any = dataclasses.MISSING) -> Any:
        """A dataclass field with this rule and default (a sweep field that passes it on).

        ``default`` replaces the declared default where the field's differs (e.g. None: the
        sweep derives the value).
        """
        default = self.default if default is dataclasses.MISSING else default
        return dataclasses.field(default=default, metadata={"rule": self.rule})

    def check(self, value: object, what: str, name: str) -> Any:
        """``value`` in canonical form, or InvalidParameterError naming ``what``.

        An option declared with the annotation ``object`` takes any value, unchecked.
        """
        if self.annotation is object:
            return value
        return conform(value, self.kind, self.rule, what, example(name, self.default, "="))


def param(annotation: object, default: object = None, **rule: Any) -> Param:
    """Declare an option: ``param(float, 0.1, gt=0, le=1)`` (see :class:`Rule`)."""
    return Param(annotation, default, Rule(**rule))


def check_params(params: dict[str, Param], given: dict, owner: str) -> dict:
    """Every declared option, from ``given`` or its default, checked (the one validator).

    Args:
        params: the declarations, name -> :class:`Param`.
        given: the options received.
        owner: who takes them, for the messages (e.g. ``"CPIPlus"``).

    Returns:
        name -> canonical value, for every declared option.

    Raises:
        InvalidParameterError: an unknown option (the message lists the known ones) or a
            value of the wrong type or out of range. An old spelling of :data:`RENAMED` is
            read under its new name, with a DeprecationWarning.

    Examples:
        >>> check_params({"m": param(int, 5, ge=1)}, {}, "NSPI")
        {'m': 5}
    """
    given = renamed(given, params, f"{owner}: ")
    unknown = sorted(set(given) - set(params))
    if unknown:
        known = ", ".join(params) if params else "no option"
        raise InvalidParameterError(
            f"{owner} got unknown option(s) {', '.join(map(repr, unknown))}; it takes {known}: "
            f"drop or correct {'it' if len(unknown) == 1 else 'them'}.")
    return {name: p.check(given.get(name, p.default), f"{owner} option {name!r}", name)
            for name, p in params.items()}


@functools.cache
def schema(cls: type) -> dict[str, tuple[Kind, Rule]]:
    """Every field of the dataclass ``cls``: name -> (kind, rule); TypeError if unsupported."""
    hints = typing.get_type_hints(cls)
    return {f.name: (parse_annotation(hints[f.name]), f.metadata.get("rule", Rule()))
            for f in dataclasses.fields(cls)}


def conform_fields(obj: DataclassInstance, label: str = "field") -> None:
    """Check every field of the frozen dataclass ``obj`` and store its canonical value.

    Raises:
        InvalidParameterError: a field of the wrong type or out of its rule's range (the
            message names it).
    """
    defaults = {f.name: f.default for f in dataclasses.fields(obj)}
    for name, (kind, rule) in schema(type(obj)).items():
        value = conform(getattr(obj, name), kind, rule, f"{label} {name!r}",
                        example(name, defaults[name]))
        object.__setattr__(obj, name, value)


def conform(value: object, kind: Kind, rule: Rule, what: str, hint: str = "") -> Any:
    """``value`` checked against ``kind`` and ``rule``, in canonical form (see the module doc)."""
    def fail(got: str, wrong_type: bool = False) -> NoReturn:
        raise InvalidParameterError(f"{what} should be {describe(kind, rule)}, got {got}{hint}.")

    if value is None:
        return None if kind.optional else fail("nothing (None)", True)
    if kind.base is dict:  # a table of options, checked by whoever declares them
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            fail(_received(value), True)
        return dict(value)
    if not kind.is_tuple:
        return _scalar(value, kind.bases, rule, fail)
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        fail(_received(value), True)

    def fail_item(v: object) -> Callable[[str, bool], NoReturn]:
        return lambda got, wrong_type: fail(
            f"{list(value)!r} (item {v!r}: {_kind(v) if wrong_type else 'out of range'})")

    items = tuple(_scalar(v, kind.bases, rule, fail_item(v)) for v in value)
    if len(items) < rule.min_items:
        fail(f"{list(value)!r} ({len(items)} items)", False)
    if rule.distinct and len(set(items)) < len(items):
        fail(f"{list(value)!r} (repeated items)", False)
    return items


def _is(value: object, base: type) -> bool:
    is_bool = isinstance(value, (bool, np.bool_))
    if base is bool:
        return is_bool
    if base is int:
        return isinstance(value, numbers.Integral) and not is_bool
    if base is float:
        return isinstance(value, numbers.Real) and not is_bool
    return isinstance(value, base)


def _scalar(value: Any, bases: tuple[type, ...], rule: Rule,
            fail: Callable[[str, bool], NoReturn]) -> Any:
    base = next((b for b in bases if _is(value, b)), None)
    if base is None:
        fail(_received(value), True)
    value = base(value)
    if base is float and not math.isfinite(value):
        fail(repr(value), False)
    numeric = base in (int, float)
    allowed = rule.allowed
    if allowed is not None and (len(bases) == 1 or not numeric) and value not in allowed:
        fail(repr(value), False)
    if numeric and not _in_range(value, rule):
        fail(repr(value), False)
    return value


def _in_range(x: float, rule: Rule) -> bool:
    return ((rule.ge is None or x >= rule.ge) and (rule.gt is None or x > rule.gt)
            and (rule.le is None or x <= rule.le) and (rule.lt is None or x < rule.lt))


_NAMES = {bool: ("a bool (true or false)", "bools (true or false)"), int: ("an int", "ints"),
          float: ("a finite float", "finite floats"), str: ("a string", "strings")}


def _number(x: float) -> str:
    """A bound as written: an int in full (``2147483647``), a float short (``1e+06``)."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def _bounds(rule: Rule) -> str:
    low = (f"[{_number(rule.ge)}" if rule.ge is not None else f"({_number(rule.gt)}"
           if rule.gt is not None else None)
    high = (f"{_number(rule.le)}]" if rule.le is not None else f"{_number(rule.lt)})"
            if rule.lt is not None else None)
    if low and high:
        return f" in {low}, {high}"
    if low:
        return f" {'>=' if low[0] == '[' else '>'} {low[1:]}"
    if high:
        return f" {'<=' if high[-1] == ']' else '<'} {high[:-1]}"
    return ""


def describe(kind: Kind, rule: Rule) -> str:
    """What ``kind`` and ``rule`` accept, in words, e.g. ``'a list of ints >= 1'``."""
    if kind.base is dict:
        return "a table of options (name = value)"
    allowed = rule.allowed
    choices = "" if allowed is None else ", one of " + ", ".join(map(repr, allowed))
    if len(kind.bases) > 1:  # a union: numbers in range, or one of the strings
        parts = [_NAMES[b][0] + _bounds(rule) for b in kind.bases if b in (int, float, bool)]
        parts += [c[2:] for c in [choices] if c and str in kind.bases]
        text = " or ".join(parts)
    else:
        one, many = _NAMES[kind.bases[0]]
        text = one
        if kind.is_tuple:
            least = {0: "", 1: "non-empty "}.get(rule.min_items, f"at least {rule.min_items} ")
            text = f"a {least}list of {many}"
        text += _bounds(rule) + choices
    if kind.is_tuple and rule.distinct:
        text += ", all different"
    if kind.optional:
        text += " (or left out)"
    return text


def _kind(value: object) -> str:
    kinds = {bool: "a bool", int: "an int", float: "a float", str: "a string", list: "a list",
             tuple: "a list", dict: "a table"}
    return next((k for t, k in kinds.items() if isinstance(value, t)), type(value).__name__)


def _received(value: object) -> str:
    return f"{value!r} ({_kind(value)})"


def example(name: str, default: object, sep: str = " = ") -> str:
    """``'; e.g. noise = 0.1'``: the default written as TOML ('' for None or no default).

    ``sep="="`` writes it as a Python keyword argument (``'; e.g. noise=0.1'``).
    """
    if default is None or default is dataclasses.MISSING:
        return ""
    value = list(default) if isinstance(default, tuple) else default
    return f"; e.g. {name}{sep}{json.dumps(value) if sep != '=' else repr(value)}"


# Spellings renamed so that one setting has one name in every layer (operator keyword and
# attribute, sweep field, command-line flag); the old ones are read for one more release, each
# use warning once with the new name. old -> new.
RENAMED = {
    "value": "value_estimate",  # ProjectedGreedy's option (an operator's ``value`` is a method)
    "line_search_scores": "value_estimate",  # the sweep field that passed it on
    "samples": "budget",  # transitions per greedy call (``Greedy.samples`` counts those drawn)
    "samples_per_call": "budget",  # the sweep field that passed it on
    "representation": "features",  # the sweep field of the sample-based operators' features
}


def user_stacklevel() -> int:
    """The ``stacklevel`` of the first caller outside nsrl (where a warning should point).

    A deprecated spelling is reached through a varying number of nsrl's own frames (a sweep
    built from a dict, a TOML file, an operator's keywords); the warning names the user's line
    whatever the path, as Python 3.12's ``skip_file_prefixes`` does.
    """
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def deprecated(old: str, new: str, where: str = "", stacklevel: int | None = None) -> None:
    """Warn once that ``old`` is spelled ``new`` now (a DeprecationWarning at the user's line)."""
    warnings.warn(f"{where}{old!r} is deprecated and will be removed in the next release; use "
                  f"{new!r}.", DeprecationWarning, stacklevel=stacklevel or user_stacklevel())


def renamed(given: dict, declared: Iterable[str] | dict, where: str = "",
            stacklevel: int | None = None) -> dict:
    """``given`` with the old spellings of :data:`RENAMED` under their new names (warning once).

    Only an old name that ``declared`` (the names taken) lacks, and whose new name it has, is
    mapped: an option of one's own that happens to be spelled as an old name is left alone.
    Given under both names, the old one is refused (which one is meant is unclear).

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     renamed({"samples": 5}, {"budget"})
        {'budget': 5}
    """
    out = dict(given)
    for old, new in RENAMED.items():
        if old in out and old not in declared and new in declared:
            if new in out:
                raise InvalidParameterError(f"{where}{old!r} and {new!r} are the same setting "
                                            f"(the first is its old name); give only {new!r}.")
            deprecated(old, new, where, stacklevel)
            out[new] = out.pop(old)
    return out


def set_params(obj: Any, **given: object) -> None:
    """Store ``given`` on ``obj``, checked against ``type(obj).params`` (defaults filled in)."""
    vars(obj).update(check_params(type(obj).params, given, type(obj).__name__))
