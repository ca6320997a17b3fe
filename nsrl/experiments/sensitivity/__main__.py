"""``python -m nsrl.experiments.sensitivity [DIR]``: the study's tables from its stored files.

The tables come from DIR's two stored files (default ``docs/sensitivity``); the pages that
quote them (docs/fidelity.md) are then rendered by ``python -m nsrl.docs``.
"""

import sys

from nsrl.experiments.sensitivity.analysis import tables

folder = sys.argv[1] if len(sys.argv) > 1 else "docs/sensitivity"
for path in tables(folder):
    print(path)
print("now run `python -m nsrl.docs` to render the pages that quote them")
