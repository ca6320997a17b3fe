"""Numbers in README.md and docs/ generated from the committed result files.

``python -m nsrl.docs`` re-renders every generated block; ``python -m nsrl.docs --check``
changes nothing and exits 1 naming each block whose text differs from what its data give.
Importing this package registers every renderer (one module per family of result files).
"""

from nsrl.docs import (  # noqa: F401  (each module registers its renderers)
    benchmarks,
    bigger,
    bounds,
    envs,
    paper,
    sampled,
    sampling,
    sb3,
    scale,
    sensitivity,
    tables,
    targets,
)
from nsrl.docs.registry import BLOCKS, block
from nsrl.docs.render import check_pages, render_pages

__all__ = ["BLOCKS", "block", "check_pages", "render_pages"]
