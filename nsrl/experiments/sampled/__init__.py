"""``sampled``: section 5 with greedy steps learned from samples, beside the projected operator.

Variants by operator and representation on one protocol; the analysis is their combined
table and the loss against transitions (:mod:`nsrl.experiments.sampled.analysis`).
"""

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.sampled.analysis import analyse
from nsrl.experiments.sampled.sweep import SWEEP, VARIANTS

EXPERIMENT = Experiment("sampled", SWEEP, VARIANTS,
                        "Section 5 with greedy steps learned from samples", analyse)
