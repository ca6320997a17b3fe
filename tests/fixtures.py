"""Helpers shared by tests of several packages; import them as ``from fixtures import ...``.

The pytest fixtures (``small_garnet``, ``rng``) are in conftest.py, which puts this folder
on the import path.
"""

import numpy as np

import nsrl
from nsrl.schemes import SCHEMES

# What each kind of argument is tried with: the paper's value, an interior one, the full step
# (alpha = 1, where a mixture is replaced by the greedy policy) and NSPI(1) == API.
ARGUMENTS = {None: [None], "alpha": ["0.1", "0.5", "1"], "m": ["1", "4"]}


def registered_names():
    """Every registered scheme name, with each kind of argument its class takes."""
    return [e.base if arg is None else f"{e.base}({arg})"
            for e in SCHEMES.values() for arg in ARGUMENTS[e.argument]]


class CountingEnv:
    """Delegates the generative model of a vector env and counts the transitions drawn."""

    def __init__(self, env):
        self.env, self.mdp, self.count = env, env.mdp, 0
        self.single_observation_space = env.single_observation_space

    def sample(self, states, actions, rng):
        self.count += len(states)
        return self.env.sample(states, actions, rng)

    def observe(self, states):
        return self.env.observe(states)


def policies(mdp, seed=0):
    rng = np.random.default_rng(seed)
    p = [nsrl.Deterministic(rng.integers(0, mdp.n_actions, mdp.n_states)) for _ in range(3)]
    return {
        "deterministic": p[0],
        "mixture": nsrl.Mixture([(0.3, p[0]), (0.7, p[1])]),
        "loop": nsrl.NonStationary(p, loop=True),
        "finite": nsrl.NonStationary(p, loop=False),
        "empty": nsrl.NonStationary.empty(),
    }
