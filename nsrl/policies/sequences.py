"""Non-stationary policies: a finite sequence sigma (PSDP) or the periodic loop (sigma)^inf (NSPI).

``sigma_k = pi_k pi_{k-1} ... pi_1`` acts first with ``pi_k``: ``NonStationary([pi_k, ...,
pi_1])``. Runs of one repeated policy are stored once (:attr:`NonStationary.segments`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from nsrl.policies.stationary import Policy, act_masked, stationary_table

if TYPE_CHECKING:
    from nsrl.model.mdp import FiniteMDP

Segments = tuple[tuple[Policy, int], ...]  # (policy, repeats) pairs in acting order


class NonStationary:
    """A non-stationary policy: a finite sequence sigma, or the periodic loop (sigma)^inf.

    ``NonStationary([pi_k, ..., pi_1])`` acts with ``pi_k`` at phase 0, ``pi_{k-1}`` at
    phase 1, and so on. With ``loop=False`` it is the finite-horizon policy sigma_k of PSDP
    (it stops after its last policy); with ``loop=True`` it is (sigma)^inf, which starts
    again at phase 0 after the last policy (PSDP's output, NSPI(m)).

    Examples:
        >>> from nsrl.policies import Deterministic
        >>> a, b = Deterministic([0, 0]), Deterministic([1, 1])
        >>> loop = NonStationary([a, b], loop=True)
        >>> loop.act(np.array([0, 1]), phase=3).tolist()
        [1, 1]
    """

    # Listing a sequence policy by policy (``policies``) is refused beyond this length: a
    # loop such as NSPI(10**9)'s start, m copies of pi_0, is kept as one segment instead.
    MAX_LISTED = 10**6

    def __init__(self, policies: Sequence[Policy], loop: bool,
                 parent: NonStationary | None = None) -> None:
        self._init(tuple((pi, 1) for pi in policies), loop, parent)

    def _init(self, segments: Segments, loop: bool, parent: NonStationary | None) -> None:
        self.segments = segments  # ((policy, repeats), ...) in acting order
        self.loop = bool(loop)
        self._ends = np.cumsum([count for _, count in segments], dtype=np.int64)
        if self.loop and not segments:
            raise ValueError("a periodic loop needs at least one policy.")
        # For a finite sequence built by prepend(): the sequence without its first policy,
        # which lets the exact backend evaluate sigma_{k+1} = T_{pi_{k+1}} v_{sigma_k} in O(1).
        self.parent = parent

    @classmethod
    def repeated(cls, pi: Policy, count: int, loop: bool = True) -> NonStationary:
        """``pi`` acting ``count`` times in a row (NSPI(m)'s start: m copies of pi_0), in O(1).

        Examples:
            >>> from nsrl.policies import Deterministic
            >>> start = NonStationary.repeated(Deterministic([0, 0]), 10**9)
            >>> len(start), start.memory
            (1000000000, 1000000000)
        """
        if isinstance(count, bool) or int(count) != count or count < 1:
            raise ValueError(f"count should be a positive int, got {count!r}.")
        out = cls.__new__(cls)
        out._init(((pi, int(count)),), loop, None)
        return out

    @classmethod
    def empty(cls) -> NonStationary:
        """The empty policy of PSDP, whose value is the terminal value (r for state rewards)."""
        return cls((), loop=False)

    def prepend(self, pi: Policy) -> NonStationary:
        """The finite sequence ``pi sigma`` (PSDP: sigma_{k+1} = pi_{k+1} sigma_k)."""
        if self.loop:
            raise ValueError("prepend() builds finite sequences; call it on a loop=False policy.")
        out = NonStationary.__new__(NonStationary)
        out._init(((pi, 1),) + self.segments, False, self)
        return out

    def shifted(self, pi: Policy) -> NonStationary:
        """The loop ``pi`` then this loop without its last policy (NSPI's update), in O(1)."""
        if not self.loop:
            raise ValueError("shifted() updates loops; call it on a loop=True policy.")
        *head, (last, count) = self.segments
        tail = ((last, count - 1),) if count > 1 else ()
        out = NonStationary.__new__(NonStationary)
        out._init(((pi, 1),) + tuple(head) + tail, True, None)
        return out

    def looped(self) -> NonStationary:
        """The periodic policy (sigma)^inf that loops over this sequence."""
        out = NonStationary.__new__(NonStationary)
        out._init(self.segments, True, None)
        return out

    @property
    def policies(self) -> tuple[Policy, ...]:
        """The policies in acting order, one entry per phase (see :attr:`segments`)."""
        if len(self) > self.MAX_LISTED:
            raise ValueError(
                f"this sequence has {len(self):,} phases, too many to list policy by policy; "
                f"use .segments ((policy, repeats) pairs) or .at(phase)."
            )
        return tuple(pi for pi, count in self.segments for _ in range(count))

    def __len__(self) -> int:
        return int(self._ends[-1]) if self.segments else 0

    def __repr__(self) -> str:
        kind = "loop" if self.loop else "finite"
        return f"NonStationary({kind}, length={len(self)})"

    @property
    def memory(self) -> int:
        """Number of stored deterministic policies (repeats counted, as the paper counts)."""
        return sum(pi.memory * count for pi, count in self.segments)

    @property
    def horizon(self) -> int | None:
        """Number of steps a finite sequence acts for; None for a loop."""
        return None if self.loop else len(self)

    def at(self, phase: int) -> Policy:
        """The stationary policy used at time ``phase``."""
        if self.loop:
            phase = phase % len(self)
        elif not 0 <= phase < len(self):
            raise ValueError(
                f"this finite sequence acts for {len(self)} steps; phase {phase} is "
                f"past its end (use .looped() to repeat it)."
            )
        return self.segments[int(np.searchsorted(self._ends, phase, side="right"))][0]

    takes_mask = True  # forwards the legal actions to the policies that take them

    def act(self, obs: npt.ArrayLike, phase: int | npt.ArrayLike = 0,
            rng: np.random.Generator | None = None,
            mask: np.ndarray | None = None) -> np.ndarray:
        """Actions at ``phase`` (an int, or one phase per observation); ``mask``: legal ones."""
        obs = np.asarray(obs)
        phases = np.asarray(phase)
        if phases.ndim == 0:
            return act_masked(self.at(int(phases)), obs, rng, mask)
        actions = np.zeros(len(obs), dtype=np.int64)
        for p in np.unique(phases):
            rows = phases == p
            actions[rows] = act_masked(self.at(int(p)), obs[rows], rng,
                                       None if mask is None else np.asarray(mask)[rows])
        return actions

    def tables(self, mdp: FiniteMDP) -> np.ndarray:
        """Tables pi[i, s, a] of the policies in acting order."""
        if not self.segments:
            return np.zeros((0, mdp.n_states, mdp.n_actions))
        return np.stack([stationary_table(pi, mdp) for pi in self.policies])


AnyPolicy = Policy | NonStationary  # what the exact backend evaluates
