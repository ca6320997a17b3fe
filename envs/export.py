"""A FiniteMDP in the layouts other tabular planners take, read from its sparse successors.

Each function reads only ``mdp.successors`` (``next_states[s, a, j]``, ``probs[s, a, j]``),
``mdp.R``, ``mdp.gamma``, ``mdp.start``, ``mdp.features`` and the sizes, never a dense
``P``: the model may not hold one.

============================  ==========================================================
planner                       call
============================  ==========================================================
Gymnasium toy_text table,     :func:`transition_table` (also ``env.unwrapped.P``):
bettermdptools                ``P[s][a] = [(prob, s', reward, terminated), ...]``
mdptoolbox (hiive)            :func:`to_mdptoolbox`: ``(P, R)``, P of shape (A, S, S) or a
                              list of A ``scipy.sparse`` (S, S) matrices, R of shape (S, A)
mushroom-rl                   :func:`to_mushroom`: ``(p, r)`` of shape (S, A, S) each
jaxdp                         :func:`to_jaxdp`: the fields of ``jaxdp.MDP``, transition
                              ``[a, s', s]`` (columns sum to 1), reward ``[a, s, s']``
JSON (an env spec, minari)    :func:`to_dict` / :func:`from_dict`: exact round trip
============================  ==========================================================

Examples:
    >>> import nsrl
    >>> mdp = nsrl.garnet(5, 2, 2, seed=0)
    >>> table = transition_table(mdp)
    >>> round(sum(p for p, _, _, _ in table[0][1]), 12)
    1.0
    >>> P, R = to_mdptoolbox(mdp)
    >>> P.shape, R.shape
    ((2, 5, 5), (5, 2))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory

_FORMAT = "nsrl.successors/1"
# transition_table's Python objects (measured with tracemalloc): per transition a tuple and
# its floats; per (s, a) a list and a dict slot.
_TABLE_TRANSITION_BYTES = 200
_TABLE_PAIR_BYTES = 200


def _entries(mdp: FiniteMDP) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(s, a, s', prob)`` of every transition with a positive probability, in (s, a) order."""
    nxt, probs = mdp.successors
    s, a, j = np.nonzero(probs > 0)
    return s, a, nxt[s, a, j], probs[s, a, j]


def transition_table(mdp: FiniteMDP) -> dict[int, dict[int, list[tuple]]]:
    """Gymnasium's toy_text table: ``P[s][a] = [(prob, next_state, reward, False), ...]``.

    The reward of a transition is R[s, a]; nothing terminates (a continuing task). The layout
    planners written for FrozenLake or Taxi read (bettermdptools' ``P`` argument).

    Python objects cost about 200 bytes and 2.4 us per transition (measured: 2.7 GB and 29 s
    for 1.2 x 10^7 transitions), so the memory is checked before anything is built.

    Raises:
        ValueError: the table cannot fit in the memory available now.
    """
    nxt, probs = mdp.successors
    n = int(np.count_nonzero(probs > 0))
    check_memory(_TABLE_TRANSITION_BYTES * n + _TABLE_PAIR_BYTES * mdp.n_states * mdp.n_actions,
                 f"the toy_text table P[s][a] of a model with {n:,} transitions (Python "
                 f"objects, about {_TABLE_TRANSITION_BYTES} bytes each)",
                 "read the sparse successor lists instead (mdp.successors, or "
                 "nsrl.envs.export.to_mdptoolbox(mdp, sparse=True))")
    R = mdp.R
    return {s: {a: [(float(p), int(t), float(R[s, a]), False)
                    for p, t in zip(probs[s, a], nxt[s, a], strict=True) if p > 0]
                for a in range(mdp.n_actions)}
            for s in range(mdp.n_states)}


def _dense(mdp: FiniteMDP, what: str) -> np.ndarray:
    """P as a dense (S, A, S) array, built from the successors (memory checked first)."""
    S, A = mdp.n_states, mdp.n_actions
    check_memory(8 * S * A * S, f"{what} of a model with {S} states and {A} actions",
                 "use the sparse layout")
    P = np.zeros((S, A, S))
    s, a, t, p = _entries(mdp)
    np.add.at(P, (s, a, t), p)
    return P


