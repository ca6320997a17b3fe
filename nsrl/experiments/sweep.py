"""Sweeps as data: a domain, a grid, the schemes and an operator as ``(name, options)`` specs.

A :class:`Sweep` is the whole protocol of an experiment (Scherrer 2014, section 5, by
default): the domain and the grid of its instances (Garnets' n_S, n_A, b), how many MDPs per
instance, runs per MDP and scheme, iterations, the schemes, the greedy operator, gamma and one
master seed. Every component is a :class:`Spec`, a registered name and its options, checked
once against the component's declaration when the sweep is built (a plugin's component
included), never again in the same process. In TOML::

    name = "mine"
    n_states = [50, 100]            # the grid: one list per axis of the domain
    n_actions = [2]
    branching = [1, 2]
    n_mdps = 4
    n_runs = 8
    schemes = ["api", "psdp", {name = "cpi+", options = {line_search = "doubling"}}]
    scheme_options = {advantage = "exact"}    # for every scheme that takes it

    [operator]
    name = "lstdq"
    options = {budget = 20000, ridge = 1.0}

    [domain]
    name = "garnet"

A domain without a model (a simulator) records a Monte-Carlo score instead of the loss; its
sweep may hold an ``[estimate]`` table (games per iteration, at the last, their seed:
:mod:`nsrl.experiments.quality`), refused on a domain with a model.

Seeds are derived (:mod:`nsrl.experiments.seeds`); the flat form of earlier releases is read
for one more release and keeps its fingerprints (:mod:`nsrl.experiments.compat`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nsrl.domains import INT32_MAX, DomainEntry, domain_entry
from nsrl.engine import ENGINE_NAMES, OperatorSpec
from nsrl.exact.operators import GAMMA_MAX
from nsrl.experiments import compat, seeds
from nsrl.experiments.quality import Estimate, Quality, quality_of
from nsrl.experiments.shards import MAX_SHARDS, Shard
from nsrl.greedy.registry import OperatorEntry, operator_entry
from nsrl.model.mdp import FiniteMDP
from nsrl.params import InvalidParameterError, Param, param
from nsrl.schemes import PAPER_SCHEMES
from nsrl.schemes.base import Scheme
from nsrl.schemes.registry import SchemeEntry, canonical_name, entry_of, scheme_argument


@dataclass(frozen=True)
class Spec:
    """A registered component by name, with the options given to it.

    Attributes:
        name: the registered name (a scheme's canonical name once in a sweep).
        options: the options given (checked, canonical values; defaults are not stored).
    """

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, value: object, what: str) -> Spec:
        """``value`` as a Spec: a name, ``{name = ..., options = {...}}`` or a Spec."""
        if isinstance(value, Spec):
            return value
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, Mapping) and set(value) <= {"name", "options"} and \
                isinstance(value.get("name"), str) and \
                isinstance(value.get("options", {}), Mapping):
            return cls(value["name"], dict(value.get("options", {})))
        raise InvalidParameterError(f"sweep field {what!r} should be a name or a table {{name = "
                                    f"\"...\", options = {{...}}}}, got {value!r}.")

    def __str__(self) -> str:
        return self.name

    def to_dict(self) -> dict:
        """``{"name": ..., "options": {...}}`` (lists for tuples: JSON and TOML alike)."""
        return {"name": self.name, "options": {k: list(v) if isinstance(v, tuple) else v
                                               for k, v in self.options.items()}}


# The sweep's own settings: their types and ranges, declared once.
_SETTINGS: dict[str, Param] = {
    "name": param(str, "paper"),
    "n_mdps": param(int, 30, ge=1),
    "n_runs": param(int, 30, ge=1),
    "n_iterations": param(int, 100, ge=1),
    "gamma": param(float, 0.99, gt=0, le=GAMMA_MAX),  # accurate exact solves
    "seed": param(int, 2014, ge=0),
    "engine": param(str, "auto", choices=ENGINE_NAMES),
    "n_features": param(int | None, None, ge=1),  # None: the domain's default (n_S // 10)
    # p as a fraction of each Garnet instance's n_S: p = max(1, round(f n_S)).
    "feature_fraction": param(float | None, None, gt=0, le=1),
    # transitions per (state, action) pair of a sample-based operator's call, from which its
    # budget is derived when its options give none: samples_per_pair x n_S x n_A.
    "samples_per_pair": param(int, 10, ge=1),
}
_AXIS = param(tuple[int, ...], (1,), ge=1, le=INT32_MAX, distinct=True)


@dataclass(frozen=True, init=False)
class Sweep:
    """A sweep (module docstring): built from specs or from the flat form, checked once.

    Args:
        name: its name (not in the fingerprint).
        domain: the domain's spec (default ``"garnet"``).
        grid: axis -> values; the domain's axes may also be given as keywords
            (``n_states=(50, 100)``); an axis the domain fixes may be left out.
        n_mdps: instances per grid point; ``n_runs``, ``n_iterations``, ``gamma``, ``seed``,
            ``engine``, ``n_features``, ``feature_fraction`` and ``samples_per_pair`` are
            the sweep's other settings (:data:`_SETTINGS`).
        schemes: names or specs.
        operator: the greedy operator's spec.
        scheme_options: options given to every scheme that declares them (a scheme's own
            spec wins).
        estimate: on a domain without a model, the ``[estimate]`` table (games, final_games,
            seed: :class:`~nsrl.experiments.quality.Estimate`; defaults if None); refused on a
            domain with one.
        carried: flat keys of earlier releases that no component takes, kept in the
            fingerprint (see Attributes); read without a warning.
        **flat: the domain's axes, or the flat keys of earlier releases (deprecated,
            :mod:`nsrl.experiments.compat`).

    Attributes:
        carried: flat keys of earlier releases that no component takes (e.g. a ``budget`` in a
            sweep of the projected operator): nothing runs differently, but they stay in the
            fingerprint, as they always were.

    Raises:
        ValueError: any field, option or combination that cannot run (one line naming it).
    """

    name: str
    domain: Spec
    grid: tuple[tuple[str, tuple[int, ...]], ...]
    n_mdps: int
    n_runs: int
    n_iterations: int
    schemes: tuple[Spec, ...]
    operator: Spec
    gamma: float
    seed: int
    engine: str
    n_features: int | None
    feature_fraction: float | None
    samples_per_pair: int
    carried: Mapping[str, Any]
    estimate: Estimate | None

    def __init__(self, name: str = "paper", *, domain: object = "garnet",
                 grid: Mapping[str, Any] | Iterable | None = None, n_mdps: int = 30,
                 n_runs: int = 30, n_iterations: int = 100,
                 schemes: Iterable[object] = PAPER_SCHEMES, operator: object = "projected",
                 scheme_options: Mapping[str, Any] | None = None, gamma: float = 0.99,
                 seed: int = 2014, engine: str = "auto", n_features: int | None = None,
                 feature_fraction: float | None = None, samples_per_pair: int = 10,
                 carried: Mapping[str, Any] | None = None, estimate: object = None,
                 _record: bool = False, **flat: Any) -> None:
        settings = dict(name=name, n_mdps=n_mdps, n_runs=n_runs, n_iterations=n_iterations,
                        gamma=gamma, seed=seed, engine=engine, n_features=n_features,
                        feature_fraction=feature_fraction, samples_per_pair=samples_per_pair)
        for key, value in settings.items():
            object.__setattr__(self, key, _SETTINGS[key].check(value, f"sweep field {key!r}",
                                                               key))
        dom = Spec.of(domain, "domain")
        entry = _entry("domain", domain_entry, dom.name)
        axes = {k: flat.pop(k) for k in list(flat) if k in entry.axis_names}
        rest, legacy = compat.split_flat(flat, record=_record)
        if carried is not None and not isinstance(carried, Mapping):
            raise InvalidParameterError(f"sweep field 'carried' should be a table of flat keys of "
                                        f"earlier releases, got {carried!r}.")
        legacy = {**dict(carried or {}), **legacy}
        unknown = sorted(rest)
        if unknown:
            raise ValueError(f"unknown sweep keys {unknown}; expected the settings "
                             f"{sorted(_SETTINGS)}, the domain's axes {list(entry.axis_names)},"
                             f" or domain, operator, schemes, scheme_options, grid.")
        op = Spec.of(operator, "operator").to_dict()
        if _record and isinstance(operator, str):  # a manifest of an earlier release
            op["options"] = compat.legacy_options(op["name"])
        dom_dict = dom.to_dict()
        shared = dict(scheme_options or {})
        scheme_specs = [Spec.of(s, "schemes") for s in _items(schemes, "schemes")]
        declared = {k for s in scheme_specs for k in _entry("schemes", entry_of, s.name).params}
        carried = compat.apply_flat(legacy, op, dom_dict, shared, declared)
        object.__setattr__(self, "carried", carried)
        object.__setattr__(self, "domain", self._check_domain(entry, dom_dict))
        object.__setattr__(self, "estimate", self._check_estimate(entry, estimate))
        if isinstance(grid, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in grid):
            grid = dict(grid)  # the field's own form (dataclasses.replace passes it back)
        if grid is not None and not isinstance(grid, Mapping):
            raise InvalidParameterError(f"sweep field 'grid' should be a table of axis = [values], "
                                        f"got {grid!r}; e.g. grid = {{n_states = [50]}}.")
        object.__setattr__(self, "grid", self._check_grid(entry, {**dict(grid or {}), **axes}))
        object.__setattr__(self, "operator", self._check_operator(op))
        object.__setattr__(self, "schemes", self._check_schemes(scheme_specs, shared))
        self._check_sizes()

    # --- the checks (each runs once, when the sweep is built) ---------------------------------
    def _check_domain(self, entry: DomainEntry, spec: dict) -> Spec:
        checked = entry.check(spec["options"])
        object.__setattr__(self, "_domain_options", checked)
        object.__setattr__(self, "_domain_entry", entry)
        return Spec(entry.name, _given(checked, spec["options"], _defaults(entry.params)))

    @staticmethod
    def _check_estimate(entry: DomainEntry, given: object) -> Estimate | None:
        estimate = Estimate.of(given)  # its form first: a table of games, final_games, seed
        if entry.has_model:
            if given is not None:
                raise ValueError(f"sweep field 'estimate': the {entry.name} domain has an exact "
                                 f"model, whose loss needs no estimate; drop the [estimate] "
                                 f"table.")
            return None
        return estimate

    def _check_grid(self, entry: DomainEntry, given: Mapping[str, Any]) -> tuple:
        unknown = sorted(set(given) - set(entry.axis_names))
        if unknown:
            raise ValueError(f"sweep field(s) {unknown}: the {entry.name} domain's axes are "
                             f"{', '.join(entry.axis_names)}; drop or correct them.")
        grid = []
        for axis in entry.axes:
            values = given.get(axis.name, axis.default)
            if values is None:
                raise ValueError(f"sweep field {axis.name!r} is missing: the {entry.name} "
                                 f"domain needs a list of its values, e.g. {axis.name} = [10].")
            values = _AXIS.check(values, f"sweep field {axis.name!r}", axis.name)
            bad = [v for v in values if axis.choices is not None and v not in axis.choices]
            if bad:
                raise ValueError(f"sweep field {axis.name!r}: {entry.name} models have "
                                 f"{axis.name} = {list(axis.choices or ())}; set {axis.name} = "
                                 f"{list(axis.choices or ())} or leave it out, got {list(values)}.")
            grid.append((axis.name, values))
        return tuple(grid)

    def _check_operator(self, spec: dict) -> Spec:
        entry: OperatorEntry = _entry("operator", operator_entry, spec["name"])
        given = dict(spec["options"])
        if given.get("budget", 0) is None:  # None: derived per shard (samples_per_pair)
            del given["budget"]
        if self._domain_entry.has_model:
            passed = self._sweep_defaults(entry)
        else:  # an env has no Phi nor n_S x n_A to derive a budget from, nor a discount
            passed = {"gamma": self.gamma} if "gamma" in entry.params else {}
        checked = entry.check({**passed, **given})
        object.__setattr__(self, "_operator_entry", entry)
        object.__setattr__(self, "_operator_options", checked)
        defaults = {k: v for k, v in _defaults(entry.params, **passed).items()
                    if k != "budget"}  # a budget given is the budget, whatever it is
        return Spec(entry.name, _given(checked, given, defaults))

    @staticmethod
    def _sweep_defaults(entry: OperatorEntry) -> dict:
        """What a sweep passes an operator it gives no value: Phi as features, a budget."""
        return {k: v for k, v in (("features", "phi"), ("budget", 1)) if k in entry.params}

    def _check_schemes(self, specs: list[Spec], shared: Mapping[str, Any]) -> tuple:
        if not specs:
            raise ValueError("sweep field 'schemes' should name at least one scheme, got [].")
        entries = [_entry("schemes", entry_of, s.name) for s in specs]
        unused = [k for k in shared if not any(k in e.params for e in entries)]
        if unused:
            raise ValueError(f"sweep field 'scheme_options': {', '.join(map(repr, unused))} is "
                             f"taken by none of the schemes {[s.name for s in specs]}; drop it.")
        out, made = [], {}
        for spec, entry in zip(specs, entries, strict=True):
            options = {**{k: v for k, v in shared.items() if k in entry.params}, **spec.options}
            argument = scheme_argument(entry, spec.name)
            checked = entry.check({**argument, **options})
            name = canonical_name(spec.name)
            out.append(Spec(name, _given(checked, options, _defaults(entry.params))))
            made[name] = (entry, checked)
        if len(made) != len(out):
            raise ValueError(f"sweep field 'schemes' should name distinct schemes, got "
                             f"{[s.name for s in specs]}.")
        object.__setattr__(self, "_scheme_entries", made)
        return tuple(out)

    def _check_sizes(self) -> None:
        if "n_states" in self.axis_names and "branching" in self.axis_names:
            for s, b in ((s, b) for s in self.axis("n_states") for b in self.axis("branching")):
                if not 1 <= b <= s:
                    raise ValueError(f"sweep field 'branching': {b} should be in [1, "
                                     f"n_states={s}].")
        n_shards = int(np.prod([len(v) for _, v in self.grid])) * self.n_mdps
        if n_shards > MAX_SHARDS:
            raise ValueError(f"the sweep has {n_shards:,} shards (instances x n_mdps), more than "
                             f"{MAX_SHARDS:,}; lower n_mdps or the grid.")
        states = self.axis("n_states") if "n_states" in self.axis_names else ()
        if self.n_features is not None and states and self.n_features > min(states):
            raise ValueError(f"sweep field 'n_features': {self.n_features} is more than n_states "
                             f"= {min(states)} (Phi has rank <= n_S: more features add nothing "
                             f"but memory); e.g. n_features = {min(states)}.")
        if self.feature_fraction is not None and (self.n_features is not None
                                                  or self.domain.name != "garnet"):
            raise ValueError(
                f"sweep field 'feature_fraction': {self.feature_fraction} sets p per Garnet "
                f"instance, so it excludes n_features (got {self.n_features}) and applies to "
                f"the garnet domain only (got {self.domain.name!r}); set one of them.")
        if self.sampled and self.domain_entry.has_model and \
                "budget" not in self.operator.options and not (
                {"n_states", "n_actions"} <= set(self.axis_names)):
            raise ValueError(f"the {self.operator.name} operator's budget cannot be derived "
                             f"from samples_per_pair on the {self.domain.name} domain (no "
                             f"n_states and n_actions axes); give operator options {{budget "
                             f"= ...}}.")
        if not self.domain_entry.has_model:
            self._check_simulated()
        elif getattr(self.operator_entry, "env_id", None) is not None:
            raise ValueError(f"sweep field 'operator': {self.operator.name} is built on a "
                             f"{self.operator_entry.env_id} env, not on a model; choose a "
                             f"domain without a model that makes that env, or another operator.")

    def _check_simulated(self) -> None:
        """Refuse what needs a model on a domain without one (one line naming the fix)."""
        name = self.domain.name
        if self.engine == "batched":
            raise ValueError(f"sweep field 'engine': the batched engines run on a model, which "
                             f"the {name} domain has not; set engine = \"auto\" or "
                             f"\"reference\".")
        if self.n_features is not None:
            raise ValueError(f"sweep field 'n_features': the {name} domain has no model (its env "
                             f"makes its own observations); drop n_features.")
        exact = [s.name for s in self.schemes if self._scheme_entries[s.name][1].get(
            "advantage") == "exact"]
        if exact:
            raise ValueError(f"sweep field 'scheme_options': advantage = \"exact\" ("
                             f"{', '.join(exact)}) takes CPI's advantage from a model, which the "
                             f"{name} domain has not; drop it (the operator estimates it).")

    # --- reading ------------------------------------------------------------------------------
    @property
    def axis_names(self) -> tuple[str, ...]:
        """The domain's axes, in order."""
        return tuple(k for k, _ in self.grid)

    def axis(self, name: str) -> tuple[int, ...]:
        """The values of the axis ``name`` (KeyError if the domain has no such axis)."""
        return dict(self.grid)[name]

    @property
    def domain_entry(self) -> DomainEntry:
        """The domain's registry entry (as checked when the sweep was built)."""
        return self._domain_entry

    @property
    def domain_options(self) -> dict:
        """Every option of the domain, given or default (checked once)."""
        return dict(self._domain_options)

    @property
    def operator_entry(self) -> OperatorEntry:
        """The operator's registry entry (as checked when the sweep was built)."""
        return self._operator_entry

    @property
    def sampled(self) -> bool:
        """Whether the greedy steps are learned from samples (a budget per greedy call)."""
        return self.operator_entry.sample_based

    def shards(self) -> list[Shard]:
        """Every shard, MDP index first: a partial run covers every instance evenly."""
        axes = self.domain_entry.axes
        combos: list[tuple[int, ...]] = [()]
        for _, values in self.grid:
            combos = [(*c, v) for c in combos for v in values]
        return [Shard(*c, i, axes=axes) for i in range(self.n_mdps) for c in combos]

    def has_shard(self, shard: Shard) -> bool:
        """True if ``shard`` is one of :meth:`shards`."""
        grid = dict(self.grid)
        return (tuple(a.name for a in shard.axes) == self.axis_names
                and all(v in grid[k] for k, v in shard.instance.items())
                and 0 <= shard.mdp < self.n_mdps)

    def shard_of(self, name: str) -> Shard | None:
        """The shard of a file stem, or None if it names none of this sweep's."""
        shard = Shard.from_name(name, self.domain_entry.axes)
        return shard if shard is not None and self.has_shard(shard) else None

    @property
    def scheme_names(self) -> tuple[str, ...]:
        """The schemes' canonical names (what their shards' ``scheme`` column holds)."""
        return tuple(s.name for s in self.schemes)

    @property
    def scheme_iterations(self) -> int:
        """Total number of scheme iterations of the sweep."""
        return len(self.shards()) * self.n_runs * len(self.schemes) * self.n_iterations

    def scheme(self, name: str) -> Scheme:
        """A fresh scheme ``name`` (canonical) with its options, checked when the sweep was."""
        entry, options = self._scheme_entries[name]
        return entry.cls(**options)

    def scheme_entry(self, name: str) -> SchemeEntry:
        """The registry entry of the scheme ``name`` (canonical)."""
        return self._scheme_entries[name][0]

    def budget_for(self, shard: Shard) -> int:
        """Transitions per greedy call on ``shard``: the operator's budget, or derived."""
        budget = self.operator.options.get("budget", self.carried.get("budget"))
        if not self.domain_entry.has_model:  # the operator's own (nothing to derive it from)
            budget = self._operator_options.get("budget", 0)
        if budget is not None:
            return int(budget)
        return self.samples_per_pair * int(shard.n_states or 0) * int(shard.n_actions or 0)

    def operator_options(self, shard: Shard | None = None) -> dict:
        """Every option of the operator (checked once); with ``shard``, its budget there."""
        options = dict(self._operator_options)
        if "budget" in options and self.domain_entry.has_model:  # derived from n_S x n_A
            if shard is None and "budget" not in self.operator.options:
                options.pop("budget")
            elif shard is not None:
                options["budget"] = self.budget_for(shard)
        return options

    def operator_spec(self, shard: Shard) -> OperatorSpec:
        """The operator of ``shard`` (its budget there), not checked again."""
        return OperatorSpec.checked(self.operator_entry, self.operator_options(shard))

    def features_of(self, n_states: int | None) -> int | None:
        """p on an instance of ``n_states`` states (None: the domain's default, n_S // 10).

        Examples:
            >>> Sweep(feature_fraction=0.5).features_of(50), Sweep().features_of(50)
            (25, None)
        """
        if self.feature_fraction is not None and n_states is not None:
            return max(1, int(self.feature_fraction * n_states + 0.5))
        return self.n_features

    def model(self, shard: Shard) -> FiniteMDP:
        """The MDP of ``shard`` (its instance seed derived by the sweep), with its features."""
        rng = np.random.Generator(np.random.PCG64(self.mdp_seed(shard)))
        return self.domain_entry.build(shard.instance, gamma=self.gamma, rng=rng,
                                       n_features=self.features_of(shard.n_states),
                                       options=self.domain_options)

    def env(self, shard: Shard) -> Any:
        """A fresh env of ``shard``'s instance (a domain without a model)."""
        return self.domain_entry.make_env(shard.instance, self.domain_options)

    def problem(self, shard: Shard) -> Any:
        """What the operator of ``shard`` is built on: its model, or its env without one."""
        return self.model(shard) if self.domain_entry.has_model else self.env(shard)

    @property
    def quality(self) -> Quality:
        """What the shards hold: the exact loss, or a Monte-Carlo score (its name, direction)."""
        return quality_of(self)

    def games_seed(self, shard: Shard) -> int:
        """The first evaluation game's seed on ``shard`` (the same for its schemes and runs)."""
        assert self.estimate is not None, "a domain with a model plays no evaluation games"
        seed = self.seed if self.estimate.seed is None else self.estimate.seed
        return seeds.games_seed(seed, shard.values, shard.mdp)

    def model_nbytes(self, shard: Shard) -> int:
        """Estimated peak bytes of :meth:`model` (the model and Phi)."""
        return self.domain_entry.model_nbytes(shard.instance, self.features_of(shard.n_states))

    def mdp_seed(self, shard: Shard) -> np.random.SeedSequence:
        """The instance seed of ``shard``'s MDP."""
        return seeds.mdp_seed(self.seed, shard.values, shard.mdp)

    def run_rngs(self, shard: Shard, scheme: str) -> list[np.random.Generator]:
        """One Generator per run of ``scheme`` (canonical) on ``shard``'s MDP."""
        operator = self.operator.name if self.sampled else None
        return seeds.run_rngs(self.seed, shard.values, shard.mdp, scheme, self.n_runs,
                              operator)

    def components(self) -> dict:
        """The identity of each component that is not built in (what fingerprints record)."""
        from nsrl.domains import DOMAINS
        from nsrl.greedy.registry import OPERATORS
        from nsrl.schemes.registry import SCHEMES

        out: dict[str, Any] = {}
        if not OPERATORS.is_builtin(self.operator_entry):
            out["operator"] = self.operator_entry.identity()
        if not DOMAINS.is_builtin(self.domain_entry):
            out["domain"] = self.domain_entry.identity()
        schemes = {s.name: self.scheme_entry(s.name).identity() for s in self.schemes
                   if not SCHEMES.is_builtin(self.scheme_entry(s.name))}
        if schemes:
            out["schemes"] = schemes
        return out

    # --- as data ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Plain JSON-able dict of the specs and settings (what a manifest stores)."""
        data = {k: getattr(self, k) for k in _SETTINGS}
        data.update(domain=self.domain.to_dict(), grid={k: list(v) for k, v in self.grid},
                    schemes=[s.name if not s.options else s.to_dict() for s in self.schemes],
                    operator=self.operator.to_dict())
        data.update(self.carried)  # flat keys no component takes: in the fingerprint, as before
        if self.estimate is not None:  # a domain without a model only
            data["estimate"] = self.estimate.to_dict()
        return data

    def to_toml(self) -> str:
        """The sweep as a TOML file :func:`nsrl.experiments.load_experiment` reads back.

        Examples:
            >>> import tomllib
            >>> s = Sweep(n_states=(20,), n_actions=(2,), branching=(1,), n_mdps=1)
            >>> Sweep.from_dict(tomllib.loads(s.to_toml())).fingerprint() == s.fingerprint()
            True
        """
        return "".join(f"{k} = {_toml(v)}\n" for k, v in self.to_dict().items()
                       if v is not None)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, record: bool = False) -> Sweep:
        """Build a sweep from a dict (TOML or a manifest); unknown keys raise.

        The flat keys of earlier releases are read too, with a DeprecationWarning unless
        ``record`` (a manifest that nsrl wrote: nothing to fix).
        """
        return cls(**{str(k): v for k, v in data.items()}, _record=record)

    def fingerprint(self) -> str:
        """sha256 of everything that determines the results (the name excluded).

        Stable across versions (:func:`nsrl.experiments.compat.fingerprint`): a results folder
        written by an older nsrl is resumed, not refused.
        """
        return compat.fingerprint(self)

    def replace(self, **changes: Any) -> Sweep:
        """A copy with ``changes``: settings, specs, axes, or options merged into a component's.

        ``operator_options``, ``domain_options`` and ``scheme_options`` merge into the
        operator's, the domain's and each scheme's (that declares them) options; an operator
        given by name alone (``operator="lstdq"``) keeps the current options it declares, one
        given as a spec (``{"name": ..., "options": ...}``) replaces them.

        Examples:
            >>> Sweep(n_mdps=2).replace(n_mdps=3).n_mdps
            3
            >>> Sweep().replace(operator_options={"noise": 0.2}).operator.options
            {'noise': 0.2}
        """
        data: dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        domain = Spec.of(changes.pop("domain", self.domain), "domain")
        axes = {a.name: a for a in domain_entry(domain.name).axes}
        data["grid"] = {k: v for k, v in self.grid if k in axes and (  # still valid there
            (choices := axes[k].choices) is None or set(v) <= set(choices))}
        data["grid"].update({k: changes.pop(k) for k in list(changes) if k in axes})
        data["domain"] = Spec(domain.name, {**domain.options,
                                            **dict(changes.pop("domain_options", {}))})
        if domain_entry(domain.name).has_model:  # a model's loss needs no estimate
            data["estimate"] = None
        given = changes.pop("operator", self.operator)
        operator = Spec.of(given, "operator")
        if isinstance(given, str):  # a name alone keeps the options it declares
            declared = operator_entry(given).params
            operator = Spec(operator.name, {k: v for k, v in self.operator.options.items()
                                            if k in declared})
        data["operator"] = Spec(operator.name, {**operator.options,
                                                **dict(changes.pop("operator_options", {}))})
        shared = dict(changes.pop("scheme_options", {}))
        if shared:
            schemes = [Spec.of(s, "schemes") for s in _items(changes.pop(
                "schemes", self.schemes), "schemes")]
            data["schemes"] = [Spec(s.name, {**s.options, **{k: v for k, v in shared.items()
                               if k in entry_of(s.name).params}}) for s in schemes]
            data["scheme_options"] = {k: v for k, v in shared.items() if not any(
                k in entry_of(s.name).params for s in schemes)}  # refused as unused, by name
        data["carried"] = {**self.carried, **dict(changes.pop("carried", None) or {})}
        data.update(changes)
        return Sweep(**data)

    # --- the flat names of earlier releases, as read-only views -----------------------------
    def __hash__(self) -> int:
        return hash(self.fingerprint())

    def __getattr__(self, name: str) -> Any:
        if name in ("n_states", "n_actions", "branching"):
            return self.axis(name) if name in self.axis_names else ()
        if name in compat.OPERATOR_FLAT:
            return self.operator.options.get(name, compat.OPERATOR_FLAT[name])
        if name in compat.SCHEME_FLAT:
            return compat.flat_view(self)[name]
        if name == "feature_map":
            return self.domain.options.get("feature_map", "rbf")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _toml(value: Any) -> str:
    """``value`` (bool, number, string, list, table or None inside them) as a TOML value."""
    import json

    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()
                               if v is not None) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _entry(what: str, lookup: Any, name: object) -> Any:
    try:
        return lookup(name)
    except ValueError as exc:
        raise ValueError(f"sweep field {what!r}: {exc}") from None


def _given(checked: Mapping[str, Any], given: Mapping[str, Any],
           defaults: Mapping[str, Any] | None = None) -> dict:
    """The canonical values of the options given, but those equal to their defaults.

    A spec stores what differs from its component's defaults, so that one sweep has one form
    (a manifest that spells every default out reads back equal to the sweep that wrote it).
    """
    defaults = defaults or {}
    return {k: checked[k] for k in given
            if k in checked and (k not in defaults or checked[k] != defaults[k])}


def _defaults(params: Mapping[str, Param], **overrides: Any) -> dict:
    """The declared defaults of ``params``, with ``overrides`` (a sweep's own defaults)."""
    return {**{k: p.default for k, p in params.items()}, **overrides}


def _items(value: object, what: str) -> list:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise InvalidParameterError(f"sweep field {what!r} should be a list, got {value!r}.")
    return list(value)
