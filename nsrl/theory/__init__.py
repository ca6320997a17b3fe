"""The paper's analysis: concentrability coefficients (Definition 1) and Table 1's bounds."""

from nsrl.theory.bounds import initial_gaps, kakade_langford_bound, run_bounds, table1_bounds
from nsrl.theory.concentrability import Concentrability, concentrability

__all__ = ["Concentrability", "concentrability", "initial_gaps", "kakade_langford_bound",
           "run_bounds", "table1_bounds"]
