"""The domain a sweep runs on: Garnets (the paper's), or a structured family with features.

A structured family (``domain = "gridworld"`` or ``"mountain-car"``) reads the sweep's grid of
instances as follows: ``n_states`` is the number of grid cells asked for, the grid's side is
``round(sqrt(n_states))`` (so 100000 gives 316 x 316 = 99 856 cells, fewer free ones for a
grid world with obstacles); ``n_actions`` and ``branching`` are the family's own (4 and 4
for grid worlds, 3 and 3 for the mountain car) and must be given as such. MDP i of an
instance is drawn from the sweep's derived instance seed (grid worlds: obstacles and reward
map; the mountain car has no random part, so its MDPs are one model and only the runs'
seeds differ). Phi is the sweep's ``feature_map`` of the states' coordinates with
``n_features`` features (default :data:`DEFAULT_FEATURES`): every operator of the sweep
(projected, LSTD-Q and rollouts with ``representation = "phi"``) uses it.
"""

from __future__ import annotations

import math

import numpy as np

from nsrl.model.garnet import default_features, garnet, garnet_nbytes
from nsrl.model.gridworld import gridworld, gridworld_nbytes
from nsrl.model.mountain_car import mountain_car, mountain_car_nbytes
from nsrl.model.structured import with_features

# domain -> (n_actions, branching) of its models
DOMAINS = {"garnet": None, "gridworld": (4, 4), "mountain-car": (3, 3)}
FEATURE_MAPS = ("rbf", "tiles", "rff")  # nsrl.greedy.feature_maps.KINDS (tested equal)
DEFAULT_FEATURES = 100


def side(n_states: int) -> int:
    """The grid's side for ``n_states`` cells asked for: round(sqrt(n_states)), at least 2."""
    return max(2, round(math.sqrt(n_states)))


def check_instances(domain: str, n_actions: tuple, branching: tuple) -> None:
    """Refuse an instance grid that is not the structured family's own (n_A, b)."""
    family = DOMAINS[domain]
    if family is None:
        return
    a, b = family
    if tuple(n_actions) != (a,) or tuple(branching) != (b,):
        raise ValueError(f"sweep field 'domain': {domain} models have n_actions = {a} and "
                         f"branching = {b}; set n_actions = [{a}] and branching = [{b}] (the "
                         f"size is n_states), got {list(n_actions)} and {list(branching)}.")


def build_mdp(sweep, shard):
    """The MDP of ``shard`` (its instance seed derived by the sweep), with its features."""
    rng = np.random.Generator(np.random.PCG64(sweep.mdp_seed(shard)))
    if sweep.domain == "garnet":
        return garnet(shard.n_states, shard.n_actions, shard.branching,
                      sweep.features_of(shard.n_states), sweep.gamma, seed=rng)
    from nsrl.greedy.feature_maps import coordinate_features

    n = side(shard.n_states)
    base = gridworld(n, gamma=sweep.gamma, seed=rng) if sweep.domain == "gridworld" else \
        mountain_car(n, n, gamma=sweep.gamma)
    phi = coordinate_features(base.features, sweep.feature_map,
                              sweep.n_features or DEFAULT_FEATURES)
    return with_features(base, phi)


def model_nbytes(sweep, shard) -> int:
    """Estimated peak bytes of :func:`build_mdp` (the model and Phi)."""
    if sweep.domain == "garnet":
        return garnet_nbytes(shard.n_states, shard.n_actions,
                             sweep.features_of(shard.n_states)
                             or default_features(shard.n_states),
                             max(shard.branching, 1))
    n = side(shard.n_states)
    model = gridworld_nbytes(n) if sweep.domain == "gridworld" else mountain_car_nbytes(n, n)
    return model + 3 * 8 * n * n * (sweep.n_features or DEFAULT_FEATURES)
