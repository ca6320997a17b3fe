"""Garnet random MDPs G(n_S, n_A, b, p) (Archibald et al. 1995), as in Scherrer (2014), suppl.

Two ways to draw the b distinct successors of each (s, a), both uniform over the b-subsets:

* ``"classic"``: the first b entries of a uniform random permutation of the states, i.e. the
  b smallest of n_S uniform sort keys. It consumes n_S^2 n_A numbers of the generator (O(S^2
  A) time), and is how every Garnet of nsrl was drawn before the scalable draw existed: the
  paper's instances, and every instance a seed gave before, stay the same. Keys are drawn in
  blocks of rows, so memory stays O(S A b).
* ``"scalable"``: b integers per pair, pairs with a repeated state drawn again (whole rows,
  which keeps the draw uniform), O(S A b) time and memory; when b^2 > n_S repeats are too
  likely and the sort keys of the classic draw are used (then n_S^2 n_A <= b^2 n_S n_A).

``draw="auto"`` (the default) takes the classic draw when n_S^2 n_A <= 10^9 (every Garnet
that fitted in memory before, with its dense P, on a 24 GiB machine) and the scalable one
above. The two draws give different instances for the same seed.
"""

from __future__ import annotations

import numbers

import numpy as np

from nsrl.model.files import _EAGER_FEATURE_BYTES, FeatureDraw
from nsrl.model.mdp import FiniteMDP
from nsrl.model.memory import check_memory
from nsrl.model.transitions import check_int

CLASSIC_MAX_KEYS = 10**9  # draw="auto" is classic up to n_S^2 n_A sort keys
# draw="classic" is refused beyond this many sort keys: at the best measured speed (7.8 s for
# 10^9 keys, docs/scale.md; 40-60 ns per key on a busy machine) that is 13 minutes or more.
CLASSIC_REFUSE_KEYS = 10**11
CLASSIC_NS_PER_KEY = 7.8
MAX_DEFAULT_FEATURES = 1000  # default p = n_S // 10, at least 1, at most this
_KEY_BLOCK = 2**22  # sort keys drawn at once by the classic draw (32 MiB)
DRAWS = ("auto", "classic", "scalable")

# Peak bytes while drawing (measured with tracemalloc): per (s, a, j) successor entry, the
# drawn and canonical successor lists and probabilities; per sort key of a classic block, the
# keys, argpartition's indices and its work copy.
_BYTES_PER_SUCCESSOR = 50
_BYTES_PER_KEY = 24


def garnet_nbytes(n_states: int, n_actions: int, n_features: int, branching: int = 10,
                  draw: str = "auto") -> int:
    """Estimated peak memory of :func:`garnet` in bytes: O(S A b), plus Phi when drawn eagerly.

    An eager Phi counts twice: drawn, then copied once by the model (measured: 110 MiB at
    Garnet(8000, 10, 2), whose Phi is 49 MiB).

    The classic draw adds one block of sort keys (at most 4M keys, 96 MiB).
    """
    if draw == "auto":
        draw = "classic" if n_states * n_states * n_actions <= CLASSIC_MAX_KEYS else "scalable"
    keys = 0
    if draw == "classic" or branching * branching > n_states:
        keys = min(n_states * n_states * n_actions, max(n_states, _KEY_BLOCK))
    phi = 8 * n_states * n_features
    return (_BYTES_PER_SUCCESSOR * n_states * n_actions * branching + _BYTES_PER_KEY * keys
            + 16 * n_states + (2 * phi if phi <= _EAGER_FEATURE_BYTES else 0))


def _check_classic_time(n_states: int, n_actions: int, branching: int, draw: str) -> None:
    """Refuse ``draw="classic"`` when its n_S^2 n_A sort keys would take a quarter of an hour."""
    keys = float(n_states) * n_states * n_actions
    if draw != "classic" or keys <= CLASSIC_REFUSE_KEYS or branching * branching > n_states:
        return
    seconds = keys * CLASSIC_NS_PER_KEY * 1e-9
    when = f"{seconds / 3600:.3g} h" if seconds >= 3600 else f"{seconds / 60:.3g} min"
    raise ValueError(f"garnet({n_states}, {n_actions}, {branching}, draw='classic') draws "
                     f"n_S^2 n_A = {keys:.3g} sort keys, O(S^2 A) time: about {when} at "
                     f"{CLASSIC_NS_PER_KEY} ns per key (the best measured speed); use "
                     f"draw='scalable' (O(S A b) time; same distribution, other instances "
                     f"for a seed) or fewer states.")


