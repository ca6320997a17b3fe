"""One registry mechanism for everything nsrl names, as Gymnasium keeps one ``registry``.

Schemes, greedy operators, domains, experiments, batched engines, learners and exact methods
are each a :class:`Registry` of :class:`Entry` records: a name, the options it declares
(:mod:`nsrl.params`), a factory, a memory estimate, a one-line summary, and where it came from
(:class:`Origin`: built in, a plugin, an installed entry point, or a script). The seven
registries share these rules:

* **Every look-up is live.** A name that is not registered yet loads the installed plugins
  (entry-point group ``nsrl.plugins``) and is looked up again, in every process; nothing copies
  a registry at import. An unknown name gets one line listing what is registered and how to
  load a plugin.
* **A name is never replaced silently.** Registering a name that is taken raises, unless the
  same component is registered again (a module imported twice) or ``replace=True`` is passed;
  a replaced built-in is then shipped to every worker process and enters the fingerprint of
  every sweep that names it, like a plugin's component.
* **Identity.** :meth:`Entry.identity` names the component's code (the factory's module and
  qualified name) and, for a plugin installed as a distribution, its name and version. Sweeps
  hash it for every component that is not built in, so resuming with a changed or missing
  plugin is refused instead of mixing results.

:func:`registered` lists the names of one kind (``nsrl.registered("operators")``).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from nsrl.params import Param, check_params
from nsrl.plugins import BUILT_IN, Origin, current_origin, ensure_installed

#: The kinds of registered components and the module that registers the built-in ones (read
#: by name, as Gymnasium's entry points: importing them here would turn the layers upside down).
HOMES = {
    "schemes": "nsrl.schemes.registry",
    "operators": "nsrl.greedy.registry",
    "domains": "nsrl.domains",
    "experiments": "nsrl.experiments.registry",
    "engines": "nsrl.batched.registry",
    "learners": "nsrl.experiments.learners",
    "exact": "nsrl.exact.methods",
}
KINDS = tuple(HOMES)
PLUGIN_HINT = ("a plugin's names are known once it is loaded: nsrl --plugin MODULE, plugins = "
               "[\"MODULE\"] in a TOML sweep, nsrl.load_plugins([\"MODULE\"]), or an installed "
               "entry point of the group 'nsrl.plugins'")


def qualified(obj: object) -> str:
    """``module:qualname`` of a function or class (of the object's class otherwise)."""
    if isinstance(obj, str):
        return obj
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', '?')}"


@dataclass(frozen=True)
class Entry:
    """One registered component (kind-specific entries add their own fields).

    Attributes:
        name: the name users write (lower-case for most kinds).
        factory: what builds it (a class or function), or ``"module:attribute"`` resolved on
            first use (:meth:`resolve`).
        params: its declared options, name -> :class:`nsrl.params.Param`.
        summary: one line for ``--help``, listings and error messages.
        nbytes: ``nbytes(...) -> bytes`` of one use (kind-specific arguments), or None.
        origin: where it was registered from (set by :meth:`Registry.register`).
    """

    name: str
    factory: Any = None
    params: Mapping[str, Param] = field(default_factory=dict)
    summary: str = ""
    nbytes: Callable[..., int] | None = None
    origin: Origin = field(default=BUILT_IN, compare=False)

    kind = "components"  # the registry it belongs to (a class attribute of each subclass)

    @property
    def key(self) -> str:
        """The key it is stored under (its name; schemes store a pattern)."""
        return self.name

    def resolve(self) -> Any:
        """The factory, importing it first when it is registered as ``"module:attribute"``."""
        if isinstance(self.factory, str):
            module, _, attribute = self.factory.partition(":")
            return getattr(importlib.import_module(module), attribute)
        return self.factory

    def check(self, options: Mapping[str, object]) -> dict:
        """Every declared option, given or default, checked (unknown ones refused)."""
        return check_params(dict(self.params), dict(options), f"{self.kind[:-1]} {self.name!r}")

    def identity(self) -> str:
        """The component's code, and its distribution and version when it comes from one.

        Examples:
            >>> Entry("x", factory=dict).identity()
            'builtins:dict'
        """
        code = self.code
        if self.origin.distribution:
            return f"{code} ({self.origin.distribution}=={self.origin.version})"
        return code

    @property
    def code(self) -> str:
        """``module:qualname`` of what builds it (what :meth:`identity` names)."""
        return qualified(self.factory)

    @property
    def builtin(self) -> bool:
        """Whether it is one of nsrl's own registrations."""
        return self.origin.kind == "built-in"


E = TypeVar("E", bound=Entry)


class Registry(Mapping[str, E], Generic[E]):
    """Names of one kind of component: live look-ups, no silent replacement (module doc).

    It reads as a mapping of key -> entry (``registry["lstdq"]``, ``.values()``), every read
    live; it is written only through :meth:`register`.

    Args:
        kind: the plural noun, e.g. ``"operators"`` (a key of :data:`HOMES`).
        how: how a user registers one, for messages, e.g. ``"nsrl.register_operator"``.
        normalise: turns a name as written into the key it is stored under (default: strip and
            lower-case).
    """

    def __init__(self, kind: str, how: str,
                 normalise: Callable[[str], str] = lambda name: str(name).strip().lower()):
        self.kind, self.how, self.normalise = kind, how, normalise
        self._entries: dict[str, E] = {}
        self._builtin: dict[str, E] = {}
        _REGISTRIES[kind] = self

    @property
    def noun(self) -> str:
        """The singular noun, e.g. ``"operator"``."""
        return {"exact": "exact method"}.get(self.kind, self.kind[:-1])

    # --- registering ------------------------------------------------------------------------
    def register(self, entry: E, *, replace: bool = False) -> E:
        """Add ``entry`` under its key, recording where the call came from.

        Raises:
            ValueError: the key is taken by another component and ``replace`` is False.
        """
        entry = dataclasses.replace(entry, origin=current_origin())
        old = self._entries.get(entry.key)
        if old is not None and _same(old, entry):  # the same code again (a module reloaded)
            self._entries[entry.key] = entry
            return entry
        if old is not None and not replace:
            raise ValueError(
                f"the {self.noun} {entry.name!r} is already registered ({old.origin}: "
                f"{old.identity()}); registering {entry.identity()} under the same name would "
                f"silently change what it runs: choose another name, or pass replace=True to "
                f"replace it in every process (the sweeps that name it then record it).")
        self._entries[entry.key] = entry
        return entry

    def seal(self) -> None:
        """Mark the entries registered so far as the built-in ones (end of the home module)."""
        self._builtin = {k: dataclasses.replace(e, origin=BUILT_IN)
                         for k, e in self._entries.items()}
        self._entries.update(self._builtin)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a test's or notebook's own registration); KeyError if absent."""
        del self._entries[self.normalise(name)]

    def receive(self, entry: E) -> None:
        """Register ``entry`` as the driver had it (a worker's first step; no checks)."""
        self._entries[entry.key] = entry

    # --- reading ----------------------------------------------------------------------------
    def find(self, name: str) -> E | None:
        """The entry of ``name``, loading the installed plugins first if it is missing."""
        key = self.normalise(name)
        entry = self._entries.get(key)
        if entry is None:
            ensure_installed()
            entry = self._entries.get(key)
        return entry

    def lookup(self, name: str) -> E:
        """The entry of ``name``, or ValueError listing the registered names and the way out."""
        entry = self.find(name)
        if entry is None:
            raise ValueError(self.unknown(name))
        return entry

    def unknown(self, name: object) -> str:
        """The one-line message for an unknown ``name``."""
        return (f"unknown {self.noun} {name!r}; expected one of "
                f"{', '.join(map(repr, self.names()))}. Register yours with {self.how}; "
                f"{PLUGIN_HINT}.")

    def names(self) -> tuple[str, ...]:
        """Every registered name (installed plugins included), in registration order."""
        ensure_installed()
        return tuple(e.name for e in self._entries.values())

    def entries(self) -> tuple[E, ...]:
        """Every registered entry (installed plugins included)."""
        self.names()
        return tuple(self._entries.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None

    def __getitem__(self, name: str) -> E:
        entry = self.find(name)
        if entry is None:
            raise KeyError(name)
        return entry

    def __iter__(self) -> Iterator[str]:
        ensure_installed()
        return iter(list(self._entries))

    def __len__(self) -> int:
        ensure_installed()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

    def is_builtin(self, entry: E) -> bool:
        """Whether ``entry`` is the built-in one of its name (not a plugin's, not replaced)."""
        return self._builtin.get(entry.key) is entry

    def shipped(self, names: Any) -> list[E]:
        """The entries of ``names`` that a fresh worker process would not have by itself."""
        return [e for e in map(self.lookup, names) if not self.is_builtin(e)]

    # --- tests ------------------------------------------------------------------------------
    def snapshot(self) -> dict[str, E]:
        """A copy of the table (restored by :meth:`restore`)."""
        return dict(self._entries)

    def restore(self, saved: dict[str, E]) -> None:
        """Put back a :meth:`snapshot`."""
        self._entries.clear()
        self._entries.update(saved)


def _same(old: Entry, new: Entry) -> bool:
    """Whether ``new`` registers the same component again: the same code.

    A module imported twice or reloaded, a script's class later loaded as its plugin; never
    other code under a taken name.
    """
    return old.identity() == new.identity()


_REGISTRIES: dict[str, Registry] = {}


def registry(kind: str) -> Registry:
    """The registry of ``kind`` (one of :data:`KINDS`), its built-in entries loaded."""
    if kind not in HOMES:
        raise ValueError(f"kind should be one of {', '.join(KINDS)}, got {kind!r}.")
    if kind not in _REGISTRIES:
        importlib.import_module(HOMES[kind])
    return _REGISTRIES[kind]


def registered(kind: str) -> tuple[str, ...]:
    """The names registered for ``kind``, plugins included.

    Args:
        kind: ``"schemes"``, ``"operators"``, ``"domains"``, ``"experiments"``,
            ``"engines"``, ``"learners"`` or ``"exact"``.

    Examples:
        >>> registered("operators")[:3]
        ('exact', 'projected', 'lstdq')
    """
    return registry(kind).names()


def registries() -> dict[str, Registry]:
    """Every registry created so far in this process (kind -> registry)."""
    return dict(_REGISTRIES)


def receive(entries: Any) -> None:
    """Register in this process the entries a driver shipped (see :meth:`Registry.shipped`)."""
    for entry in entries:
        registry(entry.kind).receive(entry)
