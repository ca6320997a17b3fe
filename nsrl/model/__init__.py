"""The finite model: FiniteMDP, Garnets, toy_text conversion and the batched transition kernel.

The bottom layer of nsrl: nothing here imports another part of nsrl.
"""

from nsrl.model.garnet import garnet
from nsrl.model.mdp import FiniteMDP, check_distribution

__all__ = ["FiniteMDP", "check_distribution", "garnet"]
