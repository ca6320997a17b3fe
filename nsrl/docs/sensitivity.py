"""Blocks that quote the ``sensitivity`` study committed in docs/sensitivity/."""

from __future__ import annotations

from pathlib import Path

from nsrl.docs.registry import block
from nsrl.docs.sources import listing, read_csv
from nsrl.experiments.sensitivity.analysis import blocks as study_blocks

CSV = "docs/sensitivity/sensitivity.csv"
OBSERVATIONS = "docs/sensitivity/observations.csv"
OBS = ("O1", "O2", "O3", "O4", "O5", "O6", "C")


def default_verdicts(root: Path) -> str:
    """'O1, O3 and O6 hold; O2, O4, O5 and C do not' for the ``default`` reading."""
    obs = read_csv(root, OBSERVATIONS)
    rows = obs[obs["variant"] == "default"].set_index("observation")["holds"]
    if rows.empty:
        raise ValueError(f"{OBSERVATIONS} has no row of the variant 'default'")
    held = [o for o in OBS if bool(rows[o])]
    failed = [o for o in OBS if not bool(rows[o])]
    text = f"{listing(held)} {'holds' if len(held) == 1 else 'hold'}" if held else "none holds"
    return text + (f"; {listing(failed)} do not" if failed else "")


@block("readme-sensitivity", sources=[CSV])
def _summary(root: Path) -> str:
    table = read_csv(root, CSV).set_index("variant")
    best = int(table["held"].max())
    at_best = list(table.index[table["held"] == best])
    never = [o for o in OBS if not (table[o] == "yes").any()]
    default = [o for o in OBS if table.loc["default", o] == "yes"]
    text = (f"{len(table)} readings; the most any reading holds is {best} of the {len(OBS)} "
            f"checks ({len(at_best)} reading(s): {listing(at_best)}); the default holds "
            f"{int(table.loc['default', 'held'])} ({listing(default) if default else 'none'})")
    return text + (f"; no reading holds {listing(never)}" if never else "") + "."


FOLDER = "docs/sensitivity"
FIDELITY = {  # block of docs/fidelity.md -> the study's files it is rendered from
    "verdicts": ("sensitivity.csv",), "means": ("sensitivity.csv",),
    "spread": ("sensitivity.csv",), "robustness": ("robustness.csv",),
    "search": ("calibration_search.csv",),
}


def _fidelity(name: str):
    def render(root: Path) -> str:
        return study_blocks(Path(root) / FOLDER)[name]
    return render


for _name, _files in FIDELITY.items():
    block(f"fidelity-{_name}", sources=[f"{FOLDER}/{f}" for f in _files])(_fidelity(_name))
