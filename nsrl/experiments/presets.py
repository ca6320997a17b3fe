"""Sweeps as data: the :class:`Sweep` protocol, its shards and their derived seeds.

The experiments' own sweeps (``paper``, ``quick``, ``sensitivity``, ``sampled``) are in their
folders, listed by :mod:`nsrl.experiments.registry`, which also reads custom sweeps from TOML.
A :class:`Sweep` is the whole protocol of an experiment (Scherrer 2014, section 5): the grid of
Garnet instances (n_S, n_A, b), how many MDPs per instance, runs per MDP and scheme,
iterations, the schemes, the operator's noise, features and gamma, and one master seed.

Seeds are *derived*, never drawn in sequence, so that a result does not depend on which
worker computed it or in which order: the MDP (n_S, n_A, b, i) is drawn from
``SeedSequence(seed, spawn_key=(0, n_S, n_A, b, i))`` and run j of a scheme on it from
``SeedSequence(seed, spawn_key=(1, n_S, n_A, b, i, crc32(scheme), j))`` (with a sample-based
operator: ``(2, n_S, n_A, b, i, crc32(scheme), crc32(operator), j)``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import zlib
from dataclasses import dataclass

import numpy as np

from nsrl.engine import ENGINE_NAMES
from nsrl.experiments.accuracy import GAMMA_MAX
from nsrl.experiments.domains import FEATURE_MAPS, check_instances, domain_names, domain_options
from nsrl.greedy.model_based import ProjectedGreedy
from nsrl.greedy.registry import BUDGET, FEATURES, operator_entry, operator_names, takers
from nsrl.params import RENAMED, conform_fields, renamed, spec
from nsrl.schemes import PAPER_SCHEMES, CPIPlus, make_scheme
from nsrl.schemes.registry import scheme_options

_PROJECTED = ProjectedGreedy.params
_SHARD_NAME = re.compile(r"s(\d+)_a(\d+)_b(\d+)_m(\d+)")


@dataclass(frozen=True)
class Shard:
    """One unit of work and of storage: every scheme and run on MDP ``mdp`` of an instance."""

    n_states: int
    n_actions: int
    branching: int
    mdp: int

    @property
    def name(self) -> str:
        """File stem, e.g. ``s050_a02_b01_m007``."""
        return f"s{self.n_states:03d}_a{self.n_actions:02d}_b{self.branching:02d}_m{self.mdp:03d}"

    @classmethod
    def from_name(cls, name: str) -> Shard | None:
        """The shard of a file stem (inverse of :attr:`name`), or None if it is not one."""
        match = _SHARD_NAME.fullmatch(name)
        if not match:
            return None
        shard = cls(*(int(x) for x in match.groups()))
        return shard if shard.name == name else None


# Each shard is a file and an entry of the runner's lists: a million is far beyond any
# protocol (the paper's has 810) and still fits in memory.
MAX_SHARDS = 1_000_000
# Sizes are stored as int32 columns (nsrl.experiments.runner.compute_shard).
INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Sweep:
    """A sweep over Garnet instances (defaults: the paper's protocol, section 5).

    Every field is typed and checked on construction (:mod:`nsrl.params`): a wrong type or a
    value out of range raises an error naming the field. A new field is one line, its
    annotation and default, with a rule if it needs one, e.g. ``n_mdps: int = spec(30,
    ge=1)``; a field that passes an option of a scheme or operator on reuses the option's
    declaration (``CPIPlus.params["line_search"].field()``), so its range is stated once.
    """

    name: str = "paper"
    # sizes are stored as int32 columns (nsrl.experiments.runner.compute_shard)
    n_states: tuple[int, ...] = spec((50, 100, 200), ge=1, le=INT32_MAX, distinct=True)
    n_actions: tuple[int, ...] = spec((2, 5, 10), ge=1, le=INT32_MAX, distinct=True)
    branching: tuple[int, ...] = spec((1, 2, 10), ge=1, le=INT32_MAX, distinct=True)
    n_mdps: int = spec(30, ge=1)
    n_runs: int = spec(30, ge=1)
    n_iterations: int = spec(100, ge=1)
    schemes: tuple[str, ...] = spec(PAPER_SCHEMES)
    noise: float = _PROJECTED["noise"].field()
    n_features: int | None = spec(None, ge=1)  # None: n_S // 10, as in the paper
    # Or p as a fraction of each instance's n_S (Garnets only): p = max(1, round(f n_S)); the
    # Garnet draws Phi last, so its transitions and rewards do not move with p.
    feature_fraction: float | None = spec(None, gt=0, le=1)
    gamma: float = spec(0.99, gt=0, le=GAMMA_MAX)  # accurate exact solves
    seed: int = spec(2014, ge=0)
    # The readings of what the paper leaves unsaid (docs/decisions.md, docs/fidelity.md):
    # the projected operator's noise model and constant feature, how CPI+ scores its
    # candidates, and CPI's advantage source, epsilon and line-search rule.
    noise_model: str = _PROJECTED["noise_model"].field()
    constant_feature: bool = _PROJECTED["constant_feature"].field()
    feature_law: str = _PROJECTED["feature_law"].field()
    value_estimate: str = _PROJECTED["value_estimate"].field()
    cpi_advantage: str = CPIPlus.params["advantage"].field()
    cpi_epsilon: float | None = CPIPlus.params["epsilon"].field()
    line_search: str = CPIPlus.params["line_search"].field()
    # The greedy operator (nsrl.greedy.registry): the paper's noisy projection, or learned
    # from samples of the Garnet's native vector env (its batched generative model) with
    # estimators on Phi or one-hot ``features`` (the operators' option of that name).
    operator: str = spec("projected", choices=operator_names)  # read live: plugins too
    features: str = FEATURES.field("phi")
    # A sweep's own setting, not an operator's: transitions per (state, action) pair, from
    # which each instance's per-call ``budget`` is derived (samples_per_pair x n_S x n_A)
    # when ``budget`` is not given.
    samples_per_pair: int = spec(10, ge=1)
    # The domain (nsrl.experiments.domains): Garnets, or a structured family (grid worlds, the
    # discretised mountain car) whose Phi is ``feature_map`` of the states' coordinates, with
    # n_features features; ``budget`` fixes the transitions per greedy call on every instance
    # (the operators' option of that name; None: samples_per_pair x n_S x n_A); ``engine``
    # is nsrl.run's.
    domain: str = spec("garnet", choices=domain_names)  # read live: plugins too
    # The domain's own options (its registered declarations check them), e.g. {slip = 0.2}.
    domain_options: dict = dataclasses.field(default_factory=dict, hash=False)
    feature_map: str = spec("rbf", choices=FEATURE_MAPS)
    budget: int | None = BUDGET.field(None)
    engine: str = spec("auto", choices=ENGINE_NAMES)
    # The old spellings of three fields, read for one release (a DeprecationWarning names the
    # new one): Sweep(representation="onehot") is Sweep(features="onehot").
    line_search_scores: dataclasses.InitVar[str | None] = None
    representation: dataclasses.InitVar[str | None] = None
    samples_per_call: dataclasses.InitVar[int | None] = None

    def __post_init__(self, line_search_scores=None, representation=None,
                      samples_per_call=None):
        old = {"line_search_scores": line_search_scores, "representation": representation,
               "samples_per_call": samples_per_call}
        for name, value in renamed({k: v for k, v in old.items() if v is not None},
                                   _FIELDS, "sweep field ", stacklevel=5).items():
            object.__setattr__(self, name, value)
        conform_fields(self, "sweep field")
        check_instances(self.domain, self.n_actions, self.branching)
        domain_options(self)  # unknown or bad options of the domain refused here
        for s, b in ((s, b) for s in self.n_states for b in self.branching):
            if not 1 <= b <= s:
                raise ValueError(f"sweep field 'branching': {b} should be in [1, n_states={s}].")
        n_shards = len(self.n_states) * len(self.n_actions) * len(self.branching) * self.n_mdps
        if n_shards > MAX_SHARDS:
            raise ValueError(f"the sweep has {n_shards:,} shards (instances x n_mdps), more than "
                             f"{MAX_SHARDS:,}; lower n_mdps or the grid.")
        if self.n_features is not None and self.n_features > min(self.n_states):
            raise ValueError(f"sweep field 'n_features': {self.n_features} is more than n_states "
                             f"= {min(self.n_states)} (Phi has rank <= n_S: more features add "
                             f"nothing but memory); e.g. n_features = {min(self.n_states)}.")
        if self.feature_fraction is not None and (self.n_features is not None
                                                  or self.domain != "garnet"):
            raise ValueError(
                f"sweep field 'feature_fraction': {self.feature_fraction} sets p per Garnet "
                f"instance, so it excludes n_features (got {self.n_features}) and applies to "
                f"the garnet domain only (got {self.domain!r}); set one of them.")
        if "features" not in operator_entry(self.operator).params and self.features != "phi":
            raise ValueError(f"sweep field 'features': the {self.operator} operator takes no "
                             f"features by name (the projected one projects on Phi); e.g. "
                             f"features = \"phi\" (or a sample-based operator).")
        self._check_operator_fields()
        try:
            canonical = tuple(make_scheme(s).name for s in self.schemes)
        except ValueError as exc:
            raise ValueError(f"sweep field 'schemes': {exc}") from None
        if len(set(canonical)) != len(canonical):
            raise ValueError(f"sweep field 'schemes' should name distinct schemes, got "
                             f"{list(self.schemes)}.")
        object.__setattr__(self, "schemes", canonical)

    def _check_operator_fields(self) -> None:
        """Refuse a reading that the sweep's operator cannot apply (it would be ignored)."""
        for name in ("value_estimate", "feature_law"):
            if getattr(self, name) != _DEFAULTS[name] and \
                    name not in operator_entry(self.operator).params:
                raise ValueError(
                    f"sweep field {name!r} = {getattr(self, name)!r}: the {self.operator} "
                    f"operator has no such option (operators that take it: "
                    f"{', '.join(takers(name))}); use operator = \"projected\" or drop "
                    f"the field.")

    def shards(self) -> list[Shard]:
        """Every shard, MDP index first: a partial run covers every instance evenly."""
        return [
            Shard(s, a, b, i)
            for i in range(self.n_mdps)
            for s in self.n_states
            for a in self.n_actions
            for b in self.branching
        ]

    def has_shard(self, shard: Shard) -> bool:
        """True if ``shard`` is one of :meth:`shards`."""
        return (shard.n_states in self.n_states and shard.n_actions in self.n_actions
                and shard.branching in self.branching and 0 <= shard.mdp < self.n_mdps)

    @property
    def scheme_iterations(self) -> int:
        """Total number of scheme iterations of the sweep."""
        return len(self.shards()) * self.n_runs * len(self.schemes) * self.n_iterations

    def to_dict(self) -> dict:
        """Plain JSON-able dict (lists for tuples), keyed by the fields' names."""
        items = dataclasses.asdict(self).items()
        return {k: list(v) if isinstance(v, tuple) else v for k, v in items}

    def fingerprint(self) -> str:
        """sha256 of everything that determines the results (the name excluded).

        Stable across versions: a field added later enters it only when it differs from its
        default (which reproduces what was computed before it existed), a renamed field is
        hashed under the name it had when the first results were written (:data:`_HASHED_AS`),
        and the noise model is written as the older ``relative_noise`` flag where that flag
        can express it. A results folder written by an older nsrl is therefore resumed, not
        refused.
        """
        data = {k: v for k, v in self.to_dict().items() if k != "name"}
        for key in _LATER_FIELDS:
            if data[key] == _DEFAULTS[key]:
                del data[key]
        data = {_HASHED_AS.get(k, k): v for k, v in data.items()}
        if data.get("noise_model", "relative") in ("relative", "absolute"):
            data["relative_noise"] = data.pop("noise_model", "relative") == "relative"
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def scheme(self, name: str):
        """The scheme ``name`` with this sweep's options for the schemes that take them."""
        options = {"advantage": self.cpi_advantage, "epsilon": self.cpi_epsilon,
                   "line_search": self.line_search}
        return make_scheme(name, **scheme_options(name, options))

    def operator_options(self, shard: Shard | None = None) -> dict:
        """The options of the sweep's operator (those its registry entry declares).

        A sample-based operator's budget per call depends on the MDP: give its ``shard``.
        """
        declared = operator_entry(self.operator).params
        options = {k: getattr(self, k) for k in _OPERATOR_FIELDS if k in declared}
        if shard is None:
            options.pop("budget", None)
        elif "budget" in declared:
            options["budget"] = self.budget_for(shard)
        return options

    @classmethod
    def from_dict(cls, data: dict, *, record: bool = False) -> Sweep:
        """Build a sweep from a dict (as read from TOML or a manifest); unknown keys raise.

        The older ``relative_noise = true | false`` is read as ``noise_model``, and the old
        names of renamed fields (:data:`nsrl.params.RENAMED`) as the new ones, with a
        DeprecationWarning unless ``record`` (a manifest that nsrl wrote: nothing to fix).
        """
        data = renamed_fields(data) if record else dict(data)
        data = renamed(data, _FIELDS, "sweep key ", stacklevel=4)
        if "relative_noise" in data and "noise_model" not in data:
            legacy = data.pop("relative_noise")
            if not isinstance(legacy, bool):
                raise TypeError(f"sweep field 'relative_noise' should be a bool (true or "
                                f"false), got {legacy!r}; e.g. noise_model = \"relative\".")
            data["noise_model"] = "relative" if legacy else "absolute"
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(
                f"unknown sweep keys {sorted(unknown)}; expected some of {sorted(fields)}."
            )
        return cls(**data)

    def features_of(self, n_states: int) -> int | None:
        """p on an instance of ``n_states`` states (None: the domain's default, n_S // 10).

        ``n_features``, or ``round(feature_fraction n_S)`` (at least 1), or None.

        Examples:
            >>> Sweep(feature_fraction=0.5).features_of(50), Sweep().features_of(50)
            (25, None)
        """
        if self.feature_fraction is not None:
            return max(1, int(self.feature_fraction * n_states + 0.5))
        return self.n_features

    def mdp_seed(self, shard: Shard) -> np.random.SeedSequence:
        """The instance seed of ``shard``'s MDP."""
        return np.random.SeedSequence(self.seed, spawn_key=(0, *_instance(shard), shard.mdp))

    @property
    def sampled(self) -> bool:
        """Whether the greedy steps are learned from samples (a budget per greedy call)."""
        return operator_entry(self.operator).sample_based

    def budget_for(self, shard: Shard) -> int:
        """Transitions per greedy call on ``shard``: budget, or samples_per_pair x n_S x n_A."""
        if self.budget is not None:
            return self.budget
        return self.samples_per_pair * shard.n_states * shard.n_actions

    def run_rngs(self, shard: Shard, scheme: str) -> list[np.random.Generator]:
        """One Generator per run of ``scheme`` on ``shard``'s MDP.

        Derived from (instance, MDP, scheme, run), and the operator for a sample-based one
        (the projected operator keeps the keys its published results were computed with).
        """
        key: tuple[int, ...] = (zlib.crc32(make_scheme(scheme).name.encode()),)
        if self.sampled:
            key = (2,) + key + (zlib.crc32(self.operator.encode()),)
        else:
            key = (1,) + key
        return [
            np.random.Generator(np.random.PCG64(np.random.SeedSequence(
                self.seed, spawn_key=(key[0], *_instance(shard), shard.mdp, *key[1:], j))))
            for j in range(self.n_runs)
        ]


# Fields added after the first results were published, with the default that reproduces them.
_LATER_FIELDS = ("constant_feature", "feature_law", "feature_fraction", "value_estimate",
                 "cpi_advantage", "cpi_epsilon", "line_search", "operator", "features",
                 "samples_per_pair", "domain", "feature_map", "budget", "engine",
                 "domain_options")
# Renamed fields, hashed under their names of the first results (the fingerprint is stable).
_HASHED_AS = {"value_estimate": "line_search_scores", "features": "representation",
              "budget": "samples_per_call"}
_OLD_NAMES = tuple(_HASHED_AS.values())
# The fields that are options of an operator, under the operator's names (those of the
# sweep's operator are passed on: Sweep.operator_options).
_OPERATOR_FIELDS = (*_PROJECTED, "features", "budget")
_DEFAULTS = {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING
             else f.default for f in dataclasses.fields(Sweep)}
_FIELDS = frozenset(_DEFAULTS)


def renamed_fields(data: dict) -> dict:
    """A sweep dict written under older field names, keyed by today's (silently)."""
    return {RENAMED[k] if k in _OLD_NAMES else k: v for k, v in data.items()}


def _instance(shard: Shard) -> tuple[int, int, int]:
    return shard.n_states, shard.n_actions, shard.branching
