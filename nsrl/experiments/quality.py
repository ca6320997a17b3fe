"""What a sweep's shards measure: the exact loss, or a Monte-Carlo estimate of a score.

On a domain with a model every output policy has an exact loss mu (v* - v_pi), lower is better,
stored in the shards' ``loss`` column. On a domain without one (``register_domain(name, None,
env=...)``: a simulator, Tetris) it has an estimate: the domain's ``estimate`` (default
:class:`nsrl.greedy.sampling.quality.MonteCarlo`, the mean return) plays ``games`` games after
every iteration and ``final_games`` after the last, and the shards hold ``score`` (the mean),
``score_ci`` (the half-width of its 95% interval) and ``games``. The sweep's ``[estimate]``
table sets them::

    [estimate]
    games = 20          # games per iteration (default 20, at least 2: an interval)
    final_games = 100   # games at the last iteration (default 100, at least games)
    seed = 7            # the games' seed (default: the sweep's seed)

The games are common random numbers: on one shard every scheme and every run plays the same
games (episode i of shard s reset with seed g_s + i, g_s derived from ``seed`` and the shard's
key, :func:`nsrl.experiments.seeds.games_seed`), so that paired comparisons of schemes compare
policies, not luck; the final iteration's games are 0 .. final_games - 1, of which the first
``games`` are every other iteration's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from nsrl.params import InvalidParameterError, check_params, param

ESTIMATE_PARAMS = {
    "games": param(int, 20, ge=2),
    "final_games": param(int, 100, ge=2),
    "seed": param(int | None, None, ge=0),
}


@dataclass(frozen=True)
class Estimate:
    """A model-less sweep's ``[estimate]`` table (module doc), checked.

    Attributes:
        games: games per iteration.
        final_games: games at the last iteration.
        seed: the games' seed (None: the sweep's).
    """

    games: int = 20
    final_games: int = 100
    seed: int | None = None

    @classmethod
    def of(cls, value: object) -> Estimate:
        """``value`` (a table, an Estimate or None for the defaults) as a checked Estimate.

        Raises:
            ValueError: an unknown key, a bad value, or ``final_games < games``.
        """
        if isinstance(value, Estimate):
            value = value.to_dict()
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise InvalidParameterError(f"sweep field 'estimate' should be a table {{games = "
                                        f"..., final_games = ..., seed = ...}}, got {value!r}.")
        checked = check_params(dict(ESTIMATE_PARAMS), dict(value), "sweep field 'estimate'")
        out = cls(**checked)
        if out.final_games < out.games:
            raise ValueError(f"sweep field 'estimate': final_games = {out.final_games} is fewer "
                             f"than games = {out.games} (the final point ranks the schemes); "
                             f"set final_games >= {out.games}.")
        return out

    def to_dict(self) -> dict:
        """The table (a seed of None left out), as a manifest and the fingerprint hold it."""
        data: dict[str, Any] = {"games": self.games, "final_games": self.final_games}
        if self.seed is not None:
            data["seed"] = self.seed
        return data


@dataclass(frozen=True)
class Quality:
    """What the shards hold and how to read it.

    Attributes:
        column: the shards' column, ``"loss"`` or ``"score"``.
        name: what it counts (``"loss"``; a score's name, e.g. ``"return"`` or ``"lines"``).
        direction: ``"lower"`` or ``"higher"`` is better.
        estimate: the games of a Monte-Carlo score (None for the exact loss).
    """

    column: str = "loss"
    name: str = "loss"
    direction: str = "lower"
    estimate: Estimate | None = None

    @property
    def exact(self) -> bool:
        """Whether it is the exact loss."""
        return self.estimate is None

    @property
    def higher(self) -> bool:
        """Whether a higher value is better."""
        return self.direction == "higher"

    @property
    def title(self) -> str:
        """``"loss"``, or ``"mean lines"``: what a table's mean is the mean of."""
        return "loss" if self.exact else f"mean {self.name}"

    @property
    def better(self) -> str:
        """``"lower is better"`` or ``"higher is better"``."""
        return f"{self.direction} is better"

    def label(self) -> str:
        """A figure's axis label: ``"loss"``, or ``"mean lines, higher is better"``."""
        return "loss" if self.exact else f"{self.title}, {self.better}"

    def describe(self, domain: str) -> str:
        """One sentence for summary.md: which quality the statistics are of."""
        if self.estimate is None:
            return "the exact loss mu (v* - v_pi) of each output policy (lower is better)"
        e = self.estimate
        return (f"a Monte-Carlo estimate, not an exact loss: the {self.name} of each output "
                f"policy ({self.better}), the mean of {e.games} games of {domain} per iteration "
                f"and {e.final_games} at the last; every scheme and run of a shard plays the "
                f"same games (common random numbers)")

    def to_dict(self) -> dict:
        """The record a model-less manifest and its shards carry."""
        data: dict[str, Any] = {"column": self.column, "name": self.name,
                                "direction": self.direction}
        if self.estimate is not None:
            data["estimate"] = {"kind": "monte-carlo", **self.estimate.to_dict()}
        return data


LOSS = Quality()


def quality_of(sweep: Any) -> Quality:
    """The quality ``sweep``'s shards hold (:class:`Quality`)."""
    if sweep.estimate is None:
        return LOSS
    name, direction = sweep.domain_entry.quality
    return Quality("score", name, direction, sweep.estimate)


class Evaluation:
    """The estimates of one shard's runs: ``every`` after each iteration, ``final`` at the last.

    Args:
        every: the estimate of an iteration before the last (``estimate(policy) -> Score``).
        final: the estimate of the last iteration.
        n_iterations: K.
    """

    def __init__(self, every: Callable, final: Callable, n_iterations: int) -> None:
        self.every, self.final, self.n_iterations = every, final, n_iterations

    def for_run(self) -> Callable:
        """The ``estimate=`` of one run: called once per iteration, in order, K times."""
        calls = iter(range(1, self.n_iterations + 1))

        def estimate(policy: Any) -> Any:
            k = next(calls)
            return (self.final if k == self.n_iterations else self.every)(policy)

        return estimate
