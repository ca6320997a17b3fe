"""Render or check every generated block of the repository's pages.

The pages are README.md and every Markdown file under docs/. ``render_pages`` rewrites the
stale blocks; ``check_pages`` only reports them (and any marker without a renderer, any
renderer used by no page, any renderer that fails, and any number typed in a results page's
prose outside the markers: :mod:`study.numbers.prose`), which is what ``--check`` and the test
do.

Example:
    >>> from study.numbers.render import check_pages
    >>> callable(check_pages)
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from study.numbers.markers import Finding, names_in, render_text
from study.numbers.prose import RESULTS_PAGES, prose_numbers
from study.numbers.registry import BLOCKS
from study.numbers.sources import one_pass


@dataclass(frozen=True)
class PageFinding:
    """A finding located in a page (``page`` relative to the root)."""

    page: str
    finding: Finding

    def __str__(self) -> str:
        if not self.finding.name:  # a number in prose, not a block
            return f"{self.page}:{self.finding.line}: {self.finding.problem}"
        sources = BLOCKS[self.finding.name].sources if self.finding.name in BLOCKS else ()
        src = f" [source: {', '.join(sources)}]" if sources else ""
        return (f"{self.page}:{self.finding.line}: generated block '{self.finding.name}': "
                f"{self.finding.problem}{src}")


def pages(root: Path) -> list[Path]:
    """README.md and every Markdown page under docs/, sorted."""
    found = [root / "README.md"] if (root / "README.md").is_file() else []
    return found + sorted((root / "docs").rglob("*.md"))


def _pass(root: Path, write: bool) -> list[PageFinding]:
    with one_pass():  # each result file is read once, each block rendered once
        return _pass_once(Path(root), write)


def _pass_once(root: Path, write: bool) -> list[PageFinding]:
    rendered: dict[str, str] = {}

    def render(name: str) -> str:
        if name not in rendered:
            rendered[name] = BLOCKS[name].render(root)
        return rendered[name]

    renderers = {name: (lambda n=name: render(n)) for name in BLOCKS}
    findings: list[PageFinding] = []
    used: set[str] = set()
    for page in pages(root):
        text = page.read_text(encoding="utf-8")
        names = names_in(text)
        if not names:
            continue
        used.update(names)
        new, found = render_text(text, renderers)
        rel = page.relative_to(root).as_posix()
        findings += [PageFinding(rel, f) for f in found]
        if write and new != text:
            page.write_text(new, encoding="utf-8")
    findings += typed_numbers(root)
    for name in sorted(n for n in set(BLOCKS) - used if not BLOCKS[n].optional):
        findings.append(PageFinding("(registry)", Finding(
            name, 0, "registered but used by no page: add its markers to a page or remove it")))
    return findings


def typed_numbers(root: Path) -> list[PageFinding]:
    """Every number typed in the prose of a results page, outside the generated markers."""
    findings = []
    for rel in RESULTS_PAGES:
        if (root / rel).is_file():
            findings += [PageFinding(rel, Finding("", n.line, (
                f"the number {n.number!r} is typed in prose: put it inside generated markers "
                f"(or, if it defines rather than measures, on study.numbers.prose's allow-list)")))
                for n in prose_numbers((root / rel).read_text(encoding="utf-8"), rel)]
    return findings


def check_pages(root: Path | str) -> list[PageFinding]:
    """Every problem of the pages under ``root``; an empty list when all blocks are current."""
    return _pass(Path(root), write=False)


def render_pages(root: Path | str) -> list[PageFinding]:
    """Rewrite every stale block under ``root``; return the problems that remain."""
    findings = _pass(Path(root), write=True)
    return [f for f in findings if not f.finding.problem.startswith("stale")]
