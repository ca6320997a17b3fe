"""The flat sweep of earlier releases, read for one more release, and its fingerprints kept.

Before sweeps held ``(name, options)`` specs, a sweep was 28 flat fields: the projected
operator's options (``noise``, ``noise_model``, ...), CPI's (``cpi_advantage``,
``cpi_epsilon``, ``line_search``), the sample-based operators' ``features`` and ``budget``,
the domain's ``domain_options`` and ``feature_map``. This module

* translates those keys into specs (:func:`split_flat`, :func:`apply_flat`): a TOML file or a
  Python call written that way still runs, with a DeprecationWarning naming the new spelling
  (silently for a manifest nsrl wrote);
* computes the fingerprint of a sweep as earlier releases did (:func:`fingerprint_data`), so
  that a results folder they wrote resumes and plots: the flat view of the sweep, hashed with
  the same rules (a field added later enters only when it differs from its default, a renamed
  field under its first name, the noise model as the older ``relative_noise`` flag), plus what
  the flat form could not say (a plugin operator's options, per-scheme options, the identity
  of every component that is not built in, a domain's own axes, the evaluation games of a
  domain without a model), only when present.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Mapping
from typing import Any

from nsrl.params import RENAMED, user_stacklevel

# A nsrl.experiments.sweep.Sweep (which imports this module: named, not imported, here).
Sweep = Any

# The projected operator's options that were sweep fields, and their defaults then.
PROJECTED_FLAT = {"noise": 0.1, "noise_model": "relative", "constant_feature": False,
                  "value_estimate": "exact", "feature_law": "uniform"}
OPERATOR_FLAT = {**PROJECTED_FLAT, "features": "phi", "budget": None}
SCHEME_FLAT = {"cpi_advantage": "advantage", "cpi_epsilon": "epsilon",
               "line_search": "line_search"}
SCHEME_DEFAULTS = {"advantage": "operator", "epsilon": None, "line_search": "best"}
DOMAIN_FLAT = ("domain_options", "feature_map")
FLAT_KEYS = (*OPERATOR_FLAT, *SCHEME_FLAT, *DOMAIN_FLAT)
# Fields added after the first results were published, with the default that reproduces them.
LATER_FIELDS = ("constant_feature", "feature_law", "feature_fraction", "value_estimate",
                "cpi_advantage", "cpi_epsilon", "line_search", "operator", "features",
                "samples_per_pair", "domain", "feature_map", "budget", "engine",
                "domain_options")
LATER_DEFAULTS = {"constant_feature": False, "feature_law": "uniform", "feature_fraction": None,
                  "value_estimate": "exact", "cpi_advantage": "operator", "cpi_epsilon": None,
                  "line_search": "best", "operator": "projected", "features": "phi",
                  "samples_per_pair": 10, "domain": "garnet", "feature_map": "rbf",
                  "budget": None, "engine": "auto", "domain_options": {}}
# Renamed fields, hashed under their names of the first results (the fingerprint is stable).
HASHED_AS = {"value_estimate": "line_search_scores", "features": "representation",
             "budget": "samples_per_call"}
GARNET_NAMES = ("n_states", "n_actions", "branching")


def renamed_fields(data: Mapping[str, Any]) -> dict:
    """A sweep dict written under older field names, keyed by today's (silently)."""
    old = set(HASHED_AS.values())
    return {RENAMED[k] if k in old else k: v for k, v in data.items()}


