"""The Gymnasium side of nsrl, installed as ``nsrl.envs``.

Names load lazily (PEP 562), so that ``import nsrl`` (which registers the ids) stays light.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers
    from .export import to_jaxdp, to_mdptoolbox, to_mushroom, transition_table  # noqa: F401
    from .finite import FiniteMDPEnv  # noqa: F401
    from .garnet import GarnetEnv  # noqa: F401
    from .gridworld import GridWorldEnv, GridWorldVectorEnv  # noqa: F401
    from .mountain_car import MountainCarGridEnv, MountainCarGridVectorEnv  # noqa: F401
    from .saved_state import SavedState  # noqa: F401
    from .tetris import TetrisEnv  # noqa: F401
    from .vector import FiniteMDPVectorEnv, GarnetVectorEnv  # noqa: F401

_WHERE = {
    "FiniteMDPEnv": "nsrl.envs.finite",
    "GarnetEnv": "nsrl.envs.garnet",
    "FiniteMDPVectorEnv": "nsrl.envs.vector",
    "GarnetVectorEnv": "nsrl.envs.vector",
    "transition_table": "nsrl.envs.export",
    "to_mdptoolbox": "nsrl.envs.export",
    "to_mushroom": "nsrl.envs.export",
    "GridWorldEnv": "nsrl.envs.gridworld",
    "GridWorldVectorEnv": "nsrl.envs.gridworld",
    "MountainCarGridEnv": "nsrl.envs.mountain_car",
    "MountainCarGridVectorEnv": "nsrl.envs.mountain_car",
    "to_jaxdp": "nsrl.envs.export",
    "SavedState": "nsrl.envs.saved_state",
    "TetrisEnv": "nsrl.envs.tetris",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'nsrl.envs' has no attribute {name!r}")
