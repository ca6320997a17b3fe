"""The sizes of the presets that ``nsrl reproduce`` runs, as the results pages quote them.

They follow from the sweeps' definitions (:func:`nsrl.experiments.loader.load_sweep`), not
from a result file: a preset whose size changes makes the pages that quote it stale.
"""

from __future__ import annotations

from pathlib import Path

from study.numbers.registry import block


def size(scheme_iterations: int) -> str:
    """'19.44 M' or '384 k': a count of scheme-iterations as the pages write it.

    Examples:
        >>> size(19_440_000), size(384_000)
        ('19.44 M', '384 k')
    """
    if scheme_iterations >= 10**6:
        return f"{scheme_iterations / 1e6:.2f} M"
    return f"{scheme_iterations / 1e3:.0f} k"


def _register(preset: str) -> None:
    def render(root: Path) -> str:
        from nsrl.experiments.loader import load_sweep

        return size(load_sweep(preset).scheme_iterations)
    block(f"preset.{preset}.scheme-iterations", sources=())(render)


for _preset in ("paper", "quick"):
    _register(_preset)


@block("preset.paper.scheme-iterations.per-n-states", sources=())
def _per_size(root: Path) -> str:
    """The paper protocol's scheme-iterations at one value of n_S (each has the same share)."""
    from nsrl.experiments.loader import load_sweep

    sweep = load_sweep("paper")
    return f"{sweep.scheme_iterations / len(sweep.n_states) / 1e6:.1f} M"


@block("preset.paper.ddof-gap", sources=())
def _ddof_gap(root: Path) -> str:
    """How much a sample std exceeds the population one with the paper's runs per MDP."""
    from nsrl.experiments.loader import load_sweep

    n = load_sweep("paper").n_runs
    return f"{(n / (n - 1)) ** 0.5 - 1:.1%}"
