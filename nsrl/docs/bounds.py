"""Values of docs/bounds.md from benchmarks/results/garnet_constants.txt.

The table of concentrability constants of Garnet(n_S, 5, b) (mean of seeds 0, 1, 2) is the
block ``bounds-garnet-constants`` (nsrl.docs.tables); these are the readings of it that the
page's prose quotes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nsrl.docs.registry import block
from nsrl.docs.tables import table_after

CONSTANTS = "benchmarks/results/garnet_constants.txt"
ALL_POLICY = ["C(1,0)", "C(1,5)", "C(2,1,0)", "C(2,5,0)", "C(2,5,5)"]


def constants(root: Path) -> pd.DataFrame:
    """The constants by (n_S, b), as floats."""
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")]
            for ln in table_after(root, CONSTANTS, "| n_S | b | C_pi").splitlines()]
    table = pd.DataFrame(rows[2:], columns=[c.replace("\\", "") for c in rows[0]])
    table[["n_S", "b"]] = table[["n_S", "b"]].astype(int)
    return table.set_index(["n_S", "b"]).astype(float)


@block("bounds-mixing-below-ceiling", sources=[CONSTANTS])
def _below_ceiling(root: Path) -> str:
    """How many times the largest constant at b = 10 is below the ceiling n_S."""
    table = constants(root).xs(10, level="b")
    ratios = table.index / table.max(axis=1)
    return f"{ratios.min():.1f} to {ratios.max():.1f}"


@block("bounds-c-pi-star-ranges", sources=[CONSTANTS])
def _c_pi_star(root: Path) -> str:
    c = constants(root)["C_pi*"]
    mixing = c[c.index.get_level_values("b") == 10]
    other = c[c.index.get_level_values("b") <= 2]
    return (f"stays at {mixing.min():.2f} to {mixing.max():.2f} while it is {other.min():.2f} "
            f"to {other.max():.2f} for b <= 2")


@block("bounds-all-policy-spread", sources=[CONSTANTS])
def _spread(root: Path) -> str:
    """The relative spread (max - min) / max of the all-policy constants, over the rows."""
    table = constants(root)[ALL_POLICY]
    spread = (table.max(axis=1) - table.min(axis=1)) / table.max(axis=1)
    return f"{spread.min():.1%} to {spread.max():.1%}"


@block("bounds-ratio-100", sources=[CONSTANTS])
def _ratio(root: Path) -> str:
    """C(2,1,0) / C_pi* at n_S = 100 for each b."""
    table = constants(root).xs(100, level="n_S")
    ratio = table["C(2,1,0)"] / table["C_pi*"]
    return (" / ".join(f"{r:.1f}" for r in ratio) + " at n_S = 100, A = 5 for b = "
            + " / ".join(str(b) for b in ratio.index))
