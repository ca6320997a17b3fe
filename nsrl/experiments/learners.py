"""The registry of learners: agents judged by exact loss beside the schemes (``nsrl compare``).

A *learner* is ``learner(mdp, budget, seed) -> [(samples_used, policy), ...]``: checkpoints of
the policy it would output after ``samples_used`` environment transitions, each tabulated on
``mdp`` so that its exact loss can be computed. The Stable-Baselines3 agents ``ppo``, ``a2c``
and ``dqn`` are registered by name and load torch only when used; :func:`register_learner`
adds one of your own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nsrl.plugins import BUILT_IN, origin
from nsrl.registry import Entry, Registry


@dataclass(frozen=True)
class LearnerEntry(Entry):
    """One registered learner: ``factory`` is the learner, or ``"module:attribute"``."""

    kind = "learners"


LEARNERS: Registry[LearnerEntry] = Registry("learners",
                                            "nsrl.experiments.learners.register_learner")


def register_learner(name: str, learner: Callable[..., Any] | str, *, summary: str = "",
                     replace: bool = False) -> LearnerEntry:
    """Register ``learner(mdp, budget, seed)`` under ``name`` for ``nsrl compare --sb3``."""
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"a learner name should be lower-case without spaces, got {name!r}.")
    return LEARNERS.register(LearnerEntry(name, learner, summary=summary), replace=replace)


def learner(name: str) -> Callable[..., Any]:
    """The learner ``name`` (its module imported on first use; ValueError if unknown).

    Raises:
        ValueError: an unknown name, or a learner whose package is missing (e.g. SB3).
    """
    entry = LEARNERS.lookup(name)
    try:
        return entry.resolve()
    except ImportError as exc:
        raise ValueError(f"the learner {name!r} needs a package that did not import ({exc}); "
                         f"for the SB3 agents: pip install 'nsrl[sb3]'.") from None


with origin(BUILT_IN):
    for _algo in ("ppo", "a2c", "dqn"):
        register_learner(_algo, f"nsrl.sb3.learners:sb3_{_algo}",
                         summary=f"Stable-Baselines3 {_algo.upper()} on the MDP's vector env")
LEARNERS.seal()
