"""nsrl: the approximate policy iteration schemes of Scherrer (ICML 2014), exact and from samples.

The public surface, by layer:

* the model: :class:`FiniteMDP`, :func:`garnet`, the structured domains :func:`gridworld`
  and :func:`mountain_car`, :func:`with_features`;
* policies: :class:`Deterministic`, :class:`Stochastic`, :class:`Mixture`,
  :class:`NonStationary`, :class:`Constant`;
* the exact backend: :func:`evaluate`, :func:`loss`, :func:`optimal_value`,
  :func:`occupancy`, :func:`greedy_actions`, :func:`q_values`;
* greedy operators: :class:`ExactGreedy`, :class:`ProjectedGreedy` and, built from samples,
  :class:`RolloutCSC`, :class:`RolloutRegression`, :class:`LSTDQ`;
* schemes: :class:`API`, :class:`APIAlpha`, :class:`CPI`, :class:`CPIAlpha`,
  :class:`CPIPlus`, :class:`PSDP`, :class:`NSPI`, :func:`make_scheme`;
* running them: :func:`run` (one run or many, the reference loop or the batched engines),
  :class:`OperatorSpec` and :func:`make_operator` (operators by registered name);
* the analysis: :func:`concentrability`, :func:`run_bounds`, :func:`table1_bounds`;
* domains by name: :func:`make_domain` (one instance of a registered family);
* extending nsrl: :func:`register_operator`, :func:`register_scheme`, :func:`register_domain`,
  :func:`register_experiment`, and :func:`load_plugins` for modules that call them;
  :func:`registered` lists what is registered, kind by kind;
* Stable-Baselines3: :func:`from_sb3`, :func:`to_sb3`, :class:`SB3Policy`, :class:`SB3VecEnv`.

Importing nsrl registers the Gymnasium ids (``gym.make("Garnet-v0")``). The sample-based
operators (scikit-learn) and the SB3 bridge (torch) load on first use.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

from nsrl.domains import make_domain, register_domain
from nsrl.engine import OperatorSpec, run
from nsrl.exact import evaluate, greedy_actions, loss, occupancy, optimal_value, q_values
from nsrl.greedy import ExactGreedy, Greedy, GreedyOperator, Nu, Occupancy, ProjectedGreedy
from nsrl.greedy.registry import make_operator, register_operator
from nsrl.model import FiniteMDP, garnet, gridworld, mountain_car, with_features
from nsrl.plugins import load_plugins
from nsrl.policies import (
    Constant,
    Deterministic,
    LinearScoringPolicy,
    Mixture,
    NonStationary,
    Stochastic,
    constant,
)
from nsrl.registry import registered
from nsrl.schemes import (
    API,
    CPI,
    NSPI,
    PSDP,
    APIAlpha,
    CPIAlpha,
    CPIPlus,
    History,
    make_scheme,
    register_scheme,
)
from nsrl.theory import (
    Concentrability,
    concentrability,
    initial_gaps,
    kakade_langford_bound,
    run_bounds,
    table1_bounds,
)

try:  # the installed distribution's version: one source, pyproject.toml
    __version__ = _version("nsrl")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"

# Loaded on first use: `import nsrl` imports neither the scikit-learn estimators behind the
# sample-based operators nor torch (Stable-Baselines3).
if TYPE_CHECKING:  # the lazy names, for type checkers
    from nsrl.greedy import LSTDQ, RolloutCSC, RolloutRegression, SoftmaxCSC
    from nsrl.greedy.sampling.quality import MonteCarlo
    from nsrl.sb3 import SB3Policy, SB3VecEnv, from_sb3, to_sb3

_LAZY = {"RolloutCSC": "nsrl.greedy", "RolloutRegression": "nsrl.greedy", "LSTDQ": "nsrl.greedy",
         "SoftmaxCSC": "nsrl.greedy", "MonteCarlo": "nsrl.greedy.sampling.quality",
         "from_sb3": "nsrl.sb3", "to_sb3": "nsrl.sb3", "SB3Policy": "nsrl.sb3",
         "SB3VecEnv": "nsrl.sb3", "register_experiment": "nsrl.experiments.registry"}

__all__ = [
    "API",
    "APIAlpha",
    "CPI",
    "CPIAlpha",
    "CPIPlus",
    "Concentrability",
    "Constant",
    "Deterministic",
    "ExactGreedy",
    "FiniteMDP",
    "Greedy",
    "GreedyOperator",
    "History",
    "LSTDQ",
    "LinearScoringPolicy",
    "Mixture",
    "MonteCarlo",
    "NSPI",
    "NonStationary",
    "Nu",
    "Occupancy",
    "OperatorSpec",
    "PSDP",
    "ProjectedGreedy",
    "RolloutCSC",
    "RolloutRegression",
    "SB3Policy",
    "SB3VecEnv",
    "SoftmaxCSC",
    "Stochastic",
    "concentrability",
    "constant",
    "evaluate",
    "from_sb3",
    "garnet",
    "greedy_actions",
    "gridworld",
    "initial_gaps",
    "kakade_langford_bound",
    "load_plugins",
    "loss",
    "make_domain",
    "make_operator",
    "make_scheme",
    "mountain_car",
    "occupancy",
    "optimal_value",
    "q_values",
    "register_domain",
    "register_experiment",
    "register_operator",
    "register_scheme",
    "registered",
    "run",
    "run_bounds",
    "table1_bounds",
    "to_sb3",
    "with_features",
]

# Register the Gymnasium ids (entry-point strings: nothing heavy is imported here).
from nsrl.envs.registration import register as _register_envs  # noqa: E402

_register_envs()

import nsrl.plugins as _plugins  # noqa: E402

_plugins.ready = True  # from here on, a registry look-up may load the installed plugins


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nsrl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
