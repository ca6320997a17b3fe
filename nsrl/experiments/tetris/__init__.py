"""``tetris-small``, ``tetris-large``: the paper's schemes on Tetris with DPI's and CBMPI's step.

Which scheme works best when the greedy step is learned from rollouts on a problem no model
fits, against the published CBMPI and DPI curves (Scherrer et al., JMLR 2015): the sweeps are
:mod:`nsrl.experiments.tetris.sweep`, the analysis (curves beside the published figures,
intervals, tests between schemes) :mod:`nsrl.experiments.tetris.analysis`.
``tetris-tiny`` runs the same path in seconds.
"""

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.tetris.analysis import analyse
from nsrl.experiments.tetris.sweep import LARGE, SMALL, SMALL_VARIANTS, TINY

EXPERIMENT = Experiment("tetris-small", SMALL, SMALL_VARIANTS,
                        "Scherrer's schemes on Tetris 10 x 10 with CBMPI's and DPI's step",
                        analyse)
LARGE_EXPERIMENT = Experiment("tetris-large", LARGE, {},
                              "Scherrer's schemes on Tetris 10 x 20 with CBMPI's step", analyse)
TINY_EXPERIMENT = Experiment("tetris-tiny", TINY, {"cbmpi": {}, "dpi": {
    "operator": {"name": "dpi", "options": {**TINY.operator.options, "m": 3}},
    "schemes": ("api",)}}, "tetris-small's path in seconds (6 x 8 board)", analyse)

__all__ = ["EXPERIMENT", "LARGE_EXPERIMENT", "TINY_EXPERIMENT"]