def to_mdptoolbox(mdp: FiniteMDP, sparse: bool = False,
                  ) -> tuple[np.ndarray | list[sp.csr_matrix], np.ndarray]:
    """``(P, R)`` as mdptoolbox takes them: ``mdptoolbox.mdp.PolicyIteration(P, R, gamma)``.

    Args:
        mdp: the model.
        sparse: give P as a list of A ``scipy.sparse.csr_matrix`` of shape (S, S), the form
            mdptoolbox takes for large models; else one dense array of shape (A, S, S).

    Returns:
        ``(P, R)`` with ``P[a][s, s']`` and ``R`` of shape (S, A).
    """
    R = np.array(mdp.R)
    if not sparse:
        return _dense(mdp, "the dense (A, S, S) layout").transpose(1, 0, 2).copy(), R
    import scipy.sparse as sp

    s, a, t, p = _entries(mdp)
    shape = (mdp.n_states, mdp.n_states)
    return [sp.csr_matrix((p[a == k], (s[a == k], t[a == k])), shape=shape)
            for k in range(mdp.n_actions)], R


def to_mushroom(mdp: FiniteMDP) -> tuple[np.ndarray, np.ndarray]:
    """``(p, r)`` of shape (S, A, S) each, as mushroom-rl's ``FiniteMDP(p, r, mu, gamma)`` takes.

    r[s, a, s'] = R[s, a]; pass ``mu=mdp.start`` and ``gamma=mdp.gamma`` beside them.
    """
    p = _dense(mdp, "the (S, A, S) layout")
    r = np.broadcast_to(np.asarray(mdp.R)[:, :, None], p.shape).copy()
    return p, r


def to_jaxdp(mdp: FiniteMDP) -> dict[str, np.ndarray]:
    """The fields of jaxdp's ``MDP``: ``jaxdp.MDP(**to_jaxdp(mdp))`` (numpy arrays).

    jaxdp stores the transitions column-stochastic, ``transition[a, s', s]`` = P(s' | s, a)
    (each column ``transition[a, :, s]`` sums to 1), and rewards per transition,
    ``reward[a, s, s']`` = R[s, a]; ``initial`` is the start distribution and ``terminal``
    all zeros (a continuing task). Every array is float64: its planners then compute in
    float64 once ``jax.config.update("jax_enable_x64", True)`` is set. The discount is not
    a field: pass ``gamma=mdp.gamma`` to the planner (``jaxdp.ValueIteration(gamma=...)``).

    Returns:
        ``{"transition": (A, S, S), "reward": (A, S, S), "initial": (S,), "terminal": (S,)}``.
    """
    transition = _dense(mdp, "jaxdp's (A, S, S) layout").transpose(1, 2, 0).copy()
    reward = np.broadcast_to(np.asarray(mdp.R, dtype=np.float64).T[:, :, None],
                             transition.shape).copy()
    return {"transition": transition, "reward": reward,
            "initial": np.array(mdp.start, dtype=np.float64),
            "terminal": np.zeros(mdp.n_states)}


def to_dict(mdp: FiniteMDP) -> dict:
    """A JSON-able description of ``mdp`` (lists), read back exactly by :func:`from_dict`.

    Sparse (successor lists), so its size grows with S A b, not S^2 A.
    """
    nxt, probs = mdp.successors
    return {"format": _FORMAT, "gamma": mdp.gamma, "next_states": nxt.tolist(),
            "probs": probs.tolist(), "R": np.asarray(mdp.R).tolist(),
            "start": np.asarray(mdp.start).tolist(),
            "features": None if mdp.features is None else mdp.features.tolist()}


def from_dict(data: dict) -> FiniteMDP:
    """The FiniteMDP that :func:`to_dict` described, built from its successor lists.

    Checked as :meth:`nsrl.FiniteMDP.from_successors` checks them, in O(S A b) memory (never a
    dense P): a successor index outside the states, a negative probability or a row not
    summing to 1 is refused in one line naming its (state, action, index); the memory of the
    copies is estimated before they are made.

    Raises:
        ValueError: ``data`` is not such a description, or describes no valid model.
        TypeError: entries of the wrong type (e.g. fractional next states).
    """
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        keys = (f"keys {sorted(map(str, data))[:6]}" if isinstance(data, dict)
                else f"a {type(data).__name__}")
        raise ValueError(f"mdp as a dict should be what nsrl.envs.export.to_dict returns "
                         f"(format {_FORMAT!r}), got {keys}; pass a FiniteMDP or the path of "
                         f"a saved one.")
    missing = [k for k in ("next_states", "probs", "R", "gamma") if k not in data]
    if missing:
        raise ValueError(f"mdp as a dict lacks {missing}: to_dict writes next_states, probs, R, "
                         f"gamma, start and features; write it with nsrl.envs.export.to_dict.")
    try:
        return FiniteMDP.from_successors(data["next_states"], data["probs"], data["R"],
                                         data["gamma"], features=data.get("features"),
                                         start=data.get("start"))
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"mdp (a dict of nsrl.envs.export.to_dict's format): {exc}") from None
