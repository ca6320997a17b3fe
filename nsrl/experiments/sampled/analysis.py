"""The sampled study's analysis: the variants' table and the loss against transitions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nsrl.experiments.plots import plot_loss_vs_samples
from nsrl.experiments.report import load_per_mdp
from nsrl.experiments.variants import write_summary


def analyse(out, experiment) -> list[Path]:
    """Write ``sampled.csv``, ``sampled.md`` and ``sampled_loss_vs_samples.png``."""
    return write_summary(out, experiment, figures=[loss_vs_samples])


def loss_vs_samples(out, experiment) -> Path:
    """Mean loss against transitions drawn, one panel per sample-based variant."""
    parts = []
    for name, sweep in experiment.sweeps().items():
        folder = experiment.folder(out, name)
        if not sweep.sampled or not (folder / "manifest.json").exists():
            continue
        _, pm, _ = load_per_mdp(folder)
        curves = pm.groupby(["scheme", "iteration"])[["samples", "mean"]].mean().reset_index()
        parts.append(curves.assign(panel=name))
    path = Path(out) / f"{experiment.name}_loss_vs_samples.png"
    if parts:
        plot_loss_vs_samples(pd.concat(parts), path, experiment.question)
    return path
