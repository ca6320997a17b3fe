"""The Gymnasium side of nsrl, installed as ``nsrl.envs``.

Names load lazily (PEP 562), so that ``import nsrl`` (which registers the ids) stays light.
"""

from importlib import import_module

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
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'nsrl.envs' has no attribute {name!r}")
