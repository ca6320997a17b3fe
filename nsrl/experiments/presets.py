"""Sweeps as data: the ``quick`` and ``paper`` presets, custom sweeps from TOML, and seeds.

A :class:`Sweep` is the whole protocol of an experiment (Scherrer 2014, section 5): the grid of
Garnet instances (n_S, n_A, b), how many MDPs per instance, runs per MDP and scheme,
iterations, the schemes, the operator's noise, features and gamma, and one master seed.

Seeds are *derived*, never drawn in sequence, so that a result does not depend on which
worker computed it or in which order: the MDP (n_S, n_A, b, i) is drawn from
``SeedSequence(seed, spawn_key=(0, n_S, n_A, b, i))`` and run j of a scheme on it from
``SeedSequence(seed, spawn_key=(1, n_S, n_A, b, i, crc32(scheme), j))``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nsrl.schemes import PAPER_SCHEMES, make_scheme


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


@dataclass(frozen=True)
class Sweep:
    """A sweep over Garnet instances (defaults: the paper's protocol, section 5)."""

    name: str = "paper"
    n_states: tuple[int, ...] = (50, 100, 200)
    n_actions: tuple[int, ...] = (2, 5, 10)
    branching: tuple[int, ...] = (1, 2, 10)
    n_mdps: int = 30
    n_runs: int = 30
    n_iterations: int = 100
    schemes: tuple[str, ...] = PAPER_SCHEMES
    noise: float = 0.1
    relative_noise: bool = True
    n_features: int | None = None  # None: n_S // 10, as in the paper
    gamma: float = 0.99
    seed: int = 2014

    def __post_init__(self):
        for key in ("n_states", "n_actions", "branching", "schemes"):
            value = tuple(getattr(self, key))
            if not value:
                raise ValueError(f"sweep field {key!r} should be a non-empty list, got {value}.")
            object.__setattr__(self, key, value)
        for key in ("n_mdps", "n_runs", "n_iterations"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"sweep field {key!r} should be a positive int, got {value!r}.")
        for s, b in ((s, b) for s in self.n_states for b in self.branching):
            if not 1 <= b <= s:
                raise ValueError(f"branching {b} should be in [1, n_states={s}].")
        if not 0 < self.gamma < 1 or self.noise < 0:
            raise ValueError(f"need 0 < gamma < 1 and noise >= 0, got {self.gamma}, {self.noise}.")
        canonical = tuple(make_scheme(s).name for s in self.schemes)
        if len(set(canonical)) != len(canonical):
            raise ValueError(f"schemes should be distinct, got {list(self.schemes)}.")
        object.__setattr__(self, "schemes", canonical)

    def shards(self) -> list[Shard]:
        """Every shard, MDP index first: a partial run covers every instance evenly."""
        return [
            Shard(s, a, b, i)
            for i in range(self.n_mdps)
            for s in self.n_states
            for a in self.n_actions
            for b in self.branching
        ]

    @property
    def scheme_iterations(self) -> int:
        """Total number of scheme iterations of the sweep."""
        return len(self.shards()) * self.n_runs * len(self.schemes) * self.n_iterations

    def to_dict(self) -> dict:
        """Plain JSON-able dict (lists for tuples)."""
        items = dataclasses.asdict(self).items()
        return {k: list(v) if isinstance(v, tuple) else v for k, v in items}

    def fingerprint(self) -> str:
        """sha256 of everything that determines the results (the name excluded)."""
        data = {k: v for k, v in self.to_dict().items() if k != "name"}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: dict) -> Sweep:
        """Build a sweep from a dict (as read from TOML or a manifest); unknown keys raise."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(
                f"unknown sweep keys {sorted(unknown)}; expected some of {sorted(fields)}."
            )
        return cls(**data)

    def mdp_seed(self, shard: Shard) -> np.random.SeedSequence:
        """The instance seed of ``shard``'s MDP."""
        return np.random.SeedSequence(self.seed, spawn_key=(0, *_instance(shard), shard.mdp))

    def run_rngs(self, shard: Shard, scheme: str) -> list[np.random.Generator]:
        """One Generator per run of ``scheme`` on ``shard``'s MDP."""
        key = zlib.crc32(make_scheme(scheme).name.encode())
        return [
            np.random.Generator(np.random.PCG64(np.random.SeedSequence(
                self.seed, spawn_key=(1, *_instance(shard), shard.mdp, key, j))))
            for j in range(self.n_runs)
        ]


def _instance(shard: Shard) -> tuple[int, int, int]:
    return shard.n_states, shard.n_actions, shard.branching


# The README default: a telling subset (deterministic to very stochastic dynamics, few and
# many actions, every scheme) that finishes in well under two minutes on two cores.
QUICK = Sweep(name="quick", n_states=(50,), n_actions=(2, 10), branching=(1, 2, 10),
              n_mdps=8, n_runs=10)
PAPER = Sweep(name="paper")
PRESETS = {"quick": QUICK, "paper": PAPER}


def load_sweep(preset: str) -> Sweep:
    """A preset by name (``quick``, ``paper``) or a custom sweep from a TOML file.

    A TOML file holds top-level keys named as the fields of :class:`Sweep`, e.g.::

        name = "small"
        n_states = [50]
        n_actions = [2, 5]
        branching = [1, 10]
        n_mdps = 4
        n_runs = 8
        schemes = ["api", "psdp", "nspi(5)"]

    Examples:
        >>> load_sweep("paper").scheme_iterations
        19440000
    """
    if preset in PRESETS:
        return PRESETS[preset]
    path = Path(preset)
    if not path.is_file():
        raise ValueError(
            f"unknown preset {preset!r}: expected one of {sorted(PRESETS)} or a TOML file path."
        )
    with path.open("rb") as f:
        data = tomllib.load(f)
    data.setdefault("name", path.stem)
    return Sweep.from_dict(data)
