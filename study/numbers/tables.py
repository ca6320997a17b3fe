"""Tables copied verbatim from benchmark outputs that already print Markdown tables.

Each entry is (block name, result file, a line that precedes the table): the block is the
first Markdown table after that line, as the benchmark wrote it.
"""

from __future__ import annotations

from pathlib import Path

from study.numbers.registry import block
from study.numbers.sources import read_text

R = "benchmarks/results/"
VERBATIM = [
    ("sb3-head-to-head", R + "sb3_head_to_head.txt", "| problem | learner |"),
    ("sampling-greedy-error", R + "study_greedy_error.txt",
     "### Garnet(100,4,2), target pi_0"),
    ("sampling-compare-final", R + "compare_targets.txt", "### Final exact loss"),
    ("sampling-compare-targets", R + "compare_targets.txt", "### Targets (issue 12)"),
    ("sampling-lstdq-consistency", R + "bench_lstdq.txt", "### max |Q_hat - Q_pi|"),
    ("bounds-garnet-constants", R + "garnet_constants.txt", "| n_S | b | C_pi"),
    ("rollout-study-a", R + "study_rollouts.txt", "### A. One-call greedy error nu(T v - T_pi' v), "
     "target pi*"),
    ("rollout-study-b", R + "study_rollouts.txt", "### B. Final exact loss"),
    ("rollout-study-b-error", R + "study_rollouts.txt", "Mean in-run greedy error"),
    ("rollout-study-c", R + "study_rollouts.txt", "### C. Final loss against"),
    ("rollout-study-d", R + "study_rollouts.txt", "### D. Every scheme"),
]


def table_after(root: Path, rel: str, anchor: str) -> str:
    """The first Markdown table at or after the line starting with ``anchor`` in ``rel``."""
    lines = read_text(root, rel).splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(anchor)), None)
    if start is None:
        raise ValueError(f"{rel} has no line starting with {anchor!r}")
    table = []
    for line in lines[start:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
    if len(table) < 3:
        raise ValueError(f"{rel} has no table after {anchor!r}")
    return "\n".join(table)


def _register() -> None:
    for name, rel, anchor in VERBATIM:
        def render(root: Path, rel=rel, anchor=anchor) -> str:
            return table_after(root, rel, anchor)
        block(name, sources=[rel])(render)


_register()
