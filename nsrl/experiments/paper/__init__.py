"""``paper``: section 5's full protocol (27 Garnet instances x 30 MDPs x 30 runs x 8 schemes).

Its analysis is the report every results folder gets (:mod:`nsrl.experiments.report`): the
paper's four statistics, overall and conditioned on n_S, n_A and b, Figure "expall", and
section 5's observations as checks (:mod:`nsrl.experiments.observations`).
"""

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.paper.sweep import SWEEP

EXPERIMENT = Experiment("paper", SWEEP, question="Section 5 of Scherrer (2014), in full")
