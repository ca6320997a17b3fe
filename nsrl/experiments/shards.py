"""Shards: the unit of work and of storage, one MDP of one instance of a sweep's domain.

A shard is named after its instance's axes and its MDP index, each axis by its letter and a
zero-padded value (:class:`nsrl.domains.Axis`): ``s050_a02_b01_m007`` for Garnet(50, 2, 1),
MDP 7, the name every earlier release gave it; ``w10_h10_m003`` for a domain on a width and a
height.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nsrl.domains import GARNET_AXES, Axis

# Each shard is a file and an entry of the runner's lists: a million is far beyond any
# protocol (the paper's has 810) and still fits in memory.
MAX_SHARDS = 1_000_000


class Shard:
    """Every scheme and run on MDP ``mdp`` of one instance.

    Args:
        *values: the instance's axis values, in ``axes``' order, then the MDP index (the
            Garnet form ``Shard(n_states, n_actions, branching, mdp)`` by default).
        axes: the domain's axes (default: Garnets').

    Examples:
        >>> Shard(50, 2, 1, 7).name
        's050_a02_b01_m007'
        >>> Shard.from_name("s050_a02_b01_m007") == Shard(50, 2, 1, 7)
        True
    """

    __slots__ = ("axes", "mdp", "values")

    def __init__(self, *values: int, axes: Sequence[Axis] = GARNET_AXES) -> None:
        if len(values) != len(axes) + 1:
            raise TypeError(f"a shard takes one value per axis ({', '.join(a.name for a in axes)})"
                            f" and the MDP index, got {len(values)} values.")
        self.axes = tuple(axes)
        self.values = tuple(int(v) for v in values[:-1])
        self.mdp = int(values[-1])

    @property
    def instance(self) -> dict[str, int]:
        """Axis name -> value."""
        return {a.name: v for a, v in zip(self.axes, self.values, strict=True)}

    def get(self, axis: str) -> int | None:
        """The value of ``axis`` (None if the domain has no such axis)."""
        return self.instance.get(axis)

    @property
    def n_states(self) -> int | None:
        """n_S where the domain has that axis."""
        return self.get("n_states")

    @property
    def n_actions(self) -> int | None:
        """n_A where the domain has that axis."""
        return self.get("n_actions")

    @property
    def branching(self) -> int | None:
        """b where the domain has that axis."""
        return self.get("branching")

    @property
    def name(self) -> str:
        """File stem, e.g. ``s050_a02_b01_m007``."""
        parts = [f"{a.code}{v:0{a.width}d}" for a, v in zip(self.axes, self.values, strict=True)]
        return "_".join([*parts, f"m{self.mdp:03d}"])

    @classmethod
    def from_name(cls, name: str, axes: Sequence[Axis] = GARNET_AXES) -> Shard | None:
        """The shard of a file stem (inverse of :attr:`name`), or None if it is not one."""
        pattern = "_".join([*(f"{re.escape(a.code)}(\\d+)" for a in axes), "m(\\d+)"])
        match = re.fullmatch(pattern, name)
        if not match:
            return None
        shard = cls(*(int(x) for x in match.groups()), axes=axes)
        return shard if shard.name == name else None

    def _key(self) -> tuple:
        return tuple(a.name for a in self.axes), self.values, self.mdp

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        values = ", ".join(f"{k}={v}" for k, v in self.instance.items())
        return f"Shard({values}, mdp={self.mdp})"

    def __reduce__(self) -> tuple:
        return _shard, (self.values, self.mdp, self.axes)


def _shard(values: tuple[int, ...], mdp: int, axes: tuple[Axis, ...]) -> Shard:
    return Shard(*values, mdp, axes=axes)
