"""Domains: families of problems by name, each one registration (:func:`register_domain`).

A domain is what a sweep runs on and what :func:`make_domain` builds: its instance axes (the
grid a sweep spans, e.g. Garnets' ``n_states``, ``n_actions`` and ``branching``), the builder
of its exact model (a :class:`~nsrl.FiniteMDP`, or none for a problem no model fits), its
declared options, its Gymnasium id, the feature maps it offers and its memory estimate. Three
are built in:

* ``garnet``: the paper's G(n_S, n_A, b, p), Phi drawn with p = ``n_features`` (n_S // 10 by
  default);
* ``gridworld`` and ``mountain-car``: structured families on one axis, ``n_states``, the number
  of grid cells asked for: the grid's side is ``round(sqrt(n_states))`` (100000 gives 316 x
  316 = 99 856 cells, fewer free ones for a grid world with obstacles). Their ``n_actions`` and
  ``branching`` are the family's own (4 and 4 for grid worlds, 3 and 3 for the mountain car):
  the axes declare them, so a sweep need not. Phi is ``feature_map`` of the states'
  coordinates with ``n_features`` features (default :data:`DEFAULT_FEATURES`). The mountain
  car has no random part: its MDPs are one model and only the runs' seeds differ.

A domain without an exact model (a simulator, Tetris) gives ``env`` instead of a builder, and
optionally ``estimate``, the Monte-Carlo score its sweeps record in place of the loss, with the
score's name and direction (``quality=("lines", "higher")``); ``make_domain`` then returns one
instance's env.

A family of your own is one file and one call (docs/guide/extending.md)::

    def chain(n_states, *, gamma, rng, n_features, slip):
        ...  # return a FiniteMDP with features (Phi)

    nsrl.register_domain("chain", chain, {"slip": param(float, 0.1, ge=0, le=1)},
                         axes=(Axis("n_states", "s", 3),), gym_id="Chain-v0")

after which ``nsrl.make_domain("chain", n_states=20, slip=0.2)`` builds one, a sweep with
``[domain] name = "chain"`` runs on it, and ``gym.make("Chain-v0", n_states=20)`` plays it.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from nsrl.model.garnet import default_features, garnet, garnet_nbytes
from nsrl.model.gridworld import gridworld, gridworld_nbytes
from nsrl.model.mdp import FiniteMDP
from nsrl.model.mountain_car import mountain_car, mountain_car_nbytes
from nsrl.model.structured import as_generator, with_features
from nsrl.params import Param, param
from nsrl.plugins import BUILT_IN, origin
from nsrl.registry import Entry, Registry, qualified

_ENTRY_POINT = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
DIRECTIONS = ("higher", "lower")  # a score's better side: what a sweep's report ranks by
DEFAULT_QUALITY = ("return", "higher")
FEATURE_MAPS = ("rbf", "tiles", "rff")  # nsrl.greedy.feature_maps.KINDS (tested equal)
DEFAULT_FEATURES = 100
INT32_MAX = 2**31 - 1  # axis values are stored as int32 columns


@dataclass(frozen=True)
class Axis:
    """One instance axis of a domain (a sweep gives a list of values for each).

    Attributes:
        name: the keyword, e.g. ``"n_states"`` (a sweep field, a builder argument, a column).
        code: its letter in shard names, e.g. ``"s"`` (``s050_a02_b01_m007``).
        width: digits of the value in shard names (zero-padded).
        default: the values a sweep takes when it gives none (None: it must give them); one
            instance (:func:`make_domain`) takes a default only from ``choices``.
        choices: the only values the family has (None: any int >= 1).
    """

    name: str
    code: str
    width: int = 3
    default: tuple[int, ...] | None = None
    choices: tuple[int, ...] | None = None


# With the paper's grid (section 5) as the values a sweep takes when it gives none.
GARNET_AXES = (Axis("n_states", "s", 3, (50, 100, 200)), Axis("n_actions", "a", 2, (2, 5, 10)),
               Axis("branching", "b", 2, (1, 2, 10)))


def _sparse_nbytes(n_states: int, n_actions: int = 1, branching: int = 1,
                   n_features: int | None = None) -> int:
    """A model stored as successor lists (12 bytes a successor), rewards and Phi."""
    p = n_features or max(1, n_states // 10)
    return 12 * n_states * n_actions * branching + 8 * n_states * (n_actions + p)


@dataclass(frozen=True)
class DomainEntry(Entry):
    """One registered domain (:class:`nsrl.registry.Entry`, plus what is its own).

    Attributes:
        factory: the model builder ``build(*instance, gamma, rng, n_features, **options) ->
            FiniteMDP`` (``instance``: the axes' values in order; ``rng`` the instance's
            Generator; ``n_features`` p, or None for the family's default); None for a domain
            without an exact model (then ``env`` builds it).
        axes: its instance axes (:class:`Axis`).
        gym_id: its Gymnasium id, if it has one.
        env: ``env(*instance, **options) -> gymnasium.Env`` for a domain without a model, or
            ``"module:attribute"`` naming it (imported on first use).
        estimate: for a domain without a model, ``estimate(env, games, seed) -> callable(policy)
            -> Score`` (:class:`nsrl.greedy.sampling.quality.Score`), or ``"module:attribute"``;
            None: ``MonteCarlo(env, games=games, seed=seed)``, the mean undiscounted return.
        quality: the estimate's ``(name, direction)``: what a score counts (``"return"``,
            ``"lines"``) and whether ``"higher"`` or ``"lower"`` is better.
        feature_maps: the feature maps it offers by name (its ``feature_map`` option).
        nbytes: ``nbytes(*instance, n_features) -> bytes`` of one model (checked against free
            memory before a sweep starts).
        exact_size: whether a model has exactly ``n_states`` states (False where the family
            rounds the size, as the grids do).
    """

    nbytes: Callable[..., int] | None = _sparse_nbytes
    axes: tuple[Axis, ...] = GARNET_AXES
    gym_id: str | None = None
    env: Callable[..., Any] | str | None = None
    feature_maps: tuple[str, ...] = ()
    exact_size: bool = True
    estimate: Callable[..., Any] | str | None = None
    quality: tuple[str, str] = DEFAULT_QUALITY

    kind = "domains"

    @property
    def has_model(self) -> bool:
        """Whether the domain has an exact model (the exact backend can judge its policies)."""
        return self.factory is not None

    @property
    def code(self) -> str:
        """The builder's ``module:qualname``; without a model, the env's (and estimate's)."""
        if self.factory is not None:
            return super().code
        code = qualified(self.env)
        return code if self.estimate is None else \
            f"{code}, estimate {qualified(self.estimate)}"

    def make_env(self, instance: Mapping[str, int], options: Mapping[str, object]) -> Any:
        """The env of ``instance`` (options already checked), for a domain without a model.

        Raises:
            TypeError: the domain has a model (build it), or no env factory.
        """
        if self.factory is not None or self.env is None:
            raise TypeError(f"the domain {self.name!r} has an exact model and no env "
                            f"factory; build its model with nsrl.make_domain({self.name!r}).")
        return _resolved(self.env)(*instance.values(), **options)

    def make_estimate(self, env: Any, games: int, seed: int) -> Callable[[Any], Any]:
        """The domain's estimate of a policy's quality on ``env``: ``games`` games from ``seed``."""
        if self.estimate is None:
            from nsrl.greedy.sampling.quality import MonteCarlo

            return MonteCarlo(env, games=games, seed=seed)
        return _resolved(self.estimate)(env, games, seed)

    @property
    def axis_names(self) -> tuple[str, ...]:
        """The names of its axes, in order."""
        return tuple(a.name for a in self.axes)

    @property
    def shape(self) -> tuple[int, int] | None:
        """``(n_actions, branching)`` when the family fixes both (the former field)."""
        fixed = {a.name: a.choices for a in self.axes if a.choices and len(a.choices) == 1}
        if "n_actions" in fixed and "branching" in fixed:
            return fixed["n_actions"][0], fixed["branching"][0]
        return None

    def instance(self, values: Mapping[str, object]) -> dict[str, int]:
        """The instance of ``values`` (axis -> int), defaults filled in, checked.

        Raises:
            ValueError: a missing, unknown or out-of-range axis (the message names it).
        """
        unknown = sorted(set(values) - set(self.axis_names))
        if unknown:
            raise ValueError(f"domain {self.name!r} has the axes {', '.join(self.axis_names)}, "
                             f"got {', '.join(unknown)}; drop or correct them.")
        out = {}
        for axis in self.axes:
            fixed = axis.choices[0] if axis.choices and len(axis.choices) == 1 else None
            value = values.get(axis.name, fixed)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
                    not 1 <= int(value) <= INT32_MAX:
                raise ValueError(f"domain {self.name!r}: {axis.name} should be an int in [1, "
                                 f"{INT32_MAX}], got {value!r}; e.g. {axis.name}=10.")
            if axis.choices is not None and int(value) not in axis.choices:
                raise ValueError(f"domain {self.name!r}: {axis.name} is "
                                 f"{' or '.join(map(str, axis.choices))} for this family, got "
                                 f"{value!r}; drop {axis.name} or set it so.")
            out[axis.name] = int(value)
        return out

    def build(self, instance: Mapping[str, int], *, gamma: float, rng: np.random.Generator,
              n_features: int | None, options: Mapping[str, object]) -> FiniteMDP:
        """The model of ``instance`` (options already checked), checked to be one.

        Raises:
            TypeError: the domain has no model, or its builder returned something else.
            ValueError: the model's size, actions or gamma are not the instance's.
        """
        if self.factory is None:
            raise TypeError(f"the domain {self.name!r} has no exact model; play it through "
                            f"its environment (nsrl.make_domain({self.name!r}, ...)).")
        mdp = self.resolve()(*instance.values(), gamma=gamma, rng=rng, n_features=n_features,
                             **options)
        self.check_model(mdp, instance, gamma)
        return mdp

    def check_model(self, mdp: object, instance: Mapping[str, int], gamma: float) -> None:
        """Refuse a builder's output that is not a model of ``instance`` at ``gamma``."""
        if not isinstance(mdp, FiniteMDP):
            raise TypeError(f"the domain {self.name!r} built a {type(mdp).__name__}; its "
                            f"builder should return an nsrl.FiniteMDP.")
        wrong = []
        if "n_actions" in instance and mdp.n_actions != instance["n_actions"]:
            wrong.append(f"{mdp.n_actions} actions for n_actions = {instance['n_actions']}")
        if self.exact_size and "n_states" in instance and mdp.n_states != instance["n_states"]:
            wrong.append(f"{mdp.n_states} states for n_states = {instance['n_states']}")
        if not math.isclose(mdp.gamma, gamma, rel_tol=0, abs_tol=1e-15):
            wrong.append(f"gamma {mdp.gamma} for the sweep's {gamma}")
        if wrong:
            raise ValueError(f"the domain {self.name!r} built a model with {'; '.join(wrong)}: "
                             f"its builder should honour the instance and gamma it is given.")

    def model_nbytes(self, instance: Mapping[str, int], n_features: int | None) -> int:
        """Estimated bytes of one model (0 for a domain without one)."""
        if self.factory is None or self.nbytes is None:
            return 0
        try:  # keyword where the estimate names it (a domain on other axes than Garnet's)
            takes = "n_features" in inspect.signature(self.nbytes).parameters
        except (TypeError, ValueError):
            takes = False
        if takes:
            return int(self.nbytes(*instance.values(), n_features=n_features))
        return int(self.nbytes(*instance.values(), n_features))


DOMAINS: Registry[DomainEntry] = Registry("domains", "nsrl.register_domain")


def _resolved(target: Callable[..., Any] | str) -> Callable[..., Any]:
    """``target``, imported first when it is an entry-point string ``"module:attribute"``."""
    if isinstance(target, str):
        import importlib

        module, _, attribute = target.partition(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
        return found
    return target



def register_domain(name: str, build: Callable[..., FiniteMDP] | None,
                    params: Mapping[str, Param] | None = None, *,
                    axes: tuple[Axis, ...] | None = None, shape: tuple[int, int] | None = None,
                    nbytes: Callable[..., int] | None = None, gym_id: str | None = None,
                    env: Callable[..., Any] | str | None = None,
                    feature_maps: tuple[str, ...] = (), exact_size: bool = True,
                    estimate: Callable[..., Any] | str | None = None,
                    quality: tuple[str, str] | None = None, summary: str = "",
                    replace: bool = False) -> DomainEntry:
    """Register the domain ``name`` (see :class:`DomainEntry`) for sweeps and make_domain.

    Args:
        name: lower-case, without spaces.
        build: the model builder, or None for a domain without a model (give ``env``).
        params: its options, name -> :func:`nsrl.params.param`.
        axes: its instance axes (default: Garnets' n_states, n_actions, branching).
        shape: ``(n_actions, branching)`` fixed by the family (the former spelling of axes
            whose only choice is that value).
        nbytes: bytes of one model, ``nbytes(*instance, n_features)``.
        gym_id: a Gymnasium id to register for it (its env wraps the model in
            ``nsrl.envs.FiniteMDPEnv``; ``gym.make(gym_id, **instance, seed=..., **options)``),
            unless that id is registered already.
        env: for a domain without a model, ``env(*instance, **options) -> gymnasium.Env``,
            or ``"module:attribute"`` naming it (imported on first use).
        feature_maps: the feature maps it offers by name.
        exact_size: whether its models have exactly ``n_states`` states.
        estimate: for a domain without a model, ``estimate(env, games, seed) -> callable(policy)
            -> Score`` or ``"module:attribute"`` (default: ``MonteCarlo(env, games=games,
            seed=seed)``).
        quality: for a domain without a model, ``(name, direction)`` of its estimate, e.g.
            ``("lines", "higher")`` (default ``("return", "higher")``).
        summary: one line for listings.
        replace: replace a domain already registered under ``name``.

    Examples:
        >>> import nsrl
        >>> def two(n_states, n_actions, branching, *, gamma, rng, n_features):
        ...     return nsrl.garnet(n_states, n_actions, 1, n_features, gamma, seed=rng)
        >>> register_domain("two", two).name
        'two'
        >>> DOMAINS.unregister("two")
    """
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"a domain name should be lower-case without spaces, got {name!r}.")
    if build is not None and not callable(build):
        raise TypeError(f"build should be callable (*instance, gamma, rng, n_features, "
                        f"**options) -> FiniteMDP, got {type(build).__name__}.")
    if build is None and env is None:
        raise TypeError(f"the domain {name!r} needs a model builder or an env factory (env=).")
    _check_simulator(name, build, env, estimate, quality)
    axes = _axes(axes, shape)
    entry = DOMAINS.register(DomainEntry(
        name, build, dict(params or {}), summary, nbytes or _sparse_nbytes, axes=axes,
        gym_id=gym_id, env=env, feature_maps=tuple(feature_maps), exact_size=exact_size,
        estimate=estimate, quality=quality or DEFAULT_QUALITY), replace=replace)
    if gym_id is not None and build is not None and not entry.builtin:
        _register_gym_id(entry)  # the built-in ids are nsrl.envs.registration's
    return entry


def _check_simulator(name: str, build: object, env: object, estimate: object,
                     quality: object) -> None:
    """Refuse an env, estimate or quality that cannot be used (one line naming the fix)."""
    if build is not None and (estimate is not None or quality is not None):
        raise TypeError(f"the domain {name!r} has a model, whose exact loss judges its "
                        f"policies: drop estimate= and quality= (they are for a domain "
                        f"without one, build=None).")
    for what, target in (("env", env), ("estimate", estimate)):
        if isinstance(target, str) and not _ENTRY_POINT.fullmatch(target):
            raise ValueError(f"{what} should be a callable or \"module:attribute\", got "
                             f"{target!r}; e.g. {what}=\"my_package.envs:make\".")
        if target is not None and not isinstance(target, str) and not callable(target):
            raise TypeError(f"{what} should be a callable or \"module:attribute\", got "
                            f"{type(target).__name__}.")
    if quality is not None and not (
            isinstance(quality, tuple) and len(quality) == 2 and isinstance(quality[0], str)
            and quality[0].strip() and quality[1] in DIRECTIONS):
        raise ValueError(f"quality should be (name, \"higher\" or \"lower\"), got "
                         f"{quality!r}; e.g. quality=(\"lines\", \"higher\").")


def _axes(axes: tuple[Axis, ...] | None, shape: tuple[int, int] | None) -> tuple[Axis, ...]:
    if axes is not None and shape is not None:
        raise ValueError("give axes or shape, not both (shape fixes n_actions and branching).")
    if shape is None:
        return tuple(axes) if axes is not None else GARNET_AXES
    a, b = int(shape[0]), int(shape[1])
    return (Axis("n_states", "s", 3), Axis("n_actions", "a", 2, (a,), (a,)),
            Axis("branching", "b", 2, (b,), (b,)))


def _register_gym_id(entry: DomainEntry) -> None:
    import functools

    import gymnasium as gym

    if entry.gym_id is not None and entry.gym_id not in gym.registry:
        gym.register(id=entry.gym_id, entry_point=functools.partial(domain_env, entry.name),
                     max_episode_steps=1000)


def domain_env(name: str, *, seed: int = 0, gamma: float = 0.99, n_features: int | None = None,
               render_mode: str | None = None, **kwargs: Any) -> Any:
    """The Gymnasium env of one model of the domain ``name`` (what its Gym id makes)."""
    from nsrl.envs import FiniteMDPEnv

    return FiniteMDPEnv(make_domain(name, seed=seed, gamma=gamma, n_features=n_features,
                                    **kwargs), render_mode=render_mode)


def domain_names() -> tuple[str, ...]:
    """Every registered domain name (read live: plugins included)."""
    return DOMAINS.names()


def domain_entry(name: str) -> DomainEntry:
    """The entry of ``name``, or ValueError naming the registered ones and how to add one."""
    return DOMAINS.lookup(name)


def make_domain(name: str, *, seed: int | np.random.Generator = 0, gamma: float = 0.99,
                n_features: int | None = None, **kwargs: Any) -> Any:
    """One instance of the domain ``name``: its model, or its env when it has no model.

    For a domain without a model (``register_domain(name, None, env=...)``) this is the one
    public way to build an instance's env: ``env(*instance, **options)``; ``seed``, ``gamma``
    and ``n_features`` are then unused (an env draws its randomness at ``reset(seed=...)``).

    Args:
        name: a registered domain (``nsrl.registered("domains")``).
        seed: the instance seed (an int or a Generator): what a sweep derives per MDP.
        gamma: the discount.
        n_features: p, the number of features (None: the family's default).
        **kwargs: the instance's axes (e.g. ``n_states=100``; an axis the family fixes may be
            left out) and the domain's options.

    Raises:
        ValueError: an unknown domain, axis or option, or a bad value (the message names it).

    Examples:
        >>> make_domain("garnet", n_states=20, n_actions=2, branching=2, seed=0).n_states
        20
        >>> make_domain("gridworld", n_states=100, feature_map="rbf", n_features=9).n_actions
        4
    """
    entry = domain_entry(name)
    axes = {k: v for k, v in kwargs.items() if k in entry.axis_names}
    instance = entry.instance(axes)
    options = entry.check({k: v for k, v in kwargs.items() if k not in axes})
    if entry.factory is None:
        return entry.make_env(instance, options)
    return entry.build(instance, gamma=gamma, rng=as_generator(seed), n_features=n_features,
                       options=options)


def side(n_states: int) -> int:
    """The grid's side for ``n_states`` cells asked for: round(sqrt(n_states)), at least 2."""
    return max(2, round(math.sqrt(n_states)))


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


def _structured_nbytes(kind: str) -> Callable[..., int]:
    def nbytes(n_states: int, n_actions: int, branching: int, n_features: int | None) -> int:
        n = side(n_states)
        model = gridworld_nbytes(n) if kind == "gridworld" else mountain_car_nbytes(n, n)
        return model + 3 * 8 * n * n * (n_features or DEFAULT_FEATURES)

    return nbytes


_FEATURE_MAP = {"feature_map": param(str, "rbf", choices=FEATURE_MAPS)}
with origin(BUILT_IN):
    register_domain("garnet", _garnet, nbytes=_garnet_nbytes, gym_id="Garnet-v0",
                    summary="the paper's Garnets G(n_S, n_A, b, p)")
    register_domain("gridworld", _structured("gridworld"), _FEATURE_MAP, shape=(4, 4),
                    nbytes=_structured_nbytes("gridworld"), gym_id="GridWorld-v0",
                    feature_maps=FEATURE_MAPS, exact_size=False,
                    summary="grid worlds with obstacles and a smooth reward map")
    register_domain("mountain-car", _structured("mountain-car"), _FEATURE_MAP, shape=(3, 3),
                    nbytes=_structured_nbytes("mountain-car"), gym_id="MountainCarGrid-v0",
                    feature_maps=FEATURE_MAPS, exact_size=False,
                    summary="the mountain car on a position x velocity grid")
    # Tetris (docs/tetris.md): no model; its env and its score, lines per game, by name, so
    # that listing the domains compiles no Tetris kernel.
    register_domain("tetris", None, {"overflow": param(str, "end", choices=("end",
                                                                             "clear-first"))},
                    axes=(Axis("width", "w", 2, (10,)), Axis("height", "h", 2, (10,))),
                    env="nsrl.envs.tetris:TetrisEnv", estimate="nsrl.greedy.tetris:TetrisScore",
                    quality=("lines", "higher"), nbytes=None,
                    summary="Tetris with MdpTetris's rules (no model; scored by lines per game)")
DOMAINS.seal()
