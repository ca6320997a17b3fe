"""Readers of committed result files and the Markdown helpers the renderers share.

Every reader raises an error naming the file and what was looked for when it is missing, so a
broken block says which source to regenerate.

Example:
    >>> from study.numbers.sources import md_table
    >>> print(md_table(["scheme", "mean"], [["API", "26.18"]]))
    | scheme | mean |
    | --- | --- |
    | API | 26.18 |
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# Results of memoised readers during one render/check pass (None outside a pass). A pass reads
# each file once however many blocks quote it; nothing is kept between passes, so a file
# edited between two passes is always read again.
_PASS: dict | None = None


@contextmanager
def one_pass() -> Iterator[None]:
    """Within this context, each :func:`memo` function runs once per distinct argument list."""
    global _PASS
    outer = _PASS
    _PASS = {} if outer is None else outer
    try:
        yield
    finally:
        _PASS = outer


def _key(arg: Any) -> Any:
    return tuple(arg.tolist()) if isinstance(arg, np.ndarray) else (
        tuple(arg) if isinstance(arg, list) else arg)


def memo(fn: Callable) -> Callable:
    """Memoise ``fn`` (positional, hashable arguments) within a :func:`one_pass` context.

    A DataFrame, Series, dict or list result is handed out as a copy, so a caller that
    modifies it cannot change what the next caller sees. Outside a pass ``fn`` just runs.
    """
    @functools.wraps(fn)
    def wrapper(*args):
        if _PASS is None:
            return fn(*args)
        key = (fn.__module__, fn.__qualname__, *map(_key, args))
        if key not in _PASS:
            _PASS[key] = fn(*args)
        value = _PASS[key]
        return value.copy() if isinstance(value, (pd.DataFrame, pd.Series, dict, list)) \
            else value
    return wrapper


def require(root: Path, rel: str) -> Path:
    """The path of the result file ``rel``; FileNotFoundError naming it when it is missing."""
    path = Path(root) / rel
    if not path.is_file():
        raise FileNotFoundError(f"result file {rel} is missing; restore or regenerate it")
    return path


@memo
def read_text(root: Path, rel: str) -> str:
    """The text of the result file ``rel``."""
    return require(root, rel).read_text(encoding="utf-8")


RUNS = "benchmarks/results/runs.toml"  # what each committed benchmark output measured
REPO = Path(__file__).resolve().parents[2]


@memo
def runs(root: Path) -> dict:
    """``benchmarks/results/runs.toml`` under ``root``: the files and labels of benchmark runs."""
    return tomllib.loads(read_text(root, RUNS))


def repo_runs() -> dict:
    """The repository's own ``runs.toml``: the file names the blocks declare as sources."""
    return tomllib.loads((REPO / RUNS).read_text(encoding="utf-8"))


def search(root: Path, rel: str, pattern: str) -> re.Match[str]:
    """The first match of ``pattern`` (multiline) in ``rel``; ValueError if there is none."""
    match = re.search(pattern, read_text(root, rel), re.MULTILINE)
    if match is None:
        raise ValueError(f"{rel} has no line matching {pattern!r}")
    return match


@memo
def read_csv(root: Path, rel: str) -> pd.DataFrame:
    """A committed CSV file as a DataFrame."""
    read_text(root, rel)
    return pd.read_csv(root / rel)


def final_stats(root: Path, rel: str) -> pd.DataFrame:
    """The rows of a stats.csv at its last iteration, indexed by scheme."""
    stats = read_csv(root, rel)
    return stats[stats["iteration"] == stats["iteration"].max()].set_index("scheme")


def cells(line: str) -> list[str]:
    """The stripped cells of one Markdown table row."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def section_table(root: Path, rel: str, heading: str) -> pd.DataFrame:
    """The first Markdown table under the heading ``heading`` of ``rel``, as strings."""
    text = read_text(root, rel)
    start = text.find(heading)
    if start < 0:
        raise ValueError(f"{rel} has no heading {heading!r}")
    lines = [ln for ln in text[start:].splitlines() if ln.startswith("|")]
    rows: list[list[str]] = []
    for ln in text[start:].splitlines()[1:]:
        if ln.startswith("|"):
            rows.append(cells(ln))
        elif rows:
            break
    if not lines or len(rows) < 2:
        raise ValueError(f"{rel} has no table under {heading!r}")
    return pd.DataFrame(rows[2:], columns=rows[0])


def quoted(root: Path, rel: str, keep: Callable[[str], bool] = lambda line: True) -> str:
    """The lines of ``rel`` that ``keep`` accepts, as a fenced text block naming the file."""
    lines = [line.rstrip() for line in read_text(root, rel).splitlines() if keep(line)]
    return "```text\n" + "\n".join(lines) + f"\n```\n(`{rel}`)\n"


def md_table(header: list[str], rows: list[list[str]], align: str | None = None) -> str:
    """A Markdown table; ``align`` has one character per column, 'l' or 'r'."""
    align = align or "l" * len(header)
    rule = ["---:" if a == "r" else "---" for a in align]
    lines = [header, rule, *rows]
    return "\n".join("| " + " | ".join(str(c) for c in ln) + " |" for ln in lines)


def num(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals and a thin-space-free thousands separator (a space)."""
    return f"{x:,.{digits}f}".replace(",", " ")


def listing(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def slug(scheme: str) -> str:
    """A scheme's name as a marker name: 'API(0.1)' -> 'api-0.1', 'CPI+' -> 'cpi-plus'."""
    return scheme.lower().replace("+", "-plus").replace("(", "-").replace(")", "")