def default_features(n_states: int) -> int:
    """The default number of features p: n_S // 10 (the paper's), at least 1, at most 1000."""
    return min(max(1, n_states // 10), MAX_DEFAULT_FEATURES)


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
        return np.random.Generator(np.random.PCG64(int(seed)))
    raise TypeError(f"seed should be a non-negative int or a numpy Generator, got {seed!r}.")


def _smallest_keys(rng, n_rows: int, n_states: int, b: int) -> np.ndarray:
    """Per row, the indices of the b smallest of n_states uniform keys, by increasing key.

    Equal to ``argsort(keys, kind="stable")[:, :b]`` on the whole (n_rows, n_states) array
    (ties, of probability ~1e-8 per row, ordered by index), drawn block by block.
    """
    out = np.empty((n_rows, b), dtype=np.int64)
    rows = max(1, _KEY_BLOCK // n_states)
    for r0 in range(0, n_rows, rows):
        keys = rng.random((min(rows, n_rows - r0), n_states))
        if b < n_states:
            part = np.argpartition(keys, b - 1, axis=1)[:, :b]
        else:
            part = np.broadcast_to(np.arange(n_states), keys.shape)
        chosen = np.take_along_axis(keys, part, axis=1)
        order = np.lexsort((part, chosen), axis=1)  # by key, then by index (a stable sort)
        out[r0:r0 + len(keys)] = np.take_along_axis(part, order, axis=1)
    return out


def _distinct_integers(rng, n_rows: int, n_states: int, b: int) -> np.ndarray:
    """Per row, b distinct uniform states in random order (rows with a repeat redrawn)."""
    out = rng.integers(0, n_states, size=(n_rows, b))
    todo = np.arange(n_rows)
    while b > 1:
        block = np.sort(out[todo], axis=1)
        todo = todo[(block[:, 1:] == block[:, :-1]).any(axis=1)]
        if len(todo) == 0:
            break
        out[todo] = rng.integers(0, n_states, size=(len(todo), b))
    return out


def garnet(
    n_states: int,
    n_actions: int,
    branching: int,
    n_features: int | None = None,
    gamma: float = 0.99,
    *,
    seed: int | np.random.Generator,
    draw: str = "auto",
) -> FiniteMDP:
    """Draw a Garnet MDP G(n_states, n_actions, branching, n_features).

    For each (s, a), ``branching`` distinct next states are drawn uniformly without
    replacement and the probability mass is split by ``branching - 1`` sorted uniform cut
    points in [0, 1]. The reward depends on the state only, r(s) ~ U[0, 1]; the features
    Phi are n_states x p with entries ~ U[0, 1]. Draws happen in this order from one
    generator: successors, cut points, rewards, features; the same seed and ``draw`` give
    the same instance on any machine. Memory is O(S A b): 10^6 states fit in about 1 GiB.

    Args:
        n_states: number of states n_S >= 1.
        n_actions: number of actions n_A >= 1.
        branching: number of successors b of each (s, a), 1 <= b <= n_states.
        n_features: number of features p (default n_S // 10 as in the paper, at least 1 and
            at most 1000). A Phi over 64 MiB is drawn when first read (the same numbers;
            a PCG64 Generator passed as ``seed`` ends where an eager draw leaves it), so a
            model that never reads its features never holds them.
        gamma: discount factor in (0, 1).
        seed: the instance seed (int) or a Generator.
        draw: ``"auto"``, ``"classic"`` or ``"scalable"``: how successors are drawn (module
            docstring); ``"auto"`` keeps every instance of earlier versions, so it draws
            classically up to n_S^2 n_A = 10^9 sort keys, about 8 ns each: Garnet(10^4, 10,
            2) takes 8-30 s to build while Garnet(10^5, 10, 2), scalable, takes 0.2 s. Pass
            ``"scalable"`` when speed matters more than earlier instances. ``"classic"``
            beyond 10^11 keys (a quarter of an hour or more) is refused.

    Returns:
        The Garnet as a FiniteMDP with ``features`` set.

    Raises:
        ValueError: a size out of range, an unknown ``draw``, a size too large for the
            available memory, or a classic draw of more than 10^11 sort keys.
        TypeError: a size or seed that is not an int.

    Examples:
        >>> mdp = garnet(50, 2, 1, seed=0)
        >>> mdp.successors[0].shape, mdp.features.shape
        ((50, 2, 1), (50, 5))
    """
    n_states = check_int("n_states", n_states, 1)
    n_actions = check_int("n_actions", n_actions, 1)
    branching = check_int("branching", branching, 1, n_states)
    n_features = check_int("n_features", default_features(n_states) if n_features is None
                           else n_features, 1)
    if draw not in DRAWS:
        raise ValueError(f"draw should be one of {', '.join(map(repr, DRAWS))}, got {draw!r}.")
    _check_classic_time(n_states, n_actions, branching, draw)
    check_memory(garnet_nbytes(n_states, n_actions, n_features, branching, draw),
                 f"garnet({n_states}, {n_actions}, {branching})",
                 "use fewer states, actions or successors")
    rng = _rng(seed)
    if draw == "auto":
        draw = "classic" if n_states * n_states * n_actions <= CLASSIC_MAX_KEYS else "scalable"
    rows = n_states * n_actions
    if draw == "classic" or branching * branching > n_states:
        succ = _smallest_keys(rng, rows, n_states, branching)
    else:
        succ = _distinct_integers(rng, rows, n_states, branching)
    cuts = np.sort(rng.random((rows, branching - 1)), axis=1)
    probs = np.diff(cuts, prepend=0.0, append=1.0)
    order = np.argsort(succ, axis=1)  # canonical form: successors by increasing state
    nxt = np.take_along_axis(succ, order, axis=1).reshape(n_states, n_actions, branching)
    probs = np.take_along_axis(probs, order, axis=1).reshape(n_states, n_actions, branching)
    if np.any(probs == 0.0):  # coinciding cut points (probability ~1e-16 per pair)
        return FiniteMDP.from_successors(nxt, probs, rng.random(n_states), gamma,
                                         features=rng.random((n_states, n_features)))
    r = rng.random(n_states)
    # A large Phi is drawn when first read, from the state the generator has here; a
    # Generator passed in is moved past it (advance: one 64-bit output per double, as drawing).
    given = isinstance(seed, np.random.Generator)
    lazy = 8 * n_states * n_features > _EAGER_FEATURE_BYTES and (
        not given or isinstance(rng.bit_generator, (np.random.PCG64, np.random.PCG64DXSM)))
    if lazy:
        draw = FeatureDraw.here(rng, n_states, n_features)
        if given:
            rng.bit_generator.advance(n_states * n_features)
        return FiniteMDP._from_parts(nxt, probs, r, gamma, feature_draw=draw)
    return FiniteMDP._from_parts(nxt, probs, r, gamma, features=rng.random((n_states, n_features)))
