"""GarnetEnv: a Garnet random MDP (Scherrer 2014, section 5) as a Gymnasium env."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from nsrl.model.garnet import garnet
from nsrl.model.mdp import FiniteMDP

from .finite import FiniteMDPEnv


# typed: 10 and 10.0 (or 1 and True) are different keys, so that a float is refused by
# garnet() whatever was cached before (issue 47: 10.0 was accepted after a call with 10)
@lru_cache(maxsize=32, typed=True)
def _memo_garnet(n_states: int, n_actions: int, branching: int, n_features: int | None,
                 gamma: float, seed: int) -> FiniteMDP:
    return garnet(n_states, n_actions, branching, n_features, gamma, seed=seed)


def cached_garnet(n_states: int, n_actions: int, branching: int, n_features: int | None,
                  gamma: float, seed: int | np.random.Generator) -> FiniteMDP:
    """``nsrl.garnet(...)``, memoised so that every copy of an env shares one instance."""
    if isinstance(seed, int) and not isinstance(seed, bool):
        try:
            return _memo_garnet(n_states, n_actions, branching, n_features, gamma, seed)
        except TypeError:  # an unhashable argument: let garnet() explain what it expected
            pass
    return garnet(n_states, n_actions, branching, n_features, gamma, seed=seed)


class GarnetEnv(FiniteMDPEnv):
    """A Garnet G(n_states, n_actions, branching, n_features) as a continuing task.

    ## Description

    Garnets (Archibald et al. 1995) are the random MDPs of Scherrer (ICML 2014), section 5:
    each (s, a) has ``branching`` successors drawn without replacement, with probabilities
    cut by uniform points; the reward r(s) ~ U[0, 1] depends on the state only; features
    Phi[s] ~ U[0, 1]^p. ``env.unwrapped.mdp`` equals ``nsrl.garnet(...)`` with the same
    arguments (the same instance for all envs built with them).

    ## Action Space

    ``Discrete(n_actions)``.

    ## Observation Space

    - ``"index"`` (default): ``Discrete(n_states)``.
    - ``"onehot"``: ``Box(0, 1, (n_states,), float32)``.
    - ``"features"``: ``Box(low, high, (n_features,), float32)``, the row Phi[s]; low and high
      are the column extremes of Phi (inside [0, 1]).

    ## Rewards

    r(s) of the state left, in [0, 1].

    ## Starting State

    Uniform over the states, or ``reset(options={"state": s})``.

    ## Episode End

    Never terminated; ``gym.make("Garnet-v0")`` truncates after 1000 steps.

    ## Arguments

    - ``n_states`` (100), ``n_actions`` (4), ``branching`` (5): the Garnet's sizes.
    - ``n_features``: p, default ``n_states // 10``.
    - ``gamma``: discount factor of the model, 0.99.
    - ``seed``: the instance seed (0), separate from ``reset(seed=...)``.
    - ``observation``: ``"index"``, ``"onehot"`` or ``"features"``.
    - ``backend``: kernel backend of ``sample``, ``"numba"``, ``"numpy"`` or None (see
      nsrl.model.kernels); ``step`` applies the same rule to one uniform, identical for both.
    - ``render_mode``: None, ``"ansi"`` or ``"rgb_array"`` (see :class:`FiniteMDPEnv`).

    ## Version History

    - v0: initial version.

    Examples:
        >>> import gymnasium as gym, nsrl
        >>> env = gym.make("nsrl:Garnet-v0", n_states=50, n_actions=2, branching=2, seed=3)
        >>> env.unwrapped.mdp == nsrl.garnet(50, 2, 2, seed=3)
        True
    """

    def __init__(
        self,
        n_states: int = 100,
        n_actions: int = 4,
        branching: int = 5,
        n_features: int | None = None,
        gamma: float = 0.99,
        seed: int = 0,
        observation: str = "index",
        backend: str | None = None,
        render_mode: str | None = None,
    ) -> None:
        mdp = cached_garnet(n_states, n_actions, branching, n_features, gamma, seed)
        super().__init__(mdp, observation, backend, render_mode)