def split_flat(data: Mapping[str, Any], *, record: bool) -> tuple[dict, dict]:
    """``(spec-form keys, flat keys)`` of a sweep dict, old names read as today's.

    Warns (DeprecationWarning) about each flat key unless ``record`` (a manifest nsrl wrote).
    """
    data = renamed_fields(data) if record else _renamed(dict(data))
    if "relative_noise" in data and "noise_model" not in data:
        legacy = data.pop("relative_noise")
        if not isinstance(legacy, bool):
            raise TypeError(f"sweep field 'relative_noise' should be a bool (true or false), "
                            f"got {legacy!r}; e.g. noise_model = \"relative\".")
        data["noise_model"] = "relative" if legacy else "absolute"
    flat = {k: data.pop(k) for k in FLAT_KEYS if k in data}
    if flat and not record:
        warnings.warn(f"sweep key(s) {', '.join(map(repr, flat))} are the flat form of earlier "
                      f"releases, read for one more release: give an operator's options as "
                      f"operator = {{name = ..., options = {{...}}}}, the schemes' as "
                      f"scheme_options = {{...}}, the domain's as domain = {{name = ..., "
                      f"options = {{...}}}} (docs/guide/experiments.md).", DeprecationWarning,
                      stacklevel=user_stacklevel())
    return data, flat


def _renamed(data: dict) -> dict:
    from nsrl.params import renamed

    fields = {*FLAT_KEYS, "operator", "schemes", "domain"}
    return renamed(data, fields, "sweep key ")


def _flat_params() -> dict:
    """The declarations the flat keys were checked with (their canonical values)."""
    from nsrl.greedy.model_based import ProjectedGreedy
    from nsrl.greedy.registry import BUDGET, FEATURES
    from nsrl.schemes import CPIPlus

    params = {k: ProjectedGreedy.params[k] for k in PROJECTED_FLAT}
    params.update(features=FEATURES, budget=BUDGET)
    params.update({k: CPIPlus.params[v] for k, v in SCHEME_FLAT.items()})
    return params


# Flat keys whose non-default value an operator that does not take it refuses (it would be a
# reading the operator cannot apply); the others were carried silently, as they still are.
_REFUSED = ("value_estimate", "feature_law", "features")


def apply_flat(flat: Mapping[str, Any], operator: dict, domain: dict, scheme_options: dict,
               scheme_params: set[str]) -> dict:
    """Move the flat keys into the operator's, domain's and schemes' options (in place).

    A flat key that no component takes is *carried*: it changes nothing that runs, but it
    stays in the fingerprint, as it always was (a ``budget`` given to a sweep of the projected
    operator, say). Returns the carried keys (canonical values, defaults left out).

    Raises:
        ValueError: a reading the operator cannot apply (``value_estimate``, ``feature_law``
            or ``features`` away from its default for an operator without that option).
    """
    from nsrl.domains import domain_entry
    from nsrl.greedy.registry import operator_entry, takers

    declared = _flat_params()
    carried: dict[str, Any] = {}
    taken = operator_entry(operator["name"]).params
    for key, default in OPERATOR_FLAT.items():
        if key not in flat or flat[key] is None and default is None:  # budget None: derived
            continue
        value = declared[key].check(flat[key], f"sweep field {key!r}", key)
        if key in taken:
            operator["options"].setdefault(key, value)
        elif value != default and key in _REFUSED:
            raise ValueError(f"sweep field {key!r} = {value!r}: the {operator['name']} operator "
                             f"has no such option (operators that take it: "
                             f"{', '.join(takers(key))}); choose one of them or drop the field.")
        elif value != default:
            carried[key] = value
    for key, option in SCHEME_FLAT.items():
        if key in flat:
            value = declared[key].check(flat[key], f"sweep field {key!r}", key)
            if option in scheme_params:
                scheme_options.setdefault(option, value)
            elif value != SCHEME_DEFAULTS[option]:
                carried[key] = value
    domain["options"].update({k: v for k, v in dict(flat.get("domain_options") or {}).items()
                              if k not in domain["options"]})
    if "feature_map" in flat:
        if "feature_map" in domain_entry(domain["name"]).params:
            domain["options"].setdefault("feature_map", flat["feature_map"])
        elif flat["feature_map"] != LATER_DEFAULTS["feature_map"]:
            carried["feature_map"] = flat["feature_map"]
    return carried


