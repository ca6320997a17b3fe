"""``bigger``: section 5 on grid worlds and the discretised mountain car, 10^4 and 10^5 states.

Variants by domain family and greedy operator on one protocol; the analysis is their combined
table, the loss against transitions and each learner's distance to the exact operator
(:mod:`nsrl.experiments.bigger.analysis`). ``bigger-powered`` is the same study with
replicated units, converged curves and statistics (:mod:`nsrl.experiments.bigger.powered`);
``bigger-powered-tiny`` runs it in seconds.
"""

from nsrl.experiments.bigger.analysis import analyse
from nsrl.experiments.bigger.powered import EXPERIMENT as POWERED
from nsrl.experiments.bigger.powered import TINY as POWERED_TINY
from nsrl.experiments.bigger.sweep import SWEEP, VARIANTS
from nsrl.experiments.experiment import Experiment

EXPERIMENT = Experiment("bigger", SWEEP, VARIANTS,
                        "Section 5 on bigger structured domains with informative features",
                        analyse)

__all__ = ["EXPERIMENT", "POWERED", "POWERED_TINY", "SWEEP", "VARIANTS", "analyse"]
