"""A complete nsrl plugin: one greedy operator, one scheme and one MDP family, and a simulated
domain without a model (a corridor, scored by the steps it takes) with an operator built on
its env.

``nsrl --plugin nsrl_demo_plugin ...``, ``plugins = ["nsrl_demo_plugin"]`` in a TOML sweep, or
an entry point of the group ``nsrl.plugins`` makes these names known in every process.
docs/guide/extending.md walks through this file.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

import nsrl
from nsrl.domains import Axis
from nsrl.greedy.sampling.quality import Score
from nsrl.params import param
from nsrl.schemes.base import Step


class RandomisedGreedy:
    """The exact greedy step, each state's action replaced by a uniform one w.p. ``epsilon``."""

    def __init__(self, mdp: nsrl.FiniteMDP, epsilon: float):
        self.mdp, self.epsilon = mdp, epsilon
        self.exact = nsrl.ExactGreedy(mdp)

    def greedy(self, target, rho, rng: np.random.Generator) -> nsrl.Greedy:
        """Greedy w.r.t. v_target, then each action redrawn with probability epsilon."""
        actions = self.exact.greedy(target, rho, rng).policy.actions.copy()
        redraw = rng.random(actions.shape) < self.epsilon
        actions[redraw] = rng.integers(self.mdp.n_actions, size=int(redraw.sum()))
        return nsrl.Greedy(nsrl.Deterministic(actions))

    def value(self, policy, rng: np.random.Generator) -> float:
        """nu v_pi, exactly."""
        return self.exact.value(policy, rng)


class APIOccupancy:
    """API whose greedy step is taken under d_{pi_k, nu} instead of nu (memory 1)."""

    name = "API-occ"
    params: dict = {}
    fold, step_rule = "replace", "full"

    def start(self, pi0) -> None:
        """Set pi_0."""
        self.pi = pi0

    def step(self, operator, rng: np.random.Generator) -> Step:
        """pi_{k+1} <- G(d_{pi_k, nu}, v_{pi_k})."""
        rho = nsrl.Occupancy(self.pi)
        g = operator.greedy(self.pi, rho, rng)
        target, self.pi = self.pi, g.policy
        return Step(target=target, rho=rho, greedy=g)

    @property
    def output(self):
        """pi_k."""
        return self.pi


def chain(n_states: int, *, gamma: float, rng: np.random.Generator, n_features: int | None,
          slip: float) -> nsrl.FiniteMDP:
    """A chain of n_states states: left or right, slipping the other way w.p. ``slip``.

    The reward is 1 at a right end drawn from ``rng``'s choice of end (the instance's random
    part); Phi holds the first ``n_features`` powers of the position in [0, 1].
    """
    s = np.arange(n_states)
    left, right = np.maximum(s - 1, 0), np.minimum(s + 1, n_states - 1)
    next_states = np.stack([np.stack([left, right], -1), np.stack([right, left], -1)], 1)
    probs = np.broadcast_to([1 - slip, slip], (n_states, 2, 2))
    R = np.zeros(n_states)
    R[n_states - 1 if rng.random() < 0.5 else 0] = 1.0
    x = s / max(n_states - 1, 1)
    phi = np.stack([x**k for k in range(n_features or 3)], axis=1)
    return nsrl.FiniteMDP.from_successors(next_states, probs, R, gamma, features=phi)


nsrl.register_operator("randomised", RandomisedGreedy,
                       {"epsilon": param(float, 0.1, ge=0, le=1)},
                       summary="the exact greedy step with a fraction of random actions")
nsrl.register_scheme("api-occ", APIOccupancy)
nsrl.register_domain("chain", chain, {"slip": param(float, 0.1, ge=0, le=0.5)},
                     axes=(Axis("n_states", "s", 3),), gym_id="Chain-v0",
                     summary="a chain that pays at one end")


class Corridor(gym.Env):
    """``length`` cells, a step left or right (the other way w.p. ``slip``), -1 a step.

    An episode starts in a uniform cell and ends at the right end (or is cut at 3 x length
    steps). nsrl's state convention: ``info["state"]`` is the cell, and ``reset(options={"state":
    s})`` starts in ``s``; the observation is the cell's position in [0, 1].
    """

    def __init__(self, length: int, slip: float = 0.1) -> None:
        self.length, self.slip = length, slip
        self.observation_space = gym.spaces.Box(0.0, 1.0, (1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def _observation(self) -> np.ndarray:
        return np.array([self.cell / (self.length - 1)], dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        """A uniform cell but the last, or ``options["state"]``."""
        super().reset(seed=seed)
        start = int(self.np_random.integers(self.length - 1))
        self.cell, self.t = int((options or {}).get("state", start)), 0
        return self._observation(), {"state": self.cell}

    def step(self, action):
        """Move (slipping w.p. ``slip``); -1 per step until the right end."""
        move = 1 if action == 1 else -1
        if self.np_random.random() < self.slip:
            move = -move
        self.cell = min(max(self.cell + move, 0), self.length - 1)
        self.t += 1
        done = self.cell == self.length - 1
        return self._observation(), -1.0, done, self.t >= 3 * self.length, {"state": self.cell}


def steps(env, games: int, seed: int):
    """The corridor's estimate: mean steps to the end over ``games`` games (game i: seed + i)."""
    play = nsrl.MonteCarlo(env, games=games, seed=seed)

    def estimate(policy) -> Score:
        score = play(policy)  # the mean return: minus the steps
        return Score(-score.mean, score.ci, score.games)

    return estimate


def rollouts_on_env(env, gamma: float, n_states: int, horizon: int):
    """Rollouts + cost-sensitive classification on the env itself (no model behind it)."""
    return nsrl.RolloutCSC(env, nsrl.SoftmaxCSC(), gamma=gamma, n_states=n_states,
                           horizon=horizon, critic=None)


nsrl.register_operator("env-rollouts", rollouts_on_env,
                       {"gamma": param(float, 0.95, gt=0, le=1),
                        "n_states": param(int, 6, ge=1), "horizon": param(int, 10, ge=1)},
                       sample_based=True, summary="rollouts + CSC on a simulator's env")
nsrl.register_domain("corridor", None, {"slip": param(float, 0.1, ge=0, le=0.5)},
                     axes=(Axis("length", "l", 2),), env=Corridor, estimate=steps,
                     quality=("steps", "lower"), summary="a simulated corridor (no model)")
