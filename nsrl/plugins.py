"""Plugins: a user's modules that register operators, schemes, domains and experiments.

A plugin is an importable module that calls nsrl's registration functions when it is imported
(:func:`nsrl.register_operator`, :func:`nsrl.register_scheme`, :func:`nsrl.register_domain`,
:func:`nsrl.register_experiment`), as a pytest plugin registers its hooks. It is named in one of
three ways:

* ``nsrl --plugin MODULE ...`` on the command line (repeatable);
* ``plugins = ["MODULE"]`` at the top of a TOML sweep file;
* an entry point of the group ``nsrl.plugins`` in an installed package's metadata, e.g. in its
  pyproject.toml ``[project.entry-points."nsrl.plugins"] mine = "my_package.nsrl_plugin"``.

A name is ``"module"`` (imported) or ``"module:function"`` (imported, then ``function()`` is
called). :func:`load_plugins` imports each one once per process and remembers it; the sweep
runner hands :func:`loaded_plugins` to every worker process (loky or Dask), which loads the same
plugins before computing a shard, so a name registered by a plugin is known everywhere.

This module imports nothing of nsrl: plugins import nsrl, not the other way round.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import warnings
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points, packages_distributions, version
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

ENTRY_POINT_GROUP = "nsrl.plugins"
_SPEC = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")
_loaded: dict[str, None] = {}  # an ordered set of the specs loaded in this process


class PluginError(ValueError):
    """A plugin that cannot be found or fails while it registers (the message names it)."""


@dataclass(frozen=True)
class Origin:
    """Where a registration came from (:mod:`nsrl.registry` records it on every entry).

    Attributes:
        kind: ``"built-in"``, ``"plugin"`` (a module named by ``--plugin``, a TOML sweep or
            :func:`load_plugins`), ``"entry-point"`` (an installed plugin) or ``"script"`` (a
            call made by the user's own code).
        plugin: the plugin spec (``"module"`` or ``"module:function"``), if any.
        distribution: the installed distribution that provides it, if known.
        version: that distribution's version.
    """

    kind: str = "built-in"
    plugin: str = ""
    distribution: str = ""
    version: str = ""

    def __str__(self) -> str:
        if self.kind == "built-in":
            return "built in"
        where = f"{self.kind} {self.plugin}" if self.plugin else self.kind
        return f"{where}, {self.distribution} {self.version}" if self.distribution else where


BUILT_IN = Origin()
_origins: list[Origin] = [Origin("script")]


@contextlib.contextmanager
def origin(where: Origin) -> Iterator[None]:
    """Registrations made inside this block record ``where`` (plugins and built-ins use it)."""
    _origins.append(where)
    try:
        yield
    finally:
        _origins.pop()


def current_origin() -> Origin:
    """Where a registration made now comes from."""
    return _origins[-1]


def _distribution(module_name: str) -> tuple[str, str]:
    """(distribution, version) that installs the top-level package of ``module_name``."""
    try:
        names = packages_distributions().get(module_name.partition(".")[0], [])
        return (names[0], version(names[0])) if names else ("", "")
    except Exception:  # noqa: BLE001 - broken metadata only costs the version in fingerprints
        return "", ""


def _check_spec(spec: object) -> str:
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise PluginError(f"a plugin should be named as an importable module, 'module' or "
                          f"'module:function', got {spec!r}; e.g. --plugin my_package.plugin.")
    return spec.strip()


def load_plugin(spec: str, where: Origin | None = None) -> None:
    """Import the plugin ``spec`` (``"module"`` or ``"module:function"``) once in this process.

    What a plugin may run: importing its module (its top-level code registers names), then, for
    ``"module:function"``, calling a Python function *defined in that module*; anything else
    (``"os:abort"``, ``"sys:exit"``, a function imported from elsewhere) is refused before it
    runs. Whatever it prints while loading goes to stderr, so that stdout stays a command's own
    output (``--json``). A plugin that calls ``sys.exit`` while loading is an error, not an exit.

    Args:
        spec: the plugin's name.
        where: the origin its registrations record (default: a plugin, with the distribution
            that installs its module, if any).

    Raises:
        PluginError: the module cannot be imported, the function is missing or not the
            module's own, or loading raises or exits (the message names the plugin and the
            cause).
    """
    spec = _check_spec(spec)
    if spec in _loaded:
        return
    module_name, _, function = spec.partition(":")
    where = where or Origin("plugin", spec, *_distribution(module_name))
    with origin(where), _stdout_to_stderr():
        module = _import(spec, module_name)
        if function:
            _call(spec, module, function)
    _loaded[spec] = None


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    import sys

    with contextlib.redirect_stdout(sys.stderr):
        yield


@contextlib.contextmanager
def _failures(spec: str, when: str, exit_fix: str,
              own: tuple[type[Exception], ...] = ()) -> Iterator[None]:
    """A plugin's exit or exception ``when`` (importing, registering) as one PluginError.

    The exceptions ``own`` pass through, for the caller's own message.
    """
    try:
        yield
    except SystemExit as exc:
        raise PluginError(f"the plugin {spec!r} called sys.exit({exc.code!r}) {when}; a "
                          f"plugin should only register names{exit_fix}.") from None
    except Exception as exc:
        if isinstance(exc, (PluginError, *own)):
            raise
        raise PluginError(f"the plugin {spec!r} failed {when}: "
                          f"{type(exc).__name__}: {exc}") from exc


def _import(spec: str, module_name: str) -> object:
    try:
        with _failures(spec, "on import", ": remove the exit", (ModuleNotFoundError,)):
            return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise PluginError(f"cannot import the plugin module {module_name!r} (no module "
                              f"named {exc.name!r}) in process {os.getpid()}; install it or "
                              f"put its folder on PYTHONPATH.") from None
        raise PluginError(f"the plugin {spec!r} failed on import: {exc}") from exc


def _call(spec: str, module: object, function: str) -> None:
    import types

    hook = getattr(module, function, None)
    name = getattr(module, "__name__", "?")
    if not callable(hook):
        raise PluginError(f"the plugin module {name!r} has no function {function!r}; "
                          f"correct the name after the colon.")
    if not isinstance(hook, types.FunctionType) or hook.__module__ != name:
        raise PluginError(f"the plugin {spec!r} names {function!r}, which is not a function "
                          f"defined in {name!r}: a plugin may run only its own module's code; "
                          f"name the module alone, or a function it defines.")
    with _failures(spec, "while registering", ""):
        hook()


def installed_plugins() -> tuple[str, ...]:
    """The plugins installed packages declare in the entry-point group ``nsrl.plugins``."""
    return tuple(ep.value.replace(" ", "") for ep in entry_points(group=ENTRY_POINT_GROUP))


def _load_installed() -> None:
    """Load every installed entry point; a broken one warns, naming its distribution."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        spec = ep.value.replace(" ", "")
        dist = getattr(ep, "dist", None)
        name, release = (dist.name, dist.version) if dist is not None else ("", "")
        try:
            load_plugin(spec, Origin("entry-point", spec, name, release))
        except PluginError as exc:
            provider = f"{name} {release}" if name else "an unknown distribution"
            warnings.warn(f"the installed plugin {ep.name!r} of {provider} is skipped: {exc} "
                          f"(uninstall or fix that distribution)", RuntimeWarning, stacklevel=3)


