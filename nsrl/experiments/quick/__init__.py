"""``quick``: the README's default, a telling subset of the paper's protocol in minutes.

Its analysis is the paper's (:mod:`nsrl.experiments.paper`): the report of its folder.
"""

from nsrl.experiments.experiment import Experiment
from nsrl.experiments.quick.sweep import SWEEP

EXPERIMENT = Experiment("quick", SWEEP, question="Section 5 of Scherrer (2014), a subset")