def legacy_options(operator: str) -> dict:
    """The options that reproduce an earlier release's results with ``operator`` (by name).

    An operator whose default changed declares the value its published results used
    (:attr:`nsrl.greedy.registry.OperatorEntry.legacy`; rollouts + CSC: the logistic fit).

    Examples:
        >>> legacy_options("rollout-csc")
        {'classifier': 'logistic'}
    """
    from nsrl.greedy.registry import operator_entry

    return dict(operator_entry(operator).legacy)


def flat_view(sweep: Sweep) -> dict:
    """The sweep as the flat dict of earlier releases (what their fingerprints hashed)."""
    op, dom = sweep.operator, sweep.domain
    data: dict[str, Any] = {}
    if sweep.axis_names == GARNET_NAMES:
        data.update({k: list(sweep.axis(k)) for k in GARNET_NAMES})
    data.update(n_mdps=sweep.n_mdps, n_runs=sweep.n_runs, n_iterations=sweep.n_iterations,
                schemes=[s.name for s in sweep.schemes], n_features=sweep.n_features,
                feature_fraction=sweep.feature_fraction, gamma=sweep.gamma, seed=sweep.seed,
                operator=op.name, samples_per_pair=sweep.samples_per_pair, domain=dom.name,
                engine=sweep.engine)
    carried = sweep.carried
    for key, default in OPERATOR_FLAT.items():
        data[key] = op.options.get(key, carried.get(key, default))
    for key, option in SCHEME_FLAT.items():
        data[key] = carried.get(key, _uniform(sweep, option))
    data["feature_map"] = dom.options.get("feature_map",
                                          carried.get("feature_map", LATER_DEFAULTS["feature_map"]))
    data["domain_options"] = {k: v for k, v in dom.options.items() if k != "feature_map"}
    return data


def _uniform(sweep: Sweep, option: str) -> Any:
    """The one value of a scheme option among the schemes that take it (else its default)."""
    values = {json.dumps(s.options[option]) for s in sweep.schemes if option in s.options}
    if len(values) == 1:
        return json.loads(values.pop())
    return SCHEME_DEFAULTS[option]


def beyond_flat(sweep: Sweep) -> dict:
    """What the flat form cannot say, keyed for the fingerprint (empty for a flat sweep)."""
    extra: dict[str, Any] = {}
    legacy = sweep.operator_entry.legacy  # hashed where the value differs from it (only)
    operator = {k: v for k, v in sweep.operator.options.items()
                if k not in OPERATOR_FLAT and k not in legacy}
    effective = sweep.operator_options()
    operator.update({k: effective[k] for k in legacy if effective[k] != legacy[k]})
    if operator:
        extra["operator_options"] = operator
    flat = {option: _uniform(sweep, option) for option in SCHEME_FLAT.values()}
    schemes = {s.name: {k: v for k, v in s.options.items()
                        if k not in flat or v != flat[k]} for s in sweep.schemes}
    schemes = {k: v for k, v in schemes.items() if v}
    if schemes:
        extra["scheme_options"] = schemes
    components = sweep.components()
    if components:
        extra["components"] = components
    if sweep.axis_names != GARNET_NAMES:
        extra["grid"] = {k: list(v) for k, v in sweep.grid}
    if sweep.estimate is not None:  # a domain without a model: the games its scores average
        extra["estimate"] = sweep.estimate.to_dict()
    return extra


def fingerprint(sweep: Sweep) -> str:
    """sha256 of everything that determines the results (the name excluded); see module."""
    data = flat_view(sweep)
    for key in LATER_FIELDS:
        if data[key] == LATER_DEFAULTS[key]:
            del data[key]
    data = {HASHED_AS.get(k, k): v for k, v in data.items()}
    if data.get("noise_model", "relative") in ("relative", "absolute"):
        data["relative_noise"] = data.pop("noise_model", "relative") == "relative"
    data.update(beyond_flat(sweep))
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
