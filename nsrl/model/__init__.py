"""The finite model: FiniteMDP, Garnets, structured domains, toy_text conversion, the kernel.

The bottom layer of nsrl: nothing here imports another part of nsrl.
"""

from nsrl.model.garnet import garnet
from nsrl.model.gridworld import gridworld
from nsrl.model.mdp import FiniteMDP, check_distribution
from nsrl.model.mountain_car import mountain_car
from nsrl.model.structured import with_features

__all__ = ["FiniteMDP", "check_distribution", "garnet", "gridworld", "mountain_car",
           "with_features"]
