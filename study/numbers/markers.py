"""Markers of generated text in Markdown pages, and the render / check of one page.

Two forms, both invisible once the Markdown is rendered:

- a block on lines of its own::

      <!-- BEGIN generated: NAME -->
      ...rendered text...
      <!-- END generated: NAME -->

- inline, inside a sentence: ``<!-- gen: NAME -->26.63<!-- /gen -->``.

Example:
    >>> from study.numbers.markers import render_text
    >>> page = "pi_0: <!-- gen: x -->0<!-- /gen -->."
    >>> render_text(page, {"x": lambda: "26.63"})[0]
    'pi_0: <!-- gen: x -->26.63<!-- /gen -->.'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

BLOCK_RE = re.compile(
    r"(?P<open><!-- BEGIN generated: (?P<name>[\w.-]+) -->\n)(?P<body>.*?)"
    r"(?P<close><!-- END generated: (?P<end>[\w.-]+) -->)", re.DOTALL)
INLINE_RE = re.compile(r"(?P<open><!-- gen: (?P<name>[\w.-]+) -->)(?P<body>[^\n]*?)"
                       r"(?P<close><!-- /gen -->)")
ANY_OPEN_RE = re.compile(r"<!-- (?:BEGIN generated|gen): ([\w.-]+) -->")
FENCE_RE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def _in_fence(text: str, pos: int) -> bool:
    """True if ``pos`` is inside a fenced code block (where markers are examples)."""
    return any(m.start() <= pos < m.end() for m in FENCE_RE.finditer(text))


@dataclass(frozen=True)
class Finding:
    """One problem with a page: the block's name, its line and what is wrong."""

    name: str
    line: int
    problem: str


def names_in(text: str) -> list[str]:
    """The names of every generated block and inline value in ``text``, in order."""
    return [m[1] for m in ANY_OPEN_RE.finditer(text) if not _in_fence(text, m.start())]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _first_difference(old: str, new: str) -> str:
    for a, b in zip(old.splitlines(), new.splitlines(), strict=False):
        if a != b:
            return f"the page has {a.strip()!r}, the data give {b.strip()!r}"
    return (f"the page has {len(old.splitlines())} line(s), the data give "
            f"{len(new.splitlines())}")


def render_text(text: str, renderers: Mapping[str, Callable[[], str]]
                ) -> tuple[str, list[Finding]]:
    """Replace every generated part of ``text`` by its renderer's output.

    Args:
        text: a Markdown page.
        renderers: name -> a function of no argument returning the block's text.

    Returns:
        The page with every block re-rendered, and the findings: blocks whose text differed
        from their rendering (stale), unknown names, unclosed or mismatched markers and
        renderers that failed. A block with a finding other than "stale" is left as it was.
    """
    findings: list[Finding] = []

    def substitute(match: re.Match[str], block_form: bool) -> str:
        name, body = match["name"], match["body"]
        if _in_fence(match.string, match.start()):
            return match[0]
        line = _line_of(match.string, match.start())
        if block_form and match["end"] != name:
            findings.append(Finding(name, line, f"closed by the END marker of {match['end']!r}"))
            return match[0]
        if name not in renderers:
            findings.append(Finding(name, line, "no renderer is registered under this name "
                                    "(register one with study.numbers.registry.block)"))
            return match[0]
        try:
            new = renderers[name]()
        except (OSError, KeyError, ValueError, IndexError) as exc:
            findings.append(Finding(name, line, f"its renderer failed: {exc!r}"))
            return match[0]
        line_start = match.string.rfind("\n", 0, match.start()) + 1
        if not block_form and not match.string[line_start:match.start()].strip():
            findings.append(Finding(name, line, "an inline value starts its line, which "
                                    "Markdown reads as an HTML block: put a word before it"))
        if block_form:
            new = new.rstrip("\n") + "\n"
        elif "\n" in new:
            findings.append(Finding(name, line, "an inline value must be one line"))
            return match[0]
        if new != body:
            findings.append(Finding(name, line, "stale: " + _first_difference(body, new)))
        return match["open"] + new + match["close"]

    out = BLOCK_RE.sub(lambda m: substitute(m, True), text)
    out = INLINE_RE.sub(lambda m: substitute(m, False), out)
    closed = {m["name"] for m in BLOCK_RE.finditer(text)} | {
        m["name"] for m in INLINE_RE.finditer(text)}
    for match in ANY_OPEN_RE.finditer(text):
        if match[1] not in closed and not _in_fence(text, match.start()):
            findings.append(Finding(match[1], _line_of(text, match.start()),
                                    "opening marker without its closing marker"))
    return out, findings
