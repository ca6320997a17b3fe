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

import importlib
import re
from collections.abc import Hashable, Iterable, Mapping
from importlib.metadata import entry_points
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

ENTRY_POINT_GROUP = "nsrl.plugins"
_SPEC = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")
_loaded: dict[str, None] = {}  # an ordered set of the specs loaded in this process


class PluginError(ValueError):
    """A plugin that cannot be found or fails while it registers (the message names it)."""


def _check_spec(spec: object) -> str:
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise PluginError(f"a plugin should be named as an importable module, 'module' or "
                          f"'module:function', got {spec!r}; e.g. --plugin my_package.plugin.")
    return spec.strip()


def load_plugin(spec: str) -> None:
    """Import the plugin ``spec`` (``"module"`` or ``"module:function"``) once in this process.

    Raises:
        PluginError: the module cannot be imported, the function is missing, or either one
            raises while registering (the message names the plugin and the cause).
    """
    spec = _check_spec(spec)
    if spec in _loaded:
        return
    module_name, _, function = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise PluginError(f"cannot import the plugin module {module_name!r} (no module "
                              f"named {exc.name!r}); install it or put its folder on "
                              f"PYTHONPATH.") from None
        raise PluginError(f"the plugin {spec!r} failed on import: {exc}") from exc
    except Exception as exc:
        raise PluginError(f"the plugin {spec!r} failed on import: "
                          f"{type(exc).__name__}: {exc}") from exc
    if function:
        hook = getattr(module, function, None)
        if not callable(hook):
            raise PluginError(f"the plugin module {module_name!r} has no function "
                              f"{function!r}; correct the name after the colon.")
        try:
            hook()
        except Exception as exc:
            raise PluginError(f"the plugin {spec!r} failed while registering: "
                              f"{type(exc).__name__}: {exc}") from exc
    _loaded[spec] = None


def installed_plugins() -> tuple[str, ...]:
    """The plugins installed packages declare in the entry-point group ``nsrl.plugins``."""
    return tuple(ep.value.replace(" ", "") for ep in entry_points(group=ENTRY_POINT_GROUP))


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
    for spec in (*(installed_plugins() if installed else ()), *specs):
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
