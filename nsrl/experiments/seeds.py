"""Seeds derived, never drawn in sequence: a result does not depend on who computed it.

MDP ``i`` of an instance (its axes' values, e.g. n_S, n_A, b) is drawn from
``SeedSequence(seed, spawn_key=(0, *instance, i))`` and run ``j`` of a scheme on it from
``SeedSequence(seed, spawn_key=(1, *instance, i, crc32(scheme), j))``; with a sample-based
operator ``(2, *instance, i, crc32(scheme), crc32(operator), j)``. The keys are those of
every earlier nsrl release for Garnet-shaped instances, so published results regenerate. On a
domain without a model, the evaluation games of shard ``i`` start from the seed drawn from
``SeedSequence(seed, spawn_key=(3, *instance, i))`` (:func:`games_seed`), the same for every
scheme and run of the shard.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np


def mdp_seed(seed: int, instance: Sequence[int], mdp: int) -> np.random.SeedSequence:
    """The instance seed of MDP ``mdp`` of ``instance`` (the axes' values, in order)."""
    return np.random.SeedSequence(seed, spawn_key=(0, *instance, mdp))


def run_rngs(seed: int, instance: Sequence[int], mdp: int, scheme: str, n_runs: int,
             operator: str | None = None) -> list[np.random.Generator]:
    """One Generator per run of ``scheme`` on MDP ``mdp`` of ``instance``.

    Args:
        seed: the sweep's master seed.
        instance: the instance's axis values, in the domain's order.
        mdp: the MDP's index in its instance.
        scheme: the scheme's canonical name (its crc32 enters the key).
        n_runs: how many runs.
        operator: a sample-based operator's name (its crc32 enters the key), or None (the
            projected operator keeps the keys its published results were computed with).

    Examples:
        >>> a = run_rngs(2014, (50, 2, 1), 0, "API", 2)
        >>> b = run_rngs(2014, (50, 2, 1), 0, "API", 2)
        >>> float(a[1].random()) == float(b[1].random())
        True
    """
    key: tuple[int, ...] = (zlib.crc32(scheme.encode()),)
    key = (2, *key, zlib.crc32(operator.encode())) if operator is not None else (1, *key)
    return [np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        seed, spawn_key=(key[0], *instance, mdp, *key[1:], j)))) for j in range(n_runs)]


def games_seed(seed: int, instance: Sequence[int], mdp: int) -> int:
    """The first game's seed on shard ``mdp`` of ``instance`` (game i: this + i).

    Examples:
        >>> games_seed(7, (10,), 0) == games_seed(7, (10,), 0) != games_seed(7, (10,), 1)
        True
    """
    state = np.random.SeedSequence(seed, spawn_key=(3, *instance, mdp)).generate_state(1)
    return int(state[0])
