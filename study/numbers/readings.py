"""Readings quoted by the results pages that no benchmark output holds.

``benchmarks/results/readings.toml`` keeps each one (its value as quoted and where it was
read); this module registers one inline block ``reading.KEY`` per entry, so that a page quotes
it through markers and :mod:`study.numbers.prose` can flag every other number typed in prose.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from study.numbers.registry import block
from study.numbers.sources import REPO, memo, read_text

READINGS = "benchmarks/results/readings.toml"


@memo
def readings(root: Path) -> dict:
    """Key -> {"value", "from"} of ``readings.toml`` under ``root``."""
    return tomllib.loads(read_text(root, READINGS))


def reading(root: Path, key: str) -> str:
    """The value of reading ``key``; KeyError naming the file when it has no such entry."""
    found = readings(root)
    if key not in found or "value" not in found[key]:
        raise KeyError(f"{READINGS} has no reading {key!r} with a value")
    return str(found[key]["value"])


def _register() -> None:
    for key in tomllib.loads((REPO / READINGS).read_text(encoding="utf-8")):
        block(f"reading.{key}", sources=[READINGS])(lambda root, k=key: reading(root, k))


_register()
