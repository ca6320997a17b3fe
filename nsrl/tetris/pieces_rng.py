"""The piece sequences: one stream per (seed, game), the same in every process and batch.

Each stream is a xoshiro256** generator (Blackman and Vigna) whose four words are the first
outputs of splitmix64 started from a mix of ``seed`` and ``game``: the standard way to seed it.
Pieces are drawn independently and uniformly from the 7 with Lemire's unbiased rejection on
32-bit draws. Game ``i`` of a batch seeded ``seed`` reads stream ``(seed, i)``, so its pieces
do not depend on the other games, on the batch size or on the number of processes; the env's
``reset(seed=s)`` plays stream ``(s, 0)``, then ``(s, 1)``... on the resets that follow.

Examples:
    >>> pieces(seed=0, game=0, n=12).tolist() == pieces(0, 0, 12).tolist()
    True
    >>> sorted(set(pieces(0, 1, 1000).tolist()))
    [0, 1, 2, 3, 4, 5, 6]
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["next_piece_py", "pieces", "seed_stream"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_MASK32 = np.uint64(0xFFFFFFFF)
# Lemire's threshold for 7 outcomes on 32 bits: 2**32 mod 7 draws are rejected.
_REJECT_BELOW = np.uint64((1 << 32) % 7)


@numba.njit(inline="always", cache=True)
def _mix(z: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    """splitmix64's output function."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def seed_stream(seed: int, game: int, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """Write into ``out`` (4 uint64) the starting state of stream ``(seed, game)``."""
    z = _mix(np.uint64(seed) + _GOLDEN) ^ np.uint64(game)
    z = _mix(z)  # a game index close to another gives an unrelated state
    for k in range(4):
        z += _GOLDEN
        out[k] = _mix(z)


@numba.njit(inline="always", cache=True)
def _rotl(x: np.uint64, k: int) -> np.uint64:  # pragma: no cover - compiled
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@numba.njit(inline="always", cache=True)
def next_word(s: np.ndarray) -> np.uint64:  # pragma: no cover - compiled
    """xoshiro256**: the next 64-bit output of state ``s`` (updated in place)."""
    result = _rotl(s[1] * np.uint64(5), 7) * np.uint64(9)
    t = s[1] << np.uint64(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@numba.njit(inline="always", cache=True)
def next_piece(s: np.ndarray) -> int:  # pragma: no cover - compiled
    """A piece index in 0..6, uniform (Lemire's multiply and reject on the top 32 bits)."""
    while True:
        m = (next_word(s) >> np.uint64(32)) * np.uint64(7)
        if (m & _MASK32) >= _REJECT_BELOW:
            return numba.int64(m >> np.uint64(32))


@numba.njit(cache=True)
def _pieces(seed: int, game: int, n: int) -> np.ndarray:  # pragma: no cover - compiled
    s = np.empty(4, dtype=np.uint64)
    seed_stream(seed, game, s)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = next_piece(s)
    return out


def pieces(seed: int, game: int, n: int) -> np.ndarray:
    """The first ``n`` pieces of stream ``(seed, game)`` (int64 indices into PIECE_NAMES).

    Args:
        seed: a seed, an int in [0, 2**63).
        game: the game's index, an int >= 0.
        n: how many pieces.
    """
    return _pieces(int(seed), int(game), int(n))


def next_piece_py(state: np.ndarray) -> int:
    """The next piece of a stream state (4 uint64, updated in place), from Python."""
    return int(_next_piece(state))


@numba.njit(cache=True)
def _next_piece(state: np.ndarray) -> int:  # pragma: no cover - compiled
    return next_piece(state)
