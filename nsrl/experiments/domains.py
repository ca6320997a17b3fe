"""The domains a sweep runs on: MDP families by name, and :func:`register_domain` for yours.

A domain is a family of finite MDPs: a builder with declared, checked options. A sweep names
one (``domain = "garnet"``, the default and the paper's) and draws MDP i of instance
(n_S, n_A, b) from the sweep's derived instance seed. Three are built in:

* ``garnet``: the paper's G(n_S, n_A, b, p), Phi drawn with p = ``n_features`` (n_S // 10 by
  default);
* ``gridworld`` and ``mountain-car``: structured families. ``n_states`` is the number of grid
  cells asked for, the grid's side is ``round(sqrt(n_states))`` (100000 gives 316 x 316 =
  99 856 cells, fewer free ones for a grid world with obstacles); ``n_actions`` and
  ``branching`` are the family's own (4 and 4 for grid worlds, 3 and 3 for the mountain car)
  and must be given as such. Phi is the sweep's ``feature_map`` of the states' coordinates
  with ``n_features`` features (default :data:`DEFAULT_FEATURES`): every operator of the
  sweep (projected, LSTD-Q and rollouts on ``"phi"``) uses it. The mountain car has no
  random part: its MDPs are one model and only the runs' seeds differ.

A domain of your own (e.g. in a plugin, :mod:`nsrl.plugins`)::

    def chain(n_states, n_actions, branching, *, gamma, rng, n_features, slip):
        ...  # return a FiniteMDP with features (Phi) of n_features columns or a default

    register_domain("chain", chain, {"slip": param(float, 0.1, ge=0, le=1)})

and a sweep with ``domain = "chain"`` and ``domain_options = {slip = 0.2}`` runs on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from nsrl.model.garnet import default_features, garnet, garnet_nbytes
from nsrl.model.gridworld import gridworld, gridworld_nbytes
from nsrl.model.mdp import FiniteMDP
from nsrl.model.mountain_car import mountain_car, mountain_car_nbytes
from nsrl.model.structured import with_features
from nsrl.params import check_params, param

if TYPE_CHECKING:
    from nsrl.experiments.presets import Shard, Sweep
from nsrl.plugins import ensure_installed, look_up

FEATURE_MAPS = ("rbf", "tiles", "rff")  # nsrl.greedy.feature_maps.KINDS (tested equal)
DEFAULT_FEATURES = 100


def _sparse_nbytes(n_states: int, n_actions: int, branching: int,
                   n_features: int | None) -> int:
    """A model stored as successor lists (12 bytes a successor), rewards and Phi."""
    p = n_features or max(1, n_states // 10)
    return 12 * n_states * n_actions * branching + 8 * n_states * (n_actions + p)


@dataclass(frozen=True)
class DomainEntry:
    """One registered MDP family.

    Attributes:
        name: the name a sweep's ``domain`` field takes, e.g. ``"gridworld"``.
        build: ``build(n_states, n_actions, branching, *, gamma, rng, n_features, **options)
            -> FiniteMDP``; ``rng`` is the MDP's instance Generator, ``n_features`` the
            sweep's p (None: the family's default), ``options`` its declared options.
        params: the options it takes, name -> :class:`nsrl.params.Param` (checked).
        shape: ``(n_actions, branching)`` when the family fixes them (a sweep must give
            exactly these), None when any instance grid is allowed.
        nbytes: ``nbytes(n_states, n_actions, branching, n_features) -> bytes`` of one model
            (checked against free memory before a sweep starts); default: successor lists.
        summary: one line for ``--help`` and error messages.
    """

    name: str
    build: Callable[..., FiniteMDP]
    params: dict = field(default_factory=dict)
    shape: tuple[int, int] | None = None
    nbytes: Callable[[int, int, int, int | None], int] = _sparse_nbytes
    summary: str = ""

    def check(self, options: dict) -> dict:
        """Every option, given or default, checked against :attr:`params` (unknown: refused)."""
        return check_params(self.params, dict(options), f"domain {self.name!r}")


DOMAINS: dict[str, DomainEntry] = {}


def register_domain(name: str, build: Callable[..., FiniteMDP], params: dict | None = None, *,
                    shape: tuple[int, int] | None = None,
                    nbytes: Callable[[int, int, int, int | None], int] | None = None,
                    summary: str = "") -> DomainEntry:
    """Register the MDP family ``name`` (see :class:`DomainEntry`) for sweeps to name.

    Examples:
        >>> import nsrl
        >>> def two(n_states, n_actions, branching, *, gamma, rng, n_features):
        ...     return nsrl.garnet(n_states, n_actions, 1, n_features, gamma, seed=rng)
        >>> register_domain("two", two).name
        'two'
        >>> del DOMAINS["two"]
    """
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"a domain name should be lower-case without spaces, got {name!r}.")
    if not callable(build):
        raise TypeError(f"build should be callable (n_states, n_actions, branching, *, gamma, "
                        f"rng, n_features, **options) -> FiniteMDP, got {type(build).__name__}.")
    fixed = None if shape is None else (int(shape[0]), int(shape[1]))
    entry = DomainEntry(name, build, dict(params or {}), fixed, nbytes or _sparse_nbytes, summary)
    DOMAINS[name] = entry
    return entry


def domain_names() -> tuple[str, ...]:
    """Every registered domain name (read live: plugins included)."""
    ensure_installed()
    return tuple(DOMAINS)


def domain_entry(name: str) -> DomainEntry:
    """The entry of ``name``, or ValueError naming the registered ones."""
    entry = look_up(DOMAINS, str(name).strip().lower())
    if entry is None:
        raise ValueError(f"unknown domain {name!r}; expected one of {', '.join(DOMAINS)} "
                         f"(register yours with nsrl.register_domain, e.g. in a plugin).")
    return entry


def side(n_states: int) -> int:
    """The grid's side for ``n_states`` cells asked for: round(sqrt(n_states)), at least 2."""
    return max(2, round(math.sqrt(n_states)))


