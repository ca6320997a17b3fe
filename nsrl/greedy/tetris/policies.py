"""Tetris policies: linear scoring policies on placement features, and their engine programs.

A Tetris policy of nsrl is a :class:`nsrl.LinearScoringPolicy` whose feature map is
``Tetris-v0``'s :class:`nsrl.envs.tetris.PlacementFeatures`: it acts on the env's observations
(the slow, step-by-step path) and, through :func:`to_program`, in the compiled engine (the
fast path), choosing the same placements. The schemes build mixtures (API(alpha), CPI),
finite sequences (PSDP's target) and loops (PSDP's output, NSPI(m)) of such policies, and
start from nsrl's pi_0, :class:`nsrl.policies.Constant` (placement 0: the first orientation
at the left wall); :func:`to_program` turns any of them into one program.

Examples:
    >>> pi = tetris_policy("dellacherie", [-1, 1, -1, -1, -4, -1], width=10, height=10)
    >>> to_program(pi, 10).names[:2]
    ('landing_height', 'eroded_piece_cells')
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nsrl.envs.tetris import PlacementFeatures
from nsrl.policies import AnyPolicy, Constant, LinearScoringPolicy, Mixture, NonStationary
from nsrl.tetris.controllers import Controller
from nsrl.tetris.features import feature_names
from nsrl.tetris.programs import Program

__all__ = ["TetrisPolicy", "controller_of", "tetris_policy", "to_program"]

TetrisPolicy = LinearScoringPolicy  # on Tetris-v0's PlacementFeatures (module doc)
_MAX_PHASES = 10**6  # a longer sequence is refused (its program lists every phase)


def tetris_policy(features: str, weights: npt.ArrayLike, *, width: int, height: int,
                  overflow: str = "end") -> LinearScoringPolicy:
    """pi_w(s) = argmax over the legal placements a of w . phi(s, a), on Tetris features.

    Args:
        features: a feature set of :mod:`nsrl.tetris.features` (e.g. "dellacherie-thiery").
        weights: one weight per feature, in the set's order.
        width: the board's columns.
        height: the board's rows.
        overflow: the overflow rule the afterstates are read with.
    """
    names = feature_names(features, width)
    return LinearScoringPolicy(PlacementFeatures(features, width, height, overflow), weights,
                               names)


def controller_of(policy: LinearScoringPolicy) -> Controller:
    """The :class:`nsrl.tetris.Controller` of a Tetris policy (what its JSON file holds)."""
    features = _placement_features(policy)
    return Controller(features.features, dict(zip(features.names, policy.weights.tolist(),
                                                  strict=True)))


def _placement_features(policy: object) -> PlacementFeatures:
    features = getattr(policy, "features", None)
    if not isinstance(policy, LinearScoringPolicy) or not isinstance(features,
                                                                      PlacementFeatures):
        raise TypeError(f"a Tetris program is built from LinearScoringPolicy on Tetris "
                        f"PlacementFeatures (nsrl.greedy.tetris.tetris_policy) and Constant, "
                        f"got {type(policy).__name__}.")
    return features


def _stationary(policy: AnyPolicy) -> list[tuple[float, object]]:
    """The (weight, component) pairs of a stationary policy."""
    if isinstance(policy, Mixture):
        return list(policy.components)
    return [(1.0, policy)]


def to_program(policy: AnyPolicy, width: int, features: str = "dellacherie-thiery") -> Program:
    """The engine program of ``policy`` (module doc).

    Args:
        policy: a Tetris policy, :class:`Constant`, a :class:`Mixture` of them, or a
            :class:`NonStationary` sequence or loop of those.
        width: the board's width.
        features: the program's feature set when no component is linear (pi_0 alone).

    Raises:
        TypeError: a policy the engine cannot play (a table over a model's states, say).
    """
    if isinstance(policy, NonStationary):
        if len(policy) > _MAX_PHASES:
            raise ValueError(f"a sequence of {len(policy):,} phases is too long for a program "
                             f"(at most {_MAX_PHASES:,}).")
        segments = [(pi, count) for pi, count in policy.segments]
        loop = policy.loop
    else:
        segments, loop = [(policy, 1)], True
    groups = [_stationary(pi) for pi, _ in segments]
    linear = [c for g in groups for _, c in g if not isinstance(c, Constant)]
    names = _union([_placement_features(c).names for c in linear]) or feature_names(
        features, width)
    index = {n: k for k, n in enumerate(names)}
    components: list[np.ndarray | int] = []
    seen: dict[int, int] = {}
    members: list[list[tuple[float, int]]] = []
    for group in groups:
        members.append([])
        for w, c in group:
            if id(c) not in seen:
                seen[id(c)] = len(components)
                components.append(_component(c, index, width))
            members[-1].append((float(w), seen[id(c)]))
    order = [g for g, (_, count) in enumerate(segments) for _ in range(count)]
    return Program.build("+".join(names), width, components, members, order, loop)


def _component(pi: object, index: dict[str, int], width: int) -> np.ndarray | int:
    if isinstance(pi, Constant):
        if pi.action >= 4 * width:
            raise ValueError(f"Constant({pi.action}) is not a placement of a {width}-column "
                             f"board (actions 0..{4 * width - 1}).")
        return pi.action
    features = _placement_features(pi)
    if features.width != width:
        raise ValueError(f"a policy of a {features.width}-column board on a {width}-column one")
    assert isinstance(pi, LinearScoringPolicy)
    w = np.zeros(len(index))
    for name, value in zip(features.names, pi.weights, strict=True):
        w[index[name]] = value
    return w


def _union(lists: Sequence[Sequence[str]]) -> tuple[str, ...]:
    out: list[str] = []
    for names in lists:
        out.extend(n for n in names if n not in out)
    return tuple(out)
