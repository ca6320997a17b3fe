"""Linear scoring policies: pi_w(s) = argmax over legal actions a of w . phi(s, a).

The policy of classification-based policy iteration where no table fits (DPI and CBMPI on
Tetris: Gabillon, Ghavamzadeh & Scherrer, NIPS 2013; Scherrer et al., JMLR 2015): each legal
action of a state is scored by a linear function of state-action features (on Tetris the
features of the afterstate a placement leads to), and the best score wins.

A *feature map* is any callable ``features(obs, mask) -> (phi, legal, bonus)`` on a batch of
observations: ``phi[n, A, d]`` the features of every action, ``legal[n, A]`` which actions are
legal (the given ``mask`` where the env reports one, Gymnasium's ``info["action_mask"]``), and
``bonus[n, A]`` (or None) a score added to ``w . phi`` (e.g. -1e100 for a Tetris placement that
ends the game, so that it is never chosen while another exists).

**Ties** are broken as MdpTetris does: actions are tried in index order and a later one wins
only if it scores more than ``TIE`` above the best so far; so the first of equal scores wins,
whatever the floating-point noise below ``TIE``. A state without a legal action gets action 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from nsrl.model.mdp import FiniteMDP

TIE = 1e-30
FeatureMap = Callable[..., tuple[np.ndarray, np.ndarray, "np.ndarray | None"]]


def first_best(scores: np.ndarray, legal: np.ndarray, tie: float = TIE) -> np.ndarray:
    """The action of each row: the first legal one whose score no later one beats by > ``tie``.

    Args:
        scores: ``[n, A]`` scores.
        legal: ``[n, A]`` booleans.
        tie: how much a later action must score above the best so far to win.

    Examples:
        >>> s = np.array([[1.0, 3.0, 3.0], [2.0, 1.0, 5.0]])
        >>> first_best(s, np.array([[True, True, True], [True, True, False]])).tolist()
        [1, 0]
    """
    n, A = scores.shape
    best = np.full(n, -np.inf)
    arg = np.zeros(n, dtype=np.int64)
    for a in range(A):
        better = legal[:, a] & (scores[:, a] > best + tie)
        best = np.where(better, scores[:, a], best)
        arg = np.where(better, a, arg)
    return arg


class LinearScoringPolicy:
    """The legal action of best linear score: pi_w(s) = argmax_a w^T phi(s, a) (+ a bonus).

    A stationary deterministic policy that needs no table: it acts on observations through
    its feature map, so it works where no model exists; mixtures and non-stationary
    sequences of such policies act as the schemes build them.

    Args:
        features: the feature map ``features(obs, mask) -> (phi, legal, bonus)`` (module doc).
        weights: ``w``, one weight per feature.
        names: the features' names (for saving and reading back; optional).

    Examples:
        >>> def two_actions(obs, mask=None):  # phi(s, 0) = s, phi(s, 1) = -s
        ...     phi = (obs[:, None] * np.array([1.0, -1.0]))[..., None]
        ...     return phi, np.ones((len(obs), 2), dtype=bool), None
        >>> pi = LinearScoringPolicy(two_actions, [1.0])
        >>> pi.act(np.array([2.0, -3.0])).tolist()
        [0, 1]
    """

    memory = 1
    stochastic = False
    takes_mask = True

    def __init__(self, features: FeatureMap, weights: npt.ArrayLike,
                 names: Sequence[str] | None = None) -> None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1 or not np.isfinite(w).all():
            raise ValueError(f"weights should be a 1-d array of finite numbers, got "
                             f"{np.asarray(weights)!r}.")
        if names is not None and len(names) != len(w):
            raise ValueError(f"{len(names)} feature names for {len(w)} weights; give one name "
                             f"per weight.")
        w.flags.writeable = False
        self.features, self.weights = features, w
        self.names = None if names is None else tuple(names)

    def __repr__(self) -> str:
        if self.names is None:
            return f"LinearScoringPolicy({len(self.weights)} weights)"
        return "LinearScoringPolicy(" + ", ".join(
            f"{n}={w:g}" for n, w in zip(self.names, self.weights, strict=True)) + ")"

    def scores(self, obs: npt.ArrayLike, mask: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(scores[n, A], legal[n, A])`` of a batch of observations."""
        phi, legal, bonus = self.features(np.asarray(obs), mask)
        if phi.shape[-1] != len(self.weights):
            raise ValueError(f"the feature map gives {phi.shape[-1]} features per action, the "
                             f"policy has {len(self.weights)} weights.")
        scores = np.zeros(phi.shape[:-1])
        for j, w in enumerate(self.weights):  # added in feature order, as a C loop would
            scores = scores + phi[..., j] * w
        if bonus is not None:
            scores = scores + bonus
        return scores, np.asarray(legal, dtype=bool)

    def act(self, obs: npt.ArrayLike, phase: int = 0, rng: np.random.Generator | None = None,
            mask: np.ndarray | None = None) -> np.ndarray:
        """The best legal action of each observation (ties: module doc)."""
        scores, legal = self.scores(obs, mask)
        return first_best(scores, legal)

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """A linear scoring policy acts on observations: it has no table on a model."""
        raise TypeError("a LinearScoringPolicy acts through its feature map and has no table; "
                        "estimate its value by simulation (nsrl.greedy.sampling.monte_carlo).")

    def to_dict(self) -> dict[str, Any]:
        """``{"weights": {name: value}}`` (names required), the format controllers are saved in."""
        if self.names is None:
            raise ValueError("a policy without feature names cannot be saved by name; give "
                             "names= when building it.")
        return {"weights": {n: float(w) for n, w in zip(self.names, self.weights, strict=True)}}

    @classmethod
    def from_weights(cls, features: FeatureMap, weights: Mapping[str, float],
                     names: Sequence[str]) -> LinearScoringPolicy:
        """The policy with ``weights`` given by name, in the order of ``names``.

        Raises:
            ValueError: a missing or unknown name (the message lists them).
        """
        missing = [n for n in names if n not in weights]
        unknown = sorted(set(weights) - set(names))
        if missing or unknown:
            raise ValueError(f"weights should name exactly the features {', '.join(names)}; "
                             f"missing {missing or 'none'}, unknown {unknown or 'none'}.")
        return cls(features, [float(weights[n]) for n in names], names)