def check_instances(domain: str, n_actions: tuple, branching: tuple) -> None:
    """Refuse an instance grid that is not the family's own (n_A, b)."""
    shape = domain_entry(domain).shape
    if shape is None:
        return
    a, b = shape
    if tuple(n_actions) != (a,) or tuple(branching) != (b,):
        raise ValueError(f"sweep field 'domain': {domain} models have n_actions = {a} and "
                         f"branching = {b}; set n_actions = [{a}] and branching = [{b}] (the "
                         f"size is n_states), got {list(n_actions)} and {list(branching)}.")


def domain_options(sweep: Sweep) -> dict:
    """The options ``sweep`` passes to its domain's builder (checked; unknown refused)."""
    entry = domain_entry(sweep.domain)
    given = dict(sweep.domain_options)
    if "feature_map" in entry.params:  # the structured families read the sweep's field
        given.setdefault("feature_map", sweep.feature_map)
    return entry.check(given)


def build_mdp(sweep: Sweep, shard: Shard) -> FiniteMDP:
    """The MDP of ``shard`` (its instance seed derived by the sweep), with its features."""
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    entry = domain_entry(sweep.domain)
    mdp = entry.build(shard.n_states, shard.n_actions, shard.branching, gamma=sweep.gamma,
                      rng=rng, n_features=sweep.features_of(shard.n_states),
                      **domain_options(sweep))
    if not isinstance(mdp, FiniteMDP):
        raise TypeError(f"the domain {sweep.domain!r} built a {type(mdp).__name__}; its "
                        f"builder should return an nsrl.FiniteMDP.")
    return mdp


def model_nbytes(sweep: Sweep, shard: Shard) -> int:
    """Estimated peak bytes of :func:`build_mdp` (the model and Phi)."""
    p = sweep.features_of(shard.n_states)
    return int(domain_entry(sweep.domain).nbytes(shard.n_states, shard.n_actions,
                                                 shard.branching, p))


# --- the built-in families -----------------------------------------------------------------

def _garnet(n_states: int, n_actions: int, branching: int, *, gamma: float,
            rng: np.random.Generator, n_features: int | None) -> FiniteMDP:
    return garnet(n_states, n_actions, branching, n_features, gamma, seed=rng)


def _garnet_nbytes(n_states: int, n_actions: int, branching: int,
                   n_features: int | None) -> int:
    return garnet_nbytes(n_states, n_actions, n_features or default_features(n_states),
                         max(branching, 1))


def _structured(kind: str) -> Callable[..., FiniteMDP]:
    def build(n_states: int, n_actions: int, branching: int, *, gamma: float,
              rng: np.random.Generator, n_features: int | None, feature_map: str) -> FiniteMDP:
        from nsrl.greedy.feature_maps import coordinate_features

        n = side(n_states)
        base = gridworld(n, gamma=gamma, seed=rng) if kind == "gridworld" else \
            mountain_car(n, n, gamma=gamma)
        assert base.features is not None  # a grid's coordinates
        return with_features(base, coordinate_features(base.features, feature_map,
                                                       n_features or DEFAULT_FEATURES))

    return build


def _structured_nbytes(kind: str) -> Callable[[int, int, int, int | None], int]:
    def nbytes(n_states: int, n_actions: int, branching: int, n_features: int | None) -> int:
        n = side(n_states)
        model = gridworld_nbytes(n) if kind == "gridworld" else mountain_car_nbytes(n, n)
        return model + 3 * 8 * n * n * (n_features or DEFAULT_FEATURES)

    return nbytes


_FEATURE_MAP = {"feature_map": param(str, "rbf", choices=FEATURE_MAPS)}
register_domain("garnet", _garnet, nbytes=_garnet_nbytes,
                summary="the paper's Garnets G(n_S, n_A, b, p)")
register_domain("gridworld", _structured("gridworld"), _FEATURE_MAP, shape=(4, 4),
                nbytes=_structured_nbytes("gridworld"),
                summary="grid worlds with obstacles and a smooth reward map")
register_domain("mountain-car", _structured("mountain-car"), _FEATURE_MAP, shape=(3, 3),
                nbytes=_structured_nbytes("mountain-car"),
                summary="the mountain car on a position x velocity grid")
BUILTIN = frozenset(DOMAINS)  # what a fresh worker process has without any plugin
