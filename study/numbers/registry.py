"""The registry of generated blocks: one function per block, each reading committed results.

A *block* is a piece of a Markdown page (a table, a sentence, a single number) that quotes a
result. Its text is produced by a renderer registered here under a name; the page holds the
rendered text between markers (:mod:`study.numbers.markers`). A renderer takes the repository's
root folder and returns the block's text; it declares the result files it reads, so that a
stale or broken block can be traced to its source.

Example:
    >>> from study.numbers.registry import BLOCKS, block
    >>> @block("example-answer", sources=())
    ... def _answer(root):
    ...     return "42"
    >>> BLOCKS["example-answer"].render(".")
    '42'
    >>> del BLOCKS["example-answer"]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Renderer = Callable[[Path], str]


@dataclass(frozen=True)
class Block:
    """A registered block: its name, the result files it reads and its renderer."""

    name: str
    sources: tuple[str, ...]
    renderer: Renderer
    optional: bool = False

    def render(self, root: Path | str) -> str:
        """The block's text from the result files under ``root``."""
        return self.renderer(Path(root))


BLOCKS: dict[str, Block] = {}


def block(name: str, sources: tuple[str, ...] | list[str], optional: bool = False
          ) -> Callable[[Renderer], Renderer]:
    """Register ``fn(root) -> str`` as the renderer of the generated block ``name``.

    Args:
        name: the name written in the page's markers (letters, digits, ``-``, ``_``, ``.``).
        sources: the result files it reads, relative to the repository root.
        optional: True for one of a family of values registered in a loop, of which a page
            may quote only some; a block that is not optional must appear on some page.

    Raises:
        ValueError: if the name is already registered or is not a valid marker name.
    """
    if not name or not all(c.isalnum() or c in "-_." for c in name):
        raise ValueError(f"block name should be letters, digits, '-', '_' or '.', got {name!r}")
    if name in BLOCKS:
        raise ValueError(f"a generated block named {name!r} is already registered "
                         f"(by {BLOCKS[name].renderer.__module__}); choose another name")

    def register(fn: Renderer) -> Renderer:
        BLOCKS[name] = Block(name, tuple(sources), fn, optional)
        return fn

    return register
