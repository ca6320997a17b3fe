"""Outputs of the toolkit step's measurements, quoted whole.

The exact backend beside its peers on the idle machine (docs/scale.md), and the timings
before and after the toolkit step (docs/performance.md).

Sources (benchmarks/results/): bench_exact_peers_idle.txt (``bench_exact_peers.py`` on one
core of the idle machine) and bench_level.txt (``bench_level.sh``: the quick preset at the
revision before the toolkit step and after it, interleaved; then bench_sweep's pair, rerun
alone and interleaved).
"""

from __future__ import annotations

from pathlib import Path

from study.numbers.registry import block
from study.numbers.sources import read_text

R = "benchmarks/results/"
PEERS_IDLE = R + "bench_exact_peers_idle.txt"
LEVEL = R + "bench_level.txt"


def _quoted(root: Path, rel: str, keep=lambda line: True) -> str:
    """The lines of ``rel`` that ``keep`` accepts, as a fenced text block naming the file."""
    lines = [line.rstrip() for line in read_text(root, rel).splitlines() if keep(line)]
    return "```text\n" + "\n".join(lines) + f"\n```\n(`{rel}`)\n"


@block("scale-exact-peers-idle", sources=[PEERS_IDLE])
def peers_idle(root: Path) -> str:
    """The idle run's table (the peers' warnings left out)."""
    return _quoted(root, PEERS_IDLE, lambda line: not line.startswith((" ", "/")))


@block("perf-toolkit-level", sources=[LEVEL])
def level(root: Path) -> str:
    """The before/after timings as printed."""
    return _quoted(root, LEVEL)
