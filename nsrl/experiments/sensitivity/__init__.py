"""``sensitivity``: how section 5's observations depend on what the paper leaves unsaid.

One variant per reading (docs/fidelity.md), each an ordinary results folder; the analysis is
their combined table (:mod:`nsrl.experiments.sensitivity.analysis`).
"""

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.sensitivity.analysis import analyse
from nsrl.experiments.sensitivity.sweep import SWEEP, VARIANTS

EXPERIMENT = Experiment(
    "sensitivity", SWEEP, VARIANTS,
    "How section 5's observations depend on the readings of what the paper leaves unsaid",
    analyse)
