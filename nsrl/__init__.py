"""nsrl: the approximate policy iteration schemes of Scherrer (ICML 2014), exact and from samples.

Importing nsrl registers the Gymnasium ids (``gym.make("Garnet-v0")``) when the Gymnasium
side is installed.
"""

from nsrl.bounds import initial_gaps, kakade_langford_bound, run_bounds, table1_bounds
from nsrl.concentrability import Concentrability, concentrability
from nsrl.exact import (
    ExactBackend,
    backend,
    evaluate,
    evaluate_tables,
    greedy_actions,
    loss,
    occupancy,
    optimal_value,
    q_values,
)
from nsrl.garnet import garnet
from nsrl.greedy import ExactGreedy, Greedy, GreedyOperator, Nu, Occupancy, ProjectedGreedy
from nsrl.mdp import FiniteMDP
from nsrl.policies import Constant, Deterministic, Mixture, NonStationary, Stochastic, constant
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
    run,
)

__version__ = "0.1.0"

__all__ = [
    "API",
    "APIAlpha",
    "CPI",
    "CPIAlpha",
    "CPIPlus",
    "Concentrability",
    "Constant",
    "Deterministic",
    "ExactBackend",
    "ExactGreedy",
    "FiniteMDP",
    "Greedy",
    "GreedyOperator",
    "History",
    "Mixture",
    "NSPI",
    "NonStationary",
    "Nu",
    "Occupancy",
    "PSDP",
    "ProjectedGreedy",
    "Stochastic",
    "backend",
    "concentrability",
    "constant",
    "evaluate",
    "evaluate_tables",
    "garnet",
    "greedy_actions",
    "initial_gaps",
    "kakade_langford_bound",
    "loss",
    "make_scheme",
    "occupancy",
    "optimal_value",
    "q_values",
    "run",
    "run_bounds",
    "table1_bounds",
]

# Register the Gymnasium ids (entry-point strings: nothing heavy is imported here).
from nsrl.envs.registration import register as _register_envs  # noqa: E402

_register_envs()

# Stable-Baselines3 integration, imported on first use: `import nsrl` must not load torch.
_LAZY = {"from_sb3": "nsrl.sb3", "to_sb3": "nsrl.sb3", "SB3Policy": "nsrl.sb3",
         "SB3VecEnv": "nsrl.sb3_vecenv"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nsrl' has no attribute {name!r}")
