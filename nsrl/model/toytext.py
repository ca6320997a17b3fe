"""Gymnasium toy_text models (``env.unwrapped.P`` dicts) as the arrays of a FiniteMDP.

FrozenLake, Taxi and CliffWalking store their model as ``P[s][a] = [(p, s', r, terminated),
...]``. A terminated transition ends the episode in s'; as a FiniteMDP (a continuing,
discounted model), s' becomes absorbing with zero reward, so that its value is 0 and
v*(s) = max_a sum p (r + gamma (1 - terminated) v*(s')) on the other states, as in the
episodic model. The start distribution is ``initial_state_distrib``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from nsrl.model.checks import check_distribution


def _dict_model(env: object) -> dict:
    P = getattr(getattr(env, "unwrapped", env), "P", None)
    if not isinstance(P, dict) or not P or not all(isinstance(v, dict) for v in P.values()):
        raise TypeError(
            f"expected a Gymnasium toy_text env whose env.unwrapped.P is a dict model "
            f"P[s][a] = [(p, s', r, terminated), ...] (FrozenLake, Taxi, CliffWalking), got "
            f"{type(env).__name__}."
        )
    return P


def dict_model_arrays(P: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Arrays ``(P[s, a, s'], R[s, a], ends[s], goes_on[s, s'])`` of a toy_text dict model.

    ``ends`` marks the states that some terminated transition leads to (not yet made
    absorbing here); ``goes_on[s, s']`` says that a non-terminated transition s -> s' has
    positive probability.

    Raises:
        ValueError: when the states or actions are not 0..n-1.
    """
    n_states = len(P)
    n_actions = len(P[0]) if 0 in P else 0
    if sorted(P) != list(range(n_states)) or any(sorted(P[s]) != list(range(n_actions)) for s in P):
        raise ValueError(
            "the dict model should have states 0..n_states-1, each with actions "
            "0..n_actions-1; got keys that are not contiguous integers."
        )
    T = np.zeros((n_states, n_actions, n_states))
    R = np.zeros((n_states, n_actions))
    ends = np.zeros(n_states, dtype=bool)
    goes_on = np.zeros((n_states, n_states), dtype=bool)
    for s in range(n_states):
        for a in range(n_actions):
            for p, s1, r, terminated in P[s][a]:
                T[s, a, s1] += p  # toy_text lists the same s' once per way of reaching it
                R[s, a] += p * r
                if p > 0 and terminated:
                    ends[s1] = True
                elif p > 0:
                    goes_on[s, s1] = True
    return T, R, ends, goes_on


def _check_terminals(ends: np.ndarray, goes_on: np.ndarray, start: np.ndarray) -> None:
    """Raise if a reachable live state steps into a terminal state without terminating.

    Only states reachable from the start distribution matter: Taxi, for one, has unreachable
    states (passenger at the destination, taxi elsewhere) that move into terminal ones.
    """
    step = goes_on & ~ends[:, None]  # moves out of terminal states are dropped anyway
    reach = start > 0
    while True:
        more = reach | step[reach & ~ends].any(axis=0)
        if np.array_equal(more, reach):
            break
        reach = more
    clash = np.flatnonzero(step[reach & ~ends].any(axis=0) & ends)
    if clash.size:
        raise ValueError(
            f"state {int(clash[0])} is entered both by terminated and by non-terminated "
            "transitions; a state-based absorbing model cannot represent that."
        )


def toy_text_arrays(env: object, start: npt.ArrayLike | None = None,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(P, R, start)`` of a toy_text env (FrozenLake, Taxi, CliffWalking) as a continuing model.

    :meth:`nsrl.FiniteMDP.from_gymnasium` builds the FiniteMDP from them.

    Args:
        env: the env (wrapped or not), whose ``env.unwrapped.P`` is the dict model.
        start: start distribution; default ``env.unwrapped.initial_state_distrib``.

    Returns:
        Transition-based rewards R[s, a] = E[r | s, a], the terminal states absorbing with
        reward 0, and the env's start distribution.

    Examples:
        >>> import gymnasium as gym
        >>> P, R, start = toy_text_arrays(gym.make("FrozenLake-v1"))
        >>> P.shape, float(start[0])
        ((16, 4, 16), 1.0)
    """
    T, R, terminal, goes_on = dict_model_arrays(_dict_model(env))
    if start is None:
        base = getattr(env, "unwrapped", env)
        start = getattr(base, "initial_state_distrib", None)
        if start is None:
            raise ValueError(
                f"{type(base).__name__} has no initial_state_distrib; pass start=..."
            )
    start = check_distribution("start", start, T.shape[0])
    _check_terminals(terminal, goes_on, start)
    T[terminal] = 0.0
    T[terminal, :, terminal] = 1.0
    R[terminal] = 0.0
    return T, R, start