def load_plugins(specs: Iterable[str] = (), *, installed: bool = True) -> tuple[str, ...]:
    """Load the installed plugins (unless ``installed=False``), then each of ``specs``.

    Args:
        specs: plugin names, ``"module"`` or ``"module:function"``.
        installed: also load the entry points of the group ``nsrl.plugins``.

    Returns:
        Every plugin loaded in this process so far (what a worker process must load).

    Examples:
        >>> load_plugins(["json"], installed=False)[-1]
        'json'
    """
    if isinstance(specs, str):
        specs = (specs,)
    if installed:
        _load_installed()
    for spec in specs:
        load_plugin(spec)
    return loaded_plugins()


def loaded_plugins() -> tuple[str, ...]:
    """The plugins loaded in this process, in the order they were loaded."""
    return tuple(_loaded)


_installed_loaded = False
ready = False  # set by nsrl/__init__.py once nsrl is whole: plugins import nsrl


def ensure_installed() -> None:
    """Load the installed plugins once per process (the registries call this on a look-up).

    ``import nsrl`` does not scan entry points; the first look-up of a registered name after
    it does, so an installed plugin's names are known wherever a name is read, in any process.
    A look-up while nsrl itself is being imported sees the built-in names only.
    """
    global _installed_loaded
    if ready and not _installed_loaded:
        _installed_loaded = True  # first: a plugin that reads a registry must not recurse
        load_plugins(installed=True)


def look_up(table: Mapping[K, T], key: K) -> T | None:
    """``table[key]``, loading the installed plugins first if it is missing (None if still).

    Examples:
        >>> look_up({"a": 1}, "a"), look_up({"a": 1}, "b")
        (1, None)
    """
    entry = table.get(key)
    if entry is None:
        ensure_installed()
        entry = table.get(key)
    return entry
