"""The sensitivity study's analysis: one row per reading (nsrl.experiments.variants)."""

from __future__ import annotations

from pathlib import Path

from nsrl.experiments.variants import write_summary


def analyse(out, experiment) -> list[Path]:
    """Write ``sensitivity.csv`` and ``sensitivity.md`` (verdicts, means, ranks, spreads)."""
    return write_summary(out, experiment)
