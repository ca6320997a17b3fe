"""Observation modes shared by the single and vector envs: index, onehot, features."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory

MODES = ("index", "onehot", "features")


def check_mode(observation: str, mdp: FiniteMDP) -> str:
    """Return ``observation`` if it is a known mode usable with ``mdp``, else raise ValueError."""
    if observation not in MODES:
        raise ValueError(
            f"observation should be one of {MODES}, got {observation!r}; e.g. observation='index'."
        )
    if observation == "features" and mdp.features is None:
        raise ValueError(
            "observation='features' needs an MDP with features, but mdp.features is None; "
            "pass features=Phi to FiniteMDP or use observation='index'."
        )
    return observation


def feature_table(mdp: FiniteMDP) -> np.ndarray:
    """Phi as float32 (the dtype of the Box observation space), one row per state."""
    return np.ascontiguousarray(mdp.features, dtype=np.float32)


def single_space(mdp: FiniteMDP, observation: str) -> spaces.Space:
    """Observation space of one env: Discrete(n_states) or a float32 Box."""
    if observation == "index":
        return spaces.Discrete(mdp.n_states)
    if observation == "onehot":  # low, high and one observation: 12 bytes per state
        check_memory(12.0 * mdp.n_states, f"a one-hot observation space of {mdp.n_states:,} "
                     f"states", "use observation='index' or 'features'")
        return spaces.Box(0.0, 1.0, shape=(mdp.n_states,), dtype=np.float32)
    phi = feature_table(mdp)
    # Bounds are the extreme feature values, so every observation lies in the space.
    return spaces.Box(phi.min(axis=0), phi.max(axis=0), dtype=np.float32)


def encode(states: np.ndarray, mdp: FiniteMDP, observation: str, phi=None) -> np.ndarray:
    """Observations of a batch of states (int64 array): indices, one-hot rows or Phi rows."""
    if observation == "index":
        return states.copy()
    if observation == "onehot":
        out = np.zeros((states.shape[0], mdp.n_states), dtype=np.float32)
        out[np.arange(states.shape[0]), states] = 1.0
        return out
    return (feature_table(mdp) if phi is None else phi)[states]
