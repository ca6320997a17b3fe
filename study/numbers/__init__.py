"""Numbers in README.md and docs/ generated from the committed result files.

``python -m study.numbers`` re-renders every generated block; ``python -m study.numbers --check``
changes nothing and exits 1 naming each block whose text differs from what its data give.
Importing this package registers every renderer (one module per family of result files).
"""

from study.numbers import (  # noqa: F401  (each module registers its renderers)
    benchmarks,
    bigger,
    bounds,
    envs,
    grid_rollout_budget,
    grid_transitions,
    paper,
    powered,
    powered_rerun,
    presets,
    readings,
    sampled,
    sampling,
    sb3,
    scale,
    sensitivity,
    tables,
    targets,
    tetris,
    toolkit,
)
from study.numbers.registry import BLOCKS, block
from study.numbers.render import check_pages, render_pages

__all__ = ["BLOCKS", "block", "check_pages", "render_pages"]
