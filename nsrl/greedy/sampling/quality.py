"""A policy's quality where no model gives its exact loss: a Monte-Carlo score.

On a finite model nsrl reports the exact loss of every output policy. On a simulator (Tetris,
Gymnasium's classic control) it reports an estimate instead: the mean return of ``games``
episodes played from ``reset``, with the half-width of its 95% interval (normal approximation,
1.96 s / sqrt(n)) and the number of games. :func:`nsrl.run` and the reference engine record it
per iteration in ``History.scores``, ``History.score_ci`` and ``History.games`` when given
``estimate=MonteCarlo(env, ...)``.

The games are the same at every call (episode i is reset with seed ``seed + i`` and the policy's
own draws come from a Generator seeded alike): successive outputs of a run are compared on
common random numbers, and the run's own Generator is not touched, so a run with an estimate
computes the same policies as one without.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from nsrl.policies import AnyPolicy, NonStationary, act_masked


@dataclass(frozen=True)
class Score:
    """A Monte-Carlo estimate: ``mean`` return, ``ci`` the 95% half-width, ``games`` played."""

    mean: float
    ci: float
    games: int


class MonteCarlo:
    """Mean return of a policy over ``games`` episodes of ``env`` (module doc).

    Args:
        env: a Gymnasium env (one episode at a time); ``info["action_mask"]`` is passed to
            policies that take it.
        games: episodes per estimate (>= 2, for an interval).
        gamma: discount of the return (default 1: the total reward, e.g. Tetris' lines).
        max_steps: cut an episode after this many steps (None: play it out).
        seed: episode i is reset with ``seed + i``.

    Examples:
        >>> import gymnasium as gym, nsrl
        >>> mc = MonteCarlo(gym.make("CartPole-v1"), games=5, seed=0)
        >>> score = mc(nsrl.Constant(1))
        >>> score.games, score.mean > 0
        (5, True)
    """

    def __init__(self, env: Any, games: int = 100, *, gamma: float = 1.0,
                 max_steps: int | None = None, seed: int = 0) -> None:
        if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 2:
            raise ValueError(f"games should be an int >= 2 (an interval needs two), got "
                             f"{games!r}.")
        if not 0.0 < float(gamma) <= 1.0:
            raise ValueError(f"gamma should be in (0, 1], got {gamma!r}.")
        if max_steps is not None and (isinstance(max_steps, bool) or max_steps < 1):
            raise ValueError(f"max_steps should be a positive int or None, got {max_steps!r}.")
        self.env, self.games, self.gamma = env, int(games), float(gamma)
        self.max_steps, self.seed = max_steps, int(seed)

    def episode(self, policy: AnyPolicy, i: int) -> float:
        """The return of episode ``i`` (reset with ``seed + i``)."""
        obs, info = self.env.reset(seed=self.seed + i)
        rng = np.random.default_rng(self.seed + i)
        ret, disc, t = 0.0, 1.0, 0
        while self.max_steps is None or t < self.max_steps:
            mask = info.get("action_mask")
            mask = None if mask is None else np.asarray(mask, dtype=bool)[None]
            phase = t if isinstance(policy, NonStationary) else 0
            a = int(act_masked(policy, np.asarray([obs]), rng, mask, phase)[0])
            obs, r, terminated, truncated, info = self.env.step(a)
            ret, disc, t = ret + disc * float(r), disc * self.gamma, t + 1
            if terminated or truncated:
                break
        return ret

    def __call__(self, policy: AnyPolicy) -> Score:
        """The estimate for ``policy`` on the same ``games`` episodes as every other call."""
        returns = np.array([self.episode(policy, i) for i in range(self.games)])
        ci = 1.96 * float(returns.std(ddof=1)) / np.sqrt(self.games)
        return Score(float(returns.mean()), ci, self.games)
