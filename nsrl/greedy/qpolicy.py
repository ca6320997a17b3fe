"""The policies LSTD-Q returns: greedy w.r.t. a linear Q, or w.r.t. a Q table over indices."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from nsrl.policies import one_hot

if TYPE_CHECKING:
    from nsrl.model.mdp import FiniteMDP


class LinearQ:
    """Q(., a) = phi theta_a, with a scikit-learn-like ``predict``."""

    def __init__(self, theta: np.ndarray) -> None:
        self.theta = np.asarray(theta)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """phi(x) theta_a for a batch of features."""
        return x @ self.theta


class QTablePolicy:
    """The greedy policy of a Q table over index observations, ``argmax_a q[x, a]``.

    Args:
        q: LSTD-Q's estimate, shape (n_index, n_actions), kept for inspection.
        allowed: which pairs may be chosen (default: all); LSTD-Q allows the pairs with
            data, since the Q of a pair never tried is not identified (ridge sets it to 0,
            below every tried action when rewards are positive, above when negative).
        default: the action where no action is allowed (default: 0).

    Ties go to the lowest action.

    Examples:
        >>> q = np.array([[0.0, 1.0], [2.0, 1.0]])
        >>> QTablePolicy(q).act([0, 1]).tolist()
        [1, 0]
        >>> QTablePolicy(q, allowed=[[True, False], [False, False]], default=[0, 1]).actions
        array([0, 1])
    """

    memory = 1
    stochastic = False

    def __init__(self, q: np.ndarray, allowed: np.ndarray | None = None,
                 default: np.ndarray | None = None) -> None:
        self.q = np.array(q, dtype=np.float64)
        masked = self.q if allowed is None else np.where(allowed, self.q, -np.inf)
        self.actions = np.argmax(masked, axis=1)
        if allowed is not None and default is not None:
            none = ~np.any(allowed, axis=1)
            self.actions[none] = np.asarray(default)[none]
        self.q.flags.writeable = self.actions.flags.writeable = False

    def __repr__(self) -> str:
        return f"QTablePolicy(n_index={len(self.actions)})"

    def act(self, obs: npt.ArrayLike, phase: int = 0,
            rng: np.random.Generator | None = None) -> np.ndarray:
        """Actions for a batch of index observations."""
        return self.actions[np.asarray(obs, dtype=np.int64)]

    def action_table(self, mdp: FiniteMDP) -> np.ndarray:
        """The action in every state of ``mdp`` (observations are the state indices)."""
        if len(self.actions) != mdp.n_states:
            raise ValueError(f"this policy acts on {len(self.actions)} indices, the MDP has "
                             f"{mdp.n_states} states.")
        return self.actions

    def table(self, mdp: FiniteMDP) -> np.ndarray:
        """The one-hot table pi[s, a]."""
        return one_hot(self.action_table(mdp), mdp.n_actions)
